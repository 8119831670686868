package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsolePasswdAndServe: console passwd stores a bcrypt hash (not the
// password); console refuses to start without a users file, serves the
// page and signs the user in, and stops on Ctrl-C.
func TestConsolePasswdAndServe(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	r := cli(t, "short\n", nil, "console", "passwd", "--users", users, "--role", "editor", "alice")
	assert.Equal(t, exitUsage, r.code, "%v", r)
	assert.Contains(t, r.stderr, "at least 8")
	r = cli(t, "alice-password\n", nil, "console", "passwd", "--users", users, "--role", "admin", "alice")
	assert.Equal(t, exitUsage, r.code, "%v", r)
	assert.Contains(t, r.stderr, "role")
	r = cli(t, "alice-password\n", nil, "console", "passwd", "--users", users, "--role", "editor", "alice")
	require.Equal(t, exitOK, r.code, "%v", r)
	data, err := os.ReadFile(users)
	require.NoError(t, err)
	assert.Contains(t, string(data), "alice:editor:$2a$")
	assert.NotContains(t, string(data), "alice-password")

	rules := writeFile(t, dir, "flow.json", `[{"resource":"GET /orders","count":10}]`)
	r = bulwark(t, "console", "--users", filepath.Join(dir, "nobody"), "--source", rules)
	assert.Equal(t, exitUsage, r.code, "%v", r)
	assert.Contains(t, r.stderr, "bulwark console passwd")
	r = bulwark(t, "console", "--users", users)
	assert.Equal(t, exitUsage, r.code, "no source: %v", r)

	p := start(t, nil, "console", "--users", users, "--source", rules, "--listen", "127.0.0.1:0")
	var base string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`on (http://[0-9.:]+/)`).FindStringSubmatch(p.out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, 30*time.Second, 20*time.Millisecond, "the console never said where it serves: %s %s", p.out, p.errOut)
	resp, err := http.Post(base+"api/signin", "application/json", strings.NewReader(`{"name":"alice","password":"alice-password"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Post(base+"api/edit", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "an anonymous write")
	p.interrupt(t)
	res := p.wait(t)
	assert.Equal(t, exitOK, res.code, "%v", res)
}
