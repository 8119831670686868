package bulwarkhttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// writer records the status a handler answers with. It is embedded by value
// in one of eight types below, chosen by what the server's ResponseWriter
// offers (http.Flusher, http.Hijacker, io.ReaderFrom), so that a type
// assertion on the wrapped writer succeeds exactly when it would on the
// original, and wrapping costs one allocation.
type writer struct {
	http.ResponseWriter
	status int  // the final status; 0 until one is sent
	hijack bool // the connection was taken over
}

// WriteHeader records the first final status: 1xx informational responses
// (other than 101, which ends HTTP on the connection) may precede it.
func (w *writer) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *writer) Write(p []byte) (int, error) {
	w.implicitOK()
	return w.ResponseWriter.Write(p)
}

// Unwrap returns the original writer, for http.ResponseController.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// implicitOK records the 200 the server sends when a body or a flush comes
// before any WriteHeader.
func (w *writer) implicitOK() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
}

func (w *writer) flush() {
	w.implicitOK()
	w.ResponseWriter.(http.Flusher).Flush()
}

func (w *writer) hijackConn() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := w.ResponseWriter.(http.Hijacker).Hijack()
	if err == nil {
		w.hijack = true
	}
	return c, rw, err
}

func (w *writer) readFrom(r io.Reader) (int64, error) {
	w.implicitOK()
	return w.ResponseWriter.(io.ReaderFrom).ReadFrom(r)
}

// The eight combinations of Flusher (F), Hijacker (H) and ReaderFrom (R).
type (
	wPlain struct{ writer }
	wF     struct{ writer }
	wH     struct{ writer }
	wR     struct{ writer }
	wFH    struct{ writer }
	wFR    struct{ writer }
	wHR    struct{ writer }
	wFHR   struct{ writer }
)

func (w *wF) Flush()   { w.flush() }
func (w *wFH) Flush()  { w.flush() }
func (w *wFR) Flush()  { w.flush() }
func (w *wFHR) Flush() { w.flush() }

func (w *wH) Hijack() (net.Conn, *bufio.ReadWriter, error)   { return w.hijackConn() }
func (w *wFH) Hijack() (net.Conn, *bufio.ReadWriter, error)  { return w.hijackConn() }
func (w *wHR) Hijack() (net.Conn, *bufio.ReadWriter, error)  { return w.hijackConn() }
func (w *wFHR) Hijack() (net.Conn, *bufio.ReadWriter, error) { return w.hijackConn() }

func (w *wR) ReadFrom(r io.Reader) (int64, error)   { return w.readFrom(r) }
func (w *wFR) ReadFrom(r io.Reader) (int64, error)  { return w.readFrom(r) }
func (w *wHR) ReadFrom(r io.Reader) (int64, error)  { return w.readFrom(r) }
func (w *wFHR) ReadFrom(r io.Reader) (int64, error) { return w.readFrom(r) }

// wrap returns rw wrapped, with the same optional interfaces, and the
// recorder inside it.
func wrap(rw http.ResponseWriter) (http.ResponseWriter, *writer) {
	_, f := rw.(http.Flusher)
	_, h := rw.(http.Hijacker)
	_, r := rw.(io.ReaderFrom)
	base := writer{ResponseWriter: rw}
	switch {
	case f && h && r:
		v := &wFHR{base}
		return v, &v.writer
	case f && h:
		v := &wFH{base}
		return v, &v.writer
	case f && r:
		v := &wFR{base}
		return v, &v.writer
	case h && r:
		v := &wHR{base}
		return v, &v.writer
	case f:
		v := &wF{base}
		return v, &v.writer
	case h:
		v := &wH{base}
		return v, &v.writer
	case r:
		v := &wR{base}
		return v, &v.writer
	}
	v := &wPlain{base}
	return v, &v.writer
}
