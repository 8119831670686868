package bulwarkhttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/adapter/bulwarkhttp"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newEngine returns an engine on a clock that moves only when the test
// advances it, so windows and breakers never turn over by themselves.
func newEngine(t *testing.T) (*core.Engine, *testclock.Clock) {
	t.Helper()
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	return e, clk
}

// serve starts h on a real loopback listener; the server's own log (a
// handler's panic) is discarded.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

type response struct {
	status int
	body   string
	header http.Header
}

// get sends GET path to srv with the given header pairs.
func get(t *testing.T, srv *httptest.Server, path string, header ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{resp.StatusCode, string(body), resp.Header}
}

func statuses(t *testing.T, srv *httptest.Server, paths ...string) []int {
	t.Helper()
	out := make([]int, len(paths))
	for i, p := range paths {
		out[i] = get(t, srv, p).status
	}
	return out
}

// orders is the service under test: GET /orders/{id} and GET /health.
func orders() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "order %s", r.PathValue("id"))
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	return mux
}

// ordersWrappedEach registers each handler of orders wrapped on its own.
func ordersWrappedEach(mw func(http.Handler) http.Handler) *http.ServeMux {
	inner := orders()
	mux := http.NewServeMux()
	for _, p := range []string{"GET /orders/{id}", "GET /health"} {
		mux.Handle(p, mw(inner))
	}
	return mux
}

// followRules makes e's flow rules follow the file at path.
func followRules(t *testing.T, e *core.Engine, path string) {
	t.Helper()
	ds := datasource.NewReadable(file.New(path), converter.FlowRules())
	e.Flow().Register(ds.Property())
	require.NoError(t, ds.Start(t.Context()))
	t.Cleanup(func() { _ = ds.Close() })
}

func TestFlowRuleFromAFileLimitsAPatternAcrossIDs(t *testing.T) {
	for name, build := range map[string]func(*core.Engine) http.Handler{
		"around the mux": func(e *core.Engine) http.Handler { return bulwarkhttp.Middleware(e)(orders()) },
		"around each handler": func(e *core.Engine) http.Handler {
			return ordersWrappedEach(bulwarkhttp.Middleware(e))
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, clk := newEngine(t)
			path := filepath.Join(t.TempDir(), "flow-rules.json")
			require.NoError(t, os.WriteFile(path, []byte(`[{"resource":"GET /orders/{id}","count":3}]`), 0o600))
			followRules(t, e, path)
			srv := serve(t, build(e))

			assert.Equal(t, []int{200, 200, 200}, statuses(t, srv, "/orders/1", "/orders/2", "/orders/3"))
			blocked := get(t, srv, "/orders/4")
			assert.Equal(t, http.StatusTooManyRequests, blocked.status)
			assert.Equal(t, "1", blocked.header.Get("Retry-After"))
			assert.Equal(t, "bulwark: blocked (flow)\n", blocked.body)
			assert.Equal(t, 200, get(t, srv, "/health").status, "another pattern is another resource")

			clk.Advance(time.Second)
			assert.Equal(t, 200, get(t, srv, "/orders/5").status, "a new window admits again")

			// The file changes while the service runs.
			require.NoError(t, os.WriteFile(path, []byte(`[{"resource":"GET /orders/{id}","count":1}]`), 0o600))
			require.Eventually(t, func() bool {
				rules := e.Flow().Rules()
				return len(rules) == 1 && rules[0].Count == 1
			}, 10*time.Second, 5*time.Millisecond)
			clk.Advance(time.Second)
			assert.Equal(t, []int{200, 429}, statuses(t, srv, "/orders/6", "/orders/7"))
		})
	}
}

