package console

import (
	"context"
	_ "embed" // the page
	"encoding/json"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// Document is one rule document the console shows.
type Document struct {
	// Center reads and changes the document (rulechange: the machinery of
	// the CLI); nil for a document only listed for its instances.
	Center *rulechange.Center
	// Name is the source as the user wrote it (without credentials); the
	// Center's Display when empty.
	Name string
	// Registry lists the instances registered beside the document; nil
	// when its backend has none. The Center's document when it is one and
	// Registry is nil.
	Registry datasource.Registry
}

// Option configures a Server.
type Option func(*config)

type config struct {
	usersFile  string
	authHeader string
	manual     []string
	canary     []string
	timeout    time.Duration
	refresh    time.Duration
	log        *slog.Logger
	now        func() time.Time
}

// WithUsersFile names the users file (see SetUser). Without one, nobody
// signs in with a password.
func WithUsersFile(path string) Option { return func(c *config) { c.usersFile = path } }

// WithAuthHeader trusts the request header name (X-Forwarded-User) to
// name the signed-in user, as set by a proxy that signs people in
// through their SSO. The user's role is the users file's for that name,
// else viewer. Only for a console that nothing but the proxy can reach:
// anyone who can send the header is whom it names.
func WithAuthHeader(name string) Option { return func(c *config) { c.authHeader = name } }

// WithInstances adds instances by the URL of their admin page, besides
// those registered beside the documents.
func WithInstances(adminURLs ...string) Option {
	return func(c *config) { c.manual = append(c.manual, adminURLs...) }
}

// WithCanaryGroups names canary groups (datasource.WithOverlay) whose
// overlays the page shows, besides those the config center lists.
func WithCanaryGroups(groups ...string) Option {
	return func(c *config) { c.canary = append(c.canary, groups...) }
}

// WithFetchTimeout bounds each instance's fetch and each registry's
// listing: 1 s by default.
func WithFetchTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithRefresh is how often the instances are listed and fetched: every
// 2 s by default.
func WithRefresh(d time.Duration) Option { return func(c *config) { c.refresh = d } }

// WithLogger logs the writes (who, what, revision) and failures; silent
// by default.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// Server is the console: its page and its JSON API. New starts the
// goroutine that refreshes the fleet; Close stops it.
type Server struct {
	cfg   config
	docs  []Document
	auth  *auth
	fleet *fleet
	mux   *http.ServeMux

	ctx       context.Context // ends with Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New returns a console over docs.
func New(docs []Document, opts ...Option) *Server {
	c := config{timeout: time.Second, refresh: 2 * time.Second, now: time.Now}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	docs = slices.Clone(docs)
	for i, d := range docs {
		if d.Center == nil {
			continue
		}
		if d.Name == "" {
			docs[i].Name = d.Center.Display()
		}
		if reg, ok := d.Center.Document().(datasource.Registry); ok && d.Registry == nil {
			docs[i].Registry = reg
		}
	}
	s := &Server{cfg: c, docs: docs, auth: newAuth(c.usersFile, c.authHeader, c.now),
		fleet: newFleet(docs, c.manual, c.timeout, c.now), mux: http.NewServeMux()}
	s.routes()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Go(func() { s.fleet.run(s.ctx, c.refresh) })
	return s
}

// Close stops the fleet's refresh and waits for it.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.wg.Wait()
	})
	return nil
}

// ServeHTTP serves the page and the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", s.page)
	s.mux.HandleFunc("GET /api/session", s.session)
	s.mux.HandleFunc("POST /api/signin", s.auth.signIn)
	s.mux.HandleFunc("POST /api/signout", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.auth.checkWrite(w, r, false); ok {
			s.auth.signOut(w, r)
		}
	})
	s.mux.HandleFunc("GET /api/fleet", s.read(s.getFleet))
	s.mux.HandleFunc("GET /api/instance", s.read(s.getInstance))
	s.mux.HandleFunc("GET /api/docs", s.read(s.getDocs))
	s.mux.HandleFunc("GET /api/doc", s.read(s.getDoc))
	s.mux.HandleFunc("GET /api/history", s.read(s.getHistory))
	s.mux.HandleFunc("POST /api/edit", s.write(s.edit))
	s.mux.HandleFunc("POST /api/replace", s.write(s.replace))
	s.mux.HandleFunc("POST /api/rollback", s.write(s.rollback))
	s.mux.HandleFunc("POST /api/promote", s.write(s.promote))
	s.mux.HandleFunc("POST /api/abort", s.write(s.abort))
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API: "+r.Method+" "+r.URL.Path)
	})
}

// read wraps a handler that needs a signed-in user (any role).
func (s *Server) read(h func(http.ResponseWriter, *http.Request, who)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.auth.whoIs(r)
		if !ok {
			writeError(w, http.StatusUnauthorized, "sign in first")
			return
		}
		h(w, r, u)
	}
}

// write wraps a handler that changes rules: a signed-in editor, with the
// CSRF token.
func (s *Server) write(h func(http.ResponseWriter, *http.Request, who)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.auth.checkWrite(w, r, true)
		if !ok {
			return
		}
		h(w, r, u)
	}
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	nonce := randomToken()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'nonce-"+nonce+
		"'; connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	_ = pageTmpl.Execute(w, map[string]any{"Nonce": nonce, "AuthHeader": s.cfg.authHeader})
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	u, ok := s.auth.whoIs(r)
	if !ok {
		writeJSON(w, http.StatusOK, map[string]any{"signedIn": false})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"signedIn": true, "name": u.Name, "role": u.Role, "csrf": u.CSRF, "via": u.Via})
}

func (s *Server) getFleet(w http.ResponseWriter, r *http.Request, _ who) {
	v, err := s.fleet.current(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "the fleet is not listed yet: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) getInstance(w http.ResponseWriter, r *http.Request, _ who) {
	raw, ok := s.fleet.state(r.URL.Query().Get("key"))
	if !ok {
		writeError(w, http.StatusNotFound, "no answer from that instance (or no such instance)")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(raw)
}

// apiError is every error the API answers.
type apiError struct {
	Error string `json:"error"`
	// Field names the rule field at fault ("rules[0].count"), when one is.
	Field string `json:"field,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
