package bulwarkhttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/bulwark-go/bulwark/adapter/bulwarkhttp"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

func ExampleMiddleware() {
	e := core.NewEngine()
	defer e.Close()
	// The resource is the pattern: every id shares the 2 calls a second.
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders/{id}", Count: 2}})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "order %s", r.PathValue("id"))
	})
	h := bulwarkhttp.Middleware(e)(mux)

	for _, id := range []string{"1", "2", "3"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/orders/"+id, nil))
		fmt.Println(w.Code, w.Header().Get("Retry-After"), strings.TrimSpace(w.Body.String()))
	}
	// Output:
	// 200  order 1
	// 200  order 2
	// 429 1 bulwark: blocked (flow)
}

// Other routers name their routes themselves; with gorilla/mux, for
// example, the middleware goes inside the router (r.Use) and names the
// resource mux.CurrentRoute(r).GetPathTemplate(). Here a header does.
func ExampleWithResource() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "search", Count: 0}})

	h := bulwarkhttp.Middleware(e,
		bulwarkhttp.WithResource(func(r *http.Request) string {
			if r.URL.Path == "/healthz" {
				return "" // not protected
			}
			return r.Header.Get("X-Route")
		}),
	)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	for _, path := range []string{"/search?q=go", "/healthz"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("X-Route", "search")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(path, w.Code)
	}
	// Output:
	// /search?q=go 429
	// /healthz 200
}

func ExampleWithBlockHandler() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders/{id}", Count: 0}})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {})
	h := bulwarkhttp.Middleware(e,
		bulwarkhttp.WithBlockHandler(func(w http.ResponseWriter, r *http.Request, err *core.BlockError) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, `{"error":"busy","kind":%q}`, err.Kind)
		}),
	)(mux)

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/orders/1", nil))
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 429 {"error":"busy","kind":"flow"}
}