func TestRequestsTheMuxDoesNotRouteAreNotEntries(t *testing.T) {
	e, _ := newEngine(t)
	// One inbound entry a second for the whole service.
	require.NoError(t, e.System().Load([]system.Rule{{QPS: 1}}))
	srv := serve(t, bulwarkhttp.Middleware(e)(orders()))

	assert.Equal(t, 200, get(t, srv, "/orders/1").status)
	for range 3 {
		assert.Equal(t, 404, get(t, srv, "/no/such/path").status, "a 404 is neither blocked nor counted")
	}
	blocked := get(t, srv, "/orders/2")
	assert.Equal(t, http.StatusServiceUnavailable, blocked.status)
	assert.Contains(t, blocked.body, "(system)")
	assert.Empty(t, blocked.header.Get("Retry-After"))
}

func TestResourceWithoutAPatternIsMethodAndPath(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /plain", Count: 1}}))
	srv := serve(t, bulwarkhttp.Middleware(e)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	assert.Equal(t, []int{200, 429, 200}, statuses(t, srv, "/plain", "/plain", "/other"))
}

func TestWithResourceNamesRequestsAndEmptyLeavesThemUnprotected(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "orders", Count: 1}}))
	mw := bulwarkhttp.Middleware(e, bulwarkhttp.WithResource(func(r *http.Request) string {
		if r.URL.Path == "/health" {
			return ""
		}
		return "orders"
	}))
	srv := serve(t, mw(orders()))
	assert.Equal(t, []int{200, 429, 200, 200}, statuses(t, srv, "/orders/1", "/orders/2", "/health", "/health"))
}

// breakerRig serves GET /work, which fails with 500 while failing is set,
// behind an error-ratio breaker that opens for 10 s.
type breakerRig struct {
	srv     *httptest.Server
	clk     *testclock.Clock
	failing atomic.Bool
	calls   atomic.Int64
	mu      sync.Mutex
	changes []string
}

func newBreakerRig(t *testing.T, opts ...bulwarkhttp.Option) *breakerRig {
	e, clk := newEngine(t)
	rig := &breakerRig{clk: clk}
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: "GET /work", Grade: circuitbreaker.ErrorRatio, Count: 0.5,
		TimeWindow: 10, MinRequestAmount: 4,
	}}))
	t.Cleanup(e.OnBreakerStateChange(func(c circuitbreaker.StateChange) {
		rig.mu.Lock()
		defer rig.mu.Unlock()
		rig.changes = append(rig.changes, c.From.String()+"→"+c.To.String())
	}))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		rig.calls.Add(1)
		if rig.failing.Load() {
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	})
	rig.srv = serve(t, bulwarkhttp.Middleware(e, opts...)(mux))
	return rig
}

func (rig *breakerRig) transitions() []string {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	return append([]string(nil), rig.changes...)
}

func TestServerErrorsOpenTheBreakerUntilAProbeSucceeds(t *testing.T) {
	rig := newBreakerRig(t)
	rig.failing.Store(true)
	assert.Equal(t, []int{500, 500, 500, 500}, statuses(t, rig.srv, "/work", "/work", "/work", "/work"))

	open := get(t, rig.srv, "/work")
	assert.Equal(t, http.StatusServiceUnavailable, open.status)
	assert.Equal(t, "10", open.header.Get("Retry-After"))
	assert.Equal(t, "bulwark: blocked (degrade)\n", open.body)
	assert.EqualValues(t, 4, rig.calls.Load(), "an open breaker keeps requests from the handler")

	rig.failing.Store(false) // the dependency recovers, but the breaker waits its 10 s
	assert.Equal(t, 503, get(t, rig.srv, "/work").status)

	rig.clk.Advance(10 * time.Second)
	assert.Equal(t, []int{200, 200, 200}, statuses(t, rig.srv, "/work", "/work", "/work"), "the probe succeeds and closes it")
	assert.Equal(t, []string{"CLOSED→OPEN", "OPEN→HALF_OPEN", "HALF_OPEN→CLOSED"}, rig.transitions())
}

