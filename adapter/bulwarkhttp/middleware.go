package bulwarkhttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/hotspot"
)

// Option configures [Middleware]. An option given nil keeps the default,
// as if it were left out.
type Option func(*config)

type config struct {
	resource    func(*http.Request) string
	origin      func(*http.Request) string
	args        func(*http.Request) []any
	block       func(http.ResponseWriter, *http.Request, *core.BlockError)
	errorStatus func(int) bool
}

// WithResource names the resource of a request instead of the ServeMux
// pattern, for other routers: return the route template, never the raw
// path, so that /orders/1 and /orders/2 are one resource. A request for
// which fn returns "" passes through unprotected (health checks, for
// example).
func WithResource(fn func(r *http.Request) string) Option {
	return func(c *config) {
		if fn != nil {
			c.resource = fn
		}
	}
}

// WithOrigin names the caller of a request (Sentinel's origin), which flow
// rules' limitApp and authority rules match: a header set by a gateway, the
// authenticated client. An empty origin is no origin.
func WithOrigin(fn func(r *http.Request) string) Option {
	return func(c *config) {
		if fn != nil {
			c.origin = fn
		}
	}
}

// WithArgs gives the hot-parameter values of a request (core.WithArgs),
// matched by hot-parameter rules through their paramIdx: a path value, a
// query parameter, a header.
func WithArgs(fn func(r *http.Request) []any) Option {
	return func(c *config) {
		if fn != nil {
			c.args = fn
		}
	}
}

// WithBlockHandler replaces the response to a blocked request. fn gets the
// *core.BlockError, whose Kind says which kind of rule blocked.
func WithBlockHandler(fn func(w http.ResponseWriter, r *http.Request, err *core.BlockError)) Option {
	return func(c *config) {
		if fn != nil {
			c.block = fn
		}
	}
}

// WithErrorStatus decides which response statuses count as failed calls
// for error-based circuit breakers, instead of status >= 500.
func WithErrorStatus(fn func(status int) bool) Option {
	return func(c *config) {
		if fn != nil {
			c.errorStatus = fn
		}
	}
}

// Middleware returns middleware that admits each request through e and
// answers blocked requests itself; see the package documentation for the
// resource name, the responses and what counts as an error. A nil e means
// core.Default().
func Middleware(e *core.Engine, opts ...Option) func(http.Handler) http.Handler {
	if e == nil {
		e = core.Default()
	}
	c := config{block: blockResponse, errorStatus: serverError}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return func(next http.Handler) http.Handler {
		if next == nil {
			next = http.DefaultServeMux // as http.Server does with a nil Handler
		}
		h := &handler{e: e, c: c, next: next}
		h.mux, _ = next.(*http.ServeMux)
		return h
	}
}

type handler struct {
	e    *core.Engine
	c    config
	next http.Handler
	mux  *http.ServeMux // next, when it is a ServeMux
}

// errStatus and errPanicked are what the entry records as its error.
var (
	errStatus   = errors.New("bulwarkhttp: error status")
	errPanicked = errors.New("bulwarkhttp: handler panicked")
)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := h.resource(r)
	if res == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	var buf [3]core.EntryOption
	opts := append(buf[:0], core.Inbound())
	if h.c.origin != nil {
		if o := h.c.origin(r); o != "" {
			opts = append(opts, core.WithOrigin(o))
		}
	}
	if h.c.args != nil {
		opts = append(opts, core.WithArgs(h.c.args(r)...))
	}
	en, err := h.e.Enter(r.Context(), res, opts...)
	if err != nil {
		if b, ok := err.(*core.BlockError); ok {
			h.c.block(w, r, b)
		} else {
			// The request's context ended while it waited for its turn.
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		}
		return
	}
	ww, rec := wrap(w)
	completed := false
	defer func() {
		if !completed {
			// A panic: record it and let it unwind on (no recover).
			en.SetError(errPanicked)
			en.Exit()
		}
	}()
	h.next.ServeHTTP(ww, r)
	completed = true
	if !rec.hijack {
		status := rec.status
		if status == 0 {
			status = http.StatusOK // nothing written: the server sends 200
		}
		if h.c.errorStatus(status) {
			en.SetError(errStatus)
		}
	}
	en.Exit()
}

// resource names the request's resource; "" leaves it unprotected.
func (h *handler) resource(r *http.Request) string {
	if h.c.resource != nil {
		return h.c.resource(r)
	}
	if h.mux != nil {
		// The mux routes after this runs: ask it which pattern it will
		// match. A request it does not route (404, 405) has no pattern and
		// is not protected, so that scanned paths never become resources.
		_, pattern := h.mux.Handler(r)
		return pattern
	}
	if r.Pattern != "" {
		return r.Pattern
	}
	return r.Method + " " + r.URL.Path
}

func serverError(status int) bool { return status >= 500 }

// blockResponse is the default answer to a blocked request: 429 with
// Retry-After for flow and hot-parameter blocks, 503 for breaker and
// system blocks (with Retry-After, the breaker's open time, for a
// breaker), 403 for authority blocks.
func blockResponse(w http.ResponseWriter, _ *http.Request, b *core.BlockError) {
	status := http.StatusServiceUnavailable
	retry := 0
	switch b.Kind {
	case core.BlockFlow:
		status, retry = http.StatusTooManyRequests, 1
	case core.BlockHotspot:
		status, retry = http.StatusTooManyRequests, 1
		if r, ok := b.Rule.(hotspot.Rule); ok && r.DurationInSec > 1 {
			retry = int(r.DurationInSec)
		}
	case core.BlockCircuitBreaker:
		if r, ok := b.Rule.(circuitbreaker.Rule); ok && r.TimeWindow > 0 {
			retry = r.TimeWindow
		}
	case core.BlockAuthority:
		status = http.StatusForbidden
	}
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	http.Error(w, "bulwark: blocked ("+b.Kind.String()+")", status) // as the gRPC status message
}
