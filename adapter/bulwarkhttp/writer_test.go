package bulwarkhttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullWriter offers every optional interface, recording what was used.
type fullWriter struct {
	*httptest.ResponseRecorder
	hijacked, readFrom bool
}

func (w *fullWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return nil, nil, nil
}

func (w *fullWriter) ReadFrom(r io.Reader) (int64, error) {
	w.readFrom = true
	return io.Copy(w.ResponseRecorder, r)
}

func caps(w http.ResponseWriter) [3]bool {
	_, f := w.(http.Flusher)
	_, h := w.(http.Hijacker)
	_, r := w.(io.ReaderFrom)
	return [3]bool{f, h, r}
}

// Servers' writers differ (HTTP/1 has all three, HTTP/2 only Flusher,
// other servers anything): every combination is kept exactly.
func TestWrapKeepsEveryCombinationOfOptionalInterfaces(t *testing.T) {
	type (
		rw = http.ResponseWriter
		f  = http.Flusher
		h  = http.Hijacker
		r  = io.ReaderFrom
	)
	for i := range 8 {
		full := &fullWriter{ResponseRecorder: httptest.NewRecorder()}
		var w http.ResponseWriter
		switch i {
		case 0:
			w = struct{ rw }{full}
		case 1:
			w = struct {
				rw
				f
			}{full, full}
		case 2:
			w = struct {
				rw
				h
			}{full, full}
		case 3:
			w = struct {
				rw
				r
			}{full, full}
		case 4:
			w = struct {
				rw
				f
				h
			}{full, full, full}
		case 5:
			w = struct {
				rw
				f
				r
			}{full, full, full}
		case 6:
			w = struct {
				rw
				h
				r
			}{full, full, full}
		case 7:
			w = struct {
				rw
				f
				h
				r
			}{full, full, full, full}
		}
		wrapped, rec := wrap(w)
		want := caps(w)
		require.Equal(t, want, caps(wrapped), "combination %d", i)
		assert.Equal(t, w, wrapped.(interface{ Unwrap() http.ResponseWriter }).Unwrap())
		if want[0] {
			wrapped.(http.Flusher).Flush()
			assert.True(t, full.Flushed)
			assert.Equal(t, http.StatusOK, rec.status, "a flush sends 200")
		}
		if want[1] {
			_, _, err := wrapped.(http.Hijacker).Hijack()
			require.NoError(t, err)
			assert.True(t, full.hijacked)
			assert.True(t, rec.hijack)
		}
		if want[2] {
			_, err := wrapped.(io.ReaderFrom).ReadFrom(strings.NewReader("x"))
			require.NoError(t, err)
			assert.True(t, full.readFrom)
			assert.Equal(t, http.StatusOK, rec.status)
		}
	}
}

func TestTheRecordedStatusIsTheFirstFinalOne(t *testing.T) {
	for name, tc := range map[string]struct {
		do   func(w http.ResponseWriter)
		want int
	}{
		"nothing":            {func(http.ResponseWriter) {}, 0},
		"body only":          {func(w http.ResponseWriter) { _, _ = w.Write([]byte("x")) }, 200},
		"500":                {func(w http.ResponseWriter) { w.WriteHeader(500) }, 500},
		"103 then 502":       {func(w http.ResponseWriter) { w.WriteHeader(103); w.WriteHeader(502) }, 502},
		"503 then a body":    {func(w http.ResponseWriter) { w.WriteHeader(503); _, _ = w.Write([]byte("x")) }, 503},
		"201 then 500 again": {func(w http.ResponseWriter) { w.WriteHeader(201); w.WriteHeader(500) }, 201},
	} {
		t.Run(name, func(t *testing.T) {
			_, rec := wrap(httptest.NewRecorder())
			w := http.ResponseWriter(rec)
			tc.do(w)
			assert.Equal(t, tc.want, rec.status)
		})
	}
}