func TestAFailedProbeOpensTheBreakerAgain(t *testing.T) {
	rig := newBreakerRig(t)
	rig.failing.Store(true)
	statuses(t, rig.srv, "/work", "/work", "/work", "/work")
	rig.clk.Advance(10 * time.Second)
	assert.Equal(t, []int{500, 503}, statuses(t, rig.srv, "/work", "/work"))
	assert.Equal(t, []string{"CLOSED→OPEN", "OPEN→HALF_OPEN", "HALF_OPEN→OPEN"}, rig.transitions())
}

func TestClientErrorsDoNotCountUnlessWithErrorStatusSaysSo(t *testing.T) {
	notFound := func(t *testing.T, opts ...bulwarkhttp.Option) []int {
		e, _ := newEngine(t)
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
			Resource: "GET /missing", Grade: circuitbreaker.ErrorCount, Count: 2, TimeWindow: 10, MinRequestAmount: 1,
		}}))
		mux := http.NewServeMux()
		mux.HandleFunc("GET /missing", http.NotFound)
		srv := serve(t, bulwarkhttp.Middleware(e, opts...)(mux))
		return statuses(t, srv, "/missing", "/missing", "/missing", "/missing", "/missing")
	}
	assert.Equal(t, []int{404, 404, 404, 404, 404}, notFound(t))
	counted := notFound(t, bulwarkhttp.WithErrorStatus(func(s int) bool { return s >= 400 }))
	assert.Equal(t, []int{404, 404, 404}, counted[:3])
	assert.Contains(t, counted[3:], 503, "404s counted as errors open the breaker")
}

func TestAPanicCountsAsAnErrorAndKeepsUnwinding(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: "GET /panic", Grade: circuitbreaker.ErrorRatio, Count: 0.5, TimeWindow: 10, MinRequestAmount: 1,
	}}))
	type boom struct{ n int }
	recovered := make(chan any, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /panic", func(http.ResponseWriter, *http.Request) { panic(boom{42}) })
	protected := bulwarkhttp.Middleware(e)(mux)
	// The test's own recovery, outside the middleware, writes to the
	// server's writer: the middleware saw no status, only the panic.
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				recovered <- v
				w.WriteHeader(http.StatusTeapot)
			}
		}()
		protected.ServeHTTP(w, r)
	}))

	assert.Equal(t, http.StatusTeapot, get(t, srv, "/panic").status)
	assert.Equal(t, boom{42}, <-recovered, "the panic reaches the caller unchanged")
	assert.Equal(t, http.StatusServiceUnavailable, get(t, srv, "/panic").status, "the panic opened the breaker")
}

func TestAStreamedResponseFlushesAndItsEntryLastsTheWholeStream(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /stream", Grade: flow.GradeThread, Count: 1}}))
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "first")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprintln(w, "second")
		assert.NoError(t, http.NewResponseController(w).Flush())
	})
	srv := serve(t, bulwarkhttp.Middleware(e)(mux))

	resp, err := srv.Client().Get(srv.URL + "/stream")
	require.NoError(t, err)
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	line, err := body.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "first\n", line, "flushed while the handler still runs")

	assert.Equal(t, http.StatusTooManyRequests, get(t, srv, "/stream").status, "the stream holds its entry")
	close(release)
	rest, err := io.ReadAll(body)
	require.NoError(t, err)
	assert.Equal(t, "second\n", string(rest))
	require.Eventually(t, func() bool { return get(t, srv, "/stream").status == 200 },
		10*time.Second, 5*time.Millisecond, "the entry ends with the handler")
}

