package bulwarkhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bulwark-go/bulwark/adapter/bulwarkhttp"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// discard is a ResponseWriter that keeps nothing, so that the benchmarks
// measure the handlers, not a recorder.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
func (discard) Flush()                      {}

var okBody = []byte("ok")

func okHandler(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(okBody) }

// BenchmarkMiddleware compares a handler with and without the middleware
// in one run: "bare", "enter-exit" (the engine's Enter and Exit written
// by hand around the handler) and "protected" serve a request whose pattern the mux
// already set (middleware around each handler); "mux/…" serve through a
// ServeMux, the middleware around it. The resource has a flow rule that
// admits everything, so its check runs.
func BenchmarkMiddleware(b *testing.B) {
	e := core.NewEngine()
	defer e.Close()
	if err := e.Flow().Load([]flow.Rule{{Resource: "GET /orders/{id}", Count: 1e12}}); err != nil {
		b.Fatal(err)
	}
	w := discard{h: http.Header{}}
	mw := bulwarkhttp.Middleware(e)

	routed := httptest.NewRequest(http.MethodGet, "/orders/42", nil)
	routed.Pattern = "GET /orders/{id}"
	bare := http.HandlerFunc(okHandler)
	protected := mw(bare)
	// What the middleware costs at least: the engine's entry, by hand.
	byHand := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		en, err := e.Enter(r.Context(), r.Pattern, core.Inbound())
		if err != nil {
			return
		}
		okHandler(w, r)
		en.Exit()
	})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", okHandler)
	fresh := httptest.NewRequest(http.MethodGet, "/orders/42", nil)

	for _, bc := range []struct {
		name string
		h    http.Handler
		r    *http.Request
	}{
		{"bare", bare, routed},
		{"enter-exit", byHand, routed},
		{"protected", protected, routed},
		{"mux/bare", mux, fresh},
		{"mux/protected", mw(mux), fresh},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.h.ServeHTTP(w, bc.r)
			}
		})
	}
}
