package admin_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

func ExampleHandler() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 100}})

	mux := http.NewServeMux()
	mux.Handle("/debug/bulwark/", admin.Handler(e))
	srv := httptest.NewServer(mux) // in a service: the server you already run
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/bulwark/api/state")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	// Output: 200 OK application/json
}