// upgrade opens a connection to srv and upgrades it to a line echo.
func upgrade(t *testing.T, srv *httptest.Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = io.WriteString(conn, "GET /echo HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	return conn, br
}

func TestAHijackedConnectionWorksAndCountsAsASuccess(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /echo", Grade: flow.GradeThread, Count: 1}}))
	// One error would open this breaker: a hijack must not count as one.
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: "GET /echo", Grade: circuitbreaker.ErrorCount, Count: 0.5, TimeWindow: 10, MinRequestAmount: 1,
	}}))
	var handlers sync.WaitGroup
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "upgrade required", http.StatusUpgradeRequired)
			return
		}
		handlers.Add(1)
		defer handlers.Done()
		conn, brw, err := http.NewResponseController(w).Hijack()
		if !assert.NoError(t, err) {
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = brw.Flush()
		for {
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			_, _ = brw.WriteString(line)
			_ = brw.Flush()
		}
	})
	srv := serve(t, bulwarkhttp.Middleware(e)(mux))

	conn, br := upgrade(t, srv)
	_, err := io.WriteString(conn, "ping\n")
	require.NoError(t, err)
	echo, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "ping\n", echo)
	assert.Equal(t, http.StatusTooManyRequests, get(t, srv, "/echo").status, "the upgraded connection holds its entry")

	require.NoError(t, conn.Close())
	handlers.Wait()
	require.Eventually(t, func() bool { return get(t, srv, "/echo").status == http.StatusUpgradeRequired },
		10*time.Second, 5*time.Millisecond, "admitted again, and the breaker stayed closed")
	conn2, br2 := upgrade(t, srv)
	_, err = io.WriteString(conn2, "again\n")
	require.NoError(t, err)
	echo, err = br2.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "again\n", echo)
	require.NoError(t, conn2.Close())
	handlers.Wait()
}

func TestOriginAndHotParameterRules(t *testing.T) {
	e, clk := newEngine(t)
	require.NoError(t, e.Authority().Load([]authority.Rule{{Resource: "GET /orders/{id}", LimitApp: "scraper", Strategy: authority.Black}}))
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders/{id}", LimitApp: "mobile", Count: 2}}))
	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{{Resource: "GET /orders/{id}", ParamIdx: 0, Count: 1, DurationInSec: 5}}))
	mw := bulwarkhttp.Middleware(e,
		bulwarkhttp.WithOrigin(func(r *http.Request) string { return r.Header.Get("X-Caller") }),
		bulwarkhttp.WithArgs(func(r *http.Request) []any { return []any{r.PathValue("id")} }),
	)
	srv := serve(t, ordersWrappedEach(mw))

	refused := get(t, srv, "/orders/1", "X-Caller", "scraper")
	assert.Equal(t, http.StatusForbidden, refused.status)
	assert.Contains(t, refused.body, "(authority)")

	assert.Equal(t, 200, get(t, srv, "/orders/1", "X-Caller", "mobile").status)
	hot := get(t, srv, "/orders/1", "X-Caller", "web")
	assert.Equal(t, http.StatusTooManyRequests, hot.status, "id 1 is hot: one a window")
	assert.Equal(t, "5", hot.header.Get("Retry-After"))
	assert.Equal(t, "bulwark: blocked (paramFlow)\n", hot.body)

	assert.Equal(t, 200, get(t, srv, "/orders/2", "X-Caller", "mobile").status)
	limited := get(t, srv, "/orders/3", "X-Caller", "mobile")
	assert.Equal(t, http.StatusTooManyRequests, limited.status, "mobile's two a second are used")
	assert.Contains(t, limited.body, "(flow)")
	// (Hot parameters are checked before flow: id 3 used its one token.)
	assert.Equal(t, 200, get(t, srv, "/orders/4", "X-Caller", "web").status, "the flow rule is mobile's only")

	clk.Advance(6 * time.Second)
	assert.Equal(t, 200, get(t, srv, "/orders/1").status)
}

