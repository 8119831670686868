package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/bulwark-go/bulwark/internal/console"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// A console over a rule file: nobody is signed in until they sign in
// with a password of the users file.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "console-example-")
	defer os.RemoveAll(dir)
	rules := filepath.Join(dir, "flow.json")
	_ = os.WriteFile(rules, []byte(`[{"resource":"GET /orders","count":10}]`), 0o600)
	users := filepath.Join(dir, "users")
	if err := console.SetUser(users, "alice", console.RoleEditor, []byte("alice-password")); err != nil {
		fmt.Println(err)
		return
	}
	center, err := rulechange.Open(context.Background(), rules, rulechange.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer center.Close()
	s := console.New([]console.Document{{Center: center}}, console.WithUsersFile(users))
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/api/session")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output: {"signedIn":false}
}
