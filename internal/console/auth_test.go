package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/bulwark-go/bulwark/internal/console"
)

var bg = context.Background()

// users writes a users file with an editor (ed), a viewer (vi) and a
// name that only signs in through the header (sso, editor).
func users(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users")
	// bcrypt.MinCost: SetUser's DefaultCost takes seconds under -race.
	hash := func(pw string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		require.NoError(t, err)
		return string(h)
	}
	doc := "ed:editor:" + hash("editor-password") + "\nvi:viewer:" + hash("viewer-password") + "\nsso:editor:-\n"
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
	return path
}

// clock is a settable clock for sessions and sign-in limits.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// client is one browser: a cookie jar and the CSRF token of its session.
type client struct {
	t    *testing.T
	base string
	http *http.Client
	csrf string
}

func newClient(t *testing.T, base string) *client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &client{t: t, base: base, http: &http.Client{Jar: jar}}
}

// do sends a request with a JSON body (nil: none) and headers, and returns
// the status and the decoded answer.
func (c *client) do(method, path string, body any, headers map[string]string) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// write sends a write with the session's CSRF token.
func (c *client) write(path string, body any) (int, map[string]any) {
	c.t.Helper()
	return c.do(http.MethodPost, path, body, map[string]string{"X-CSRF-Token": c.csrf})
}

func (c *client) signIn(name, password string) int {
	c.t.Helper()
	code, _ := c.do(http.MethodPost, "/api/signin", map[string]string{"name": name, "password": password}, nil)
	if code == http.StatusOK {
		_, s := c.do(http.MethodGet, "/api/session", nil, nil)
		c.csrf, _ = s["csrf"].(string)
	}
	return code
}