func TestWithBlockHandlerReplacesTheResponse(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders/{id}", Count: 0}}))
	mw := bulwarkhttp.Middleware(e, bulwarkhttp.WithBlockHandler(func(w http.ResponseWriter, r *http.Request, err *core.BlockError) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"kind":%q,"resource":%q}`, err.Kind, err.Resource)
	}))
	srv := serve(t, mw(orders()))
	got := get(t, srv, "/orders/9")
	assert.Equal(t, http.StatusTooManyRequests, got.status)
	assert.JSONEq(t, `{"kind":"flow","resource":"GET /orders/{id}"}`, got.body)
}

func TestAPacedRequestWhoseContextEndsGets503(t *testing.T) {
	// The rate limiter makes the second request wait 1 s on the engine's
	// clock, and the request's context, already cancelled, ends the wait.
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{
		Resource: "GET /paced", Count: 1, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 60_000,
	}}))
	h := bulwarkhttp.Middleware(e)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		if r.URL.Query().Has("cancel") {
			cancel()
		}
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	assert.Equal(t, 200, get(t, srv, "/paced").status)
	assert.Equal(t, http.StatusServiceUnavailable, get(t, srv, "/paced?cancel").status)
}

func TestTheWrappedWriterOffersWhatTheServersWriterOffers(t *testing.T) {
	type caps struct{ flusher, hijacker, readerFrom bool }
	capsOf := func(w http.ResponseWriter) caps {
		_, f := w.(http.Flusher)
		_, h := w.(http.Hijacker)
		_, r := w.(io.ReaderFrom)
		return caps{f, h, r}
	}
	for _, http2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("http2=%v", http2), func(t *testing.T) {
			e, _ := newEngine(t)
			var outer, inner caps
			var unwrapped bool
			protected := bulwarkhttp.Middleware(e)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inner = capsOf(w)
				u, ok := w.(interface{ Unwrap() http.ResponseWriter })
				unwrapped = ok && u.Unwrap() != nil
				_, err := io.Copy(w, strings.NewReader("body"))
				assert.NoError(t, err)
			}))
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				outer = capsOf(w)
				protected.ServeHTTP(w, r)
			}))
			srv.EnableHTTP2 = http2
			if http2 {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL + "/caps")
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, "body", string(body))
			assert.Equal(t, http2, resp.ProtoMajor == 2)
			assert.Equal(t, outer, inner)
			assert.True(t, unwrapped)
			assert.True(t, inner.flusher)
			assert.Equal(t, !http2, inner.hijacker)
		})
	}
}

func TestTheWrappedMuxsPatternWinsOverAnOuterOne(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders/{id}", Count: 1}}))
	outer := http.NewServeMux()
	outer.Handle("/api/", http.StripPrefix("/api", bulwarkhttp.Middleware(e)(orders())))
	srv := serve(t, outer)
	// The outer mux set r.Pattern to "/api/"; the inner mux's pattern names
	// the resource.
	assert.Equal(t, []int{200, 429, 200}, statuses(t, srv, "/api/orders/1", "/api/orders/2", "/api/health"))
}

// The README's table of blocked answers shows the body the middleware
// sends, for every kind.
func TestREADMEShowsTheBlockBody(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, tc := range []struct {
		kind   core.BlockKind
		status int
	}{
		{core.BlockFlow, http.StatusTooManyRequests},
		{core.BlockHotspot, http.StatusTooManyRequests},
		{core.BlockSystem, http.StatusServiceUnavailable},
		{core.BlockCircuitBreaker, http.StatusServiceUnavailable},
		{core.BlockAuthority, http.StatusForbidden},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			blocked := &core.BlockError{Kind: tc.kind, Resource: "GET /x"}
			w := httptest.NewRecorder()
			bulwarkhttp.BlockResponse(w, httptest.NewRequest(http.MethodGet, "/x", nil), blocked)
			assert.Equal(t, tc.status, w.Code)
			body := strings.TrimSuffix(w.Body.String(), "\n")
			assert.Contains(t, string(readme), fmt.Sprintf("| %d", tc.status))
			assert.Contains(t, string(readme), "`"+body+"` |", "the README shows the body %q", body)
		})
	}
}