func newServer(t *testing.T, opts ...console.Option) (*console.Server, *httptest.Server) {
	t.Helper()
	s := console.New(nil, append([]console.Option{console.WithRefresh(time.Hour)}, opts...)...)
	t.Cleanup(func() { _ = s.Close() })
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func TestSignInSession(t *testing.T) {
	_, ts := newServer(t, console.WithUsersFile(users(t)))
	c := newClient(t, ts.URL)

	code, s := c.do(http.MethodGet, "/api/session", nil, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, false, s["signedIn"])
	code, _ = c.do(http.MethodGet, "/api/fleet", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, code, "nothing but the page and the sign-in without a session")

	assert.Equal(t, http.StatusUnauthorized, c.signIn("ed", "wrong-password"))
	assert.Equal(t, http.StatusUnauthorized, c.signIn("nobody", "editor-password"))
	assert.Equal(t, http.StatusUnauthorized, c.signIn("sso", ""), "a header-only name has no password")
	code, _ = c.do(http.MethodPost, "/api/signin", "not an object", nil)
	assert.Equal(t, http.StatusBadRequest, code)

	// A form post (what another site can make a browser send) is refused.
	resp, err := http.Post(ts.URL+"/api/signin", "text/plain", strings.NewReader(`{"name":"ed","password":"editor-password"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	assert.Empty(t, resp.Cookies())

	// The cookie: HttpOnly, SameSite=Strict.
	resp, err = http.Post(ts.URL+"/api/signin", "application/json", strings.NewReader(`{"name":"ed","password":"editor-password"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	ck := resp.Cookies()[0]
	assert.True(t, ck.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, ck.SameSite)

	require.Equal(t, http.StatusOK, c.signIn("ed", "editor-password"))
	_, s = c.do(http.MethodGet, "/api/session", nil, nil)
	assert.Equal(t, "ed", s["name"])
	assert.Equal(t, console.RoleEditor, s["role"])
	assert.NotEmpty(t, c.csrf)
	code, _ = c.do(http.MethodGet, "/api/fleet", nil, nil)
	assert.Equal(t, http.StatusOK, code)

	// Signing out is a write: it needs the token; then the session is gone.
	code, _ = c.do(http.MethodPost, "/api/signout", map[string]string{}, nil)
	assert.Equal(t, http.StatusForbidden, code, "sign-out without the CSRF token")
	code, _ = c.write("/api/signout", map[string]string{})
	require.Equal(t, http.StatusOK, code)
	code, _ = c.do(http.MethodGet, "/api/fleet", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, code)
}

func TestSignInRateLimited(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, ts := newServer(t, console.WithUsersFile(users(t)), console.WithClock(clk.now))
	c := newClient(t, ts.URL)
	for i := range 5 {
		assert.Equal(t, http.StatusUnauthorized, c.signIn("ed", "guess"), "attempt %d", i+1)
	}
	assert.Equal(t, http.StatusTooManyRequests, c.signIn("ed", "editor-password"), "the right password, after the burst")
	assert.Equal(t, http.StatusTooManyRequests, c.signIn("vi", "viewer-password"), "from the same address, another name")
	clk.add(10 * time.Second)
	assert.Equal(t, http.StatusOK, c.signIn("ed", "editor-password"), "one attempt again after 10 s")
}

func TestSessionExpires(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	_, ts := newServer(t, console.WithUsersFile(users(t)), console.WithClock(clk.now))
	c := newClient(t, ts.URL)
	require.Equal(t, http.StatusOK, c.signIn("vi", "viewer-password"))
	code, _ := c.do(http.MethodGet, "/api/fleet", nil, nil)
	require.Equal(t, http.StatusOK, code)
	clk.add(13 * time.Hour)
	code, _ = c.do(http.MethodGet, "/api/fleet", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, code, "a session lasts 12 hours")
}

func TestWriteRefusals(t *testing.T) {
	_, ts := newServer(t, console.WithUsersFile(users(t)))
	body := map[string]any{"source": 0}

	anon := newClient(t, ts.URL)
	code, out := anon.do(http.MethodPost, "/api/signout", body, nil)
	assert.Equal(t, http.StatusUnauthorized, code, "anonymous: %v", out)

	ed := newClient(t, ts.URL)
	require.Equal(t, http.StatusOK, ed.signIn("ed", "editor-password"))
	code, out = ed.do(http.MethodPost, "/api/signout", body, nil)
	assert.Equal(t, http.StatusForbidden, code, "no CSRF token: %v", out)
	assert.Contains(t, out["error"], "CSRF")
	code, _ = ed.do(http.MethodPost, "/api/signout", body, map[string]string{"X-CSRF-Token": ed.csrf + "x"})
	assert.Equal(t, http.StatusForbidden, code, "a wrong CSRF token")
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/signout", strings.NewReader("a=b"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-CSRF-Token", ed.csrf)
	resp, err := ed.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, "a form post")

	// Another session's token is not this session's.
	vi := newClient(t, ts.URL)
	require.Equal(t, http.StatusOK, vi.signIn("vi", "viewer-password"))
	code, _ = vi.do(http.MethodPost, "/api/signout", body, map[string]string{"X-CSRF-Token": ed.csrf})
	assert.Equal(t, http.StatusForbidden, code, "the editor's token in the viewer's session")
}

func TestAuthHeader(t *testing.T) {
	_, ts := newServer(t, console.WithUsersFile(users(t)), console.WithAuthHeader("X-Forwarded-User"))
	c := newClient(t, ts.URL)
	code, s := c.do(http.MethodGet, "/api/session", nil, map[string]string{"X-Forwarded-User": "sso"})
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "sso", s["name"])
	assert.Equal(t, console.RoleEditor, s["role"], "the users file gives the role")
	assert.Equal(t, "header", s["via"])
	csrf, _ := s["csrf"].(string)
	require.NotEmpty(t, csrf)

	_, s = c.do(http.MethodGet, "/api/session", nil, map[string]string{"X-Forwarded-User": "carol"})
	assert.Equal(t, console.RoleViewer, s["role"], "a name the file does not list is a viewer")
	carolCSRF, _ := s["csrf"].(string)
	assert.NotEqual(t, csrf, carolCSRF)

	code, _ = c.do(http.MethodPost, "/api/signout", map[string]any{}, map[string]string{"X-Forwarded-User": "carol", "X-CSRF-Token": csrf})
	assert.Equal(t, http.StatusForbidden, code, "sso's token is not carol's")
	_, s = c.do(http.MethodGet, "/api/session", nil, map[string]string{"X-Forwarded-User": "bad name/"})
	assert.Equal(t, false, s["signedIn"], "a header that is not a name signs nobody in")

	// Without WithAuthHeader the header means nothing.
	_, plain := newServer(t, console.WithUsersFile(users(t)))
	_, s = newClient(t, plain.URL).do(http.MethodGet, "/api/session", nil, map[string]string{"X-Forwarded-User": "sso"})
	assert.Equal(t, false, s["signedIn"])
}

func TestSetUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	require.ErrorContains(t, console.SetUser(path, "ed", "admin", []byte("long-enough")), "role")
	require.ErrorContains(t, console.SetUser(path, "ed", console.RoleEditor, []byte("short")), "at least 8")
	require.ErrorContains(t, console.SetUser(path, "a:b", console.RoleEditor, []byte("long-enough")), "user name")
	require.NoError(t, console.SetUser(path, "ed", console.RoleViewer, []byte("long-enough")))
	require.NoError(t, console.SetUser(path, "ed", console.RoleEditor, []byte("changed-password")))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "changed-password", "only the hash is stored")
	assert.Contains(t, string(data), "ed:editor:$2a$")
	assert.Equal(t, 1, strings.Count(string(data), "\ned:"), "one line per user")

	_, ts := newServer(t, console.WithUsersFile(path))
	c := newClient(t, ts.URL)
	assert.Equal(t, http.StatusUnauthorized, c.signIn("ed", "long-enough"), "the old password")
	assert.Equal(t, http.StatusOK, c.signIn("ed", "changed-password"))
}
