package integration

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mode says how servers are provided; see the package documentation.
type Mode string

// The modes, as spelled in BULWARK_IT_MODE.
const (
	ModeDocker Mode = "docker"
	ModeLocal  Mode = "local"
	ModeAuto   Mode = "auto"
)

// Environment variables read by the package.
const (
	EnvMode           = "BULWARK_IT_MODE"
	EnvRequire        = "BULWARK_IT_REQUIRE"
	EnvImageEtcd      = "BULWARK_IT_IMAGE_ETCD"
	EnvImageRedis     = "BULWARK_IT_IMAGE_REDIS"
	EnvImageZooKeeper = "BULWARK_IT_IMAGE_ZOOKEEPER"
)

// Default images for docker mode: the official public ones.
const (
	DefaultEtcdImage      = "gcr.io/etcd-development/etcd:v3.6.5"
	DefaultRedisImage     = "redis:7"
	DefaultZooKeeperImage = "zookeeper:3.9"
)

// Timeouts used when the caller gives no deadline.
const (
	startTimeout = 90 * time.Second
	stopTimeout  = 30 * time.Second
)

// Option configures a server started by StartEtcd, StartRedis or StartZooKeeper.
type Option func(*options)

type options struct {
	certs     *Certs
	tls       bool
	redisArgs []string
	consulACL string // WithConsulACL: the initial management token
}

// WithTLS makes the server accept TLS connections only, with a server certificate for
// IP 127.0.0.1 signed by certs' CA, and require a client certificate signed by it
// (mutual TLS). A nil certs makes a fresh set with NewCerts. Server.TLS returns the
// matching client configuration. Supported by etcd and Redis.
func WithTLS(certs *Certs) Option {
	return func(o *options) {
		o.tls = true
		o.certs = certs
	}
}

// WithRedisArgs appends arguments to the redis-server command line, each word its own
// argument, for example ACL users:
//
//	integration.WithRedisArgs("--user", "alice", "on", ">pw", "~*", "&*", "+@all")
//
// Supported by Redis only.
func WithRedisArgs(args ...string) Option {
	return func(o *options) { o.redisArgs = append(o.redisArgs, args...) }
}

// backend is one server kind in one mode. Server serializes calls to it.
type backend interface {
	// start starts the server (for the first time or again) and returns when it serves.
	start(ctx context.Context) error
	// stop kills the server; its data is kept for the next start.
	stop(ctx context.Context) error
	pause(ctx context.Context) error
	resume(ctx context.Context) error
	// close releases everything; called once, at cleanup.
	close(ctx context.Context) error
	// logTail returns the last lines of the server's output.
	logTail(ctx context.Context, lines int) string
}

type state int

const (
	stateRunning state = iota
	stateStopped
	statePaused
)

// Server is a real server started for a test. Its methods are safe for concurrent use.
type Server struct {
	kind string
	mode Mode
	addr string
	tls  *tls.Config

	mu    sync.Mutex
	state state
	b     backend
}

// Addr returns the server's address, host:port on 127.0.0.1. It stays the same across
// Stop and Start, so clients can reconnect to it.
func (s *Server) Addr() string { return s.addr }

// Mode returns the mode the server runs in: ModeDocker or ModeLocal.
func (s *Server) Mode() Mode { return s.mode }

// TLS returns a client TLS configuration (CA and client certificate) for a server started
// WithTLS, else nil. Each call returns a new copy.
func (s *Server) TLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.Clone()
}

// Stop kills the server, as a crash would; the data it acknowledged is kept. Clients get
// connection refused until Start. Stopping a stopped server does nothing; a paused server
// is resumed first.
func (s *Server) Stop(ctx context.Context) error {
	return s.move(ctx, "stop", stopTimeout, stateStopped, false)
}

// Start starts a stopped server again with its data on the same address and returns when
// it serves requests. Starting a running server does nothing; a paused server is resumed.
func (s *Server) Start(ctx context.Context) error {
	return s.move(ctx, "start", startTimeout, stateRunning, true)
}

// Pause freezes the server: connections stay open but nothing is answered, new
// connections are not served, until Resume. Pausing a paused server does nothing; pausing
// a stopped server is an error.
func (s *Server) Pause(ctx context.Context) error {
	return s.move(ctx, "pause", stopTimeout, statePaused, false)
}

// Resume lets a paused server run again. Resuming a running server does nothing; resuming
// a stopped server is an error.
func (s *Server) Resume(ctx context.Context) error {
	return s.move(ctx, "resume", stopTimeout, stateRunning, false)
}

// move takes the server to state want, one backend step at a time (a
// paused server is resumed before anything else); op names the step in
// errors. Only start may start a stopped server.
func (s *Server) move(ctx context.Context, op string, timeout time.Duration, want state, start bool) error {
	ctx, cancel := withDefaultTimeout(ctx, timeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.state != want {
		step, next := s.b.resume, stateRunning
		switch {
		case s.state == stateRunning && want == stateStopped:
			step, next = s.b.stop, stateStopped
		case s.state == stateRunning:
			step, next = s.b.pause, statePaused
		case s.state == stateStopped && !start:
			return fmt.Errorf("%s %s: server is stopped", op, s.kind)
		case s.state == stateStopped:
			step = s.b.start
		}
		if err := step(ctx); err != nil {
			return fmt.Errorf("%s %s: %w", op, s.kind, err)
		}
		s.state = next
	}
	return nil
}

// Freeze pauses the server for a test and returns how to resume it; the
// test's cleanup resumes it too, so a failed test leaves it running for
// the next. Both fail the test on error.
func (s *Server) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	if err := s.Pause(context.Background()); err != nil {
		t.Fatalf("integration: %v", err)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			if err := s.Resume(context.Background()); err != nil {
				t.Errorf("integration: %v", err)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}

// newServer wraps a backend whose server already runs and registers its cleanup: the
// server is closed, and its log tail printed when the test failed. Register it before
// anything else that should outlive it is cleaned up (t.Cleanup runs last-in first-out).
func newServer(t testing.TB, kind string, mode Mode, addr string, clientTLS *tls.Config, b backend) *Server {
	s := &Server{kind: kind, mode: mode, addr: addr, tls: clientTLS, b: b}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		s.mu.Lock()
		defer s.mu.Unlock()
		if t.Failed() {
			t.Logf("%s server (%s mode, %s) log tail:\n%s", kind, mode, addr, b.logTail(ctx, 60))
		}
		if s.state == statePaused {
			_ = b.resume(ctx) // some runtimes refuse to kill a frozen server
		}
		if err := b.close(ctx); err != nil {
			t.Errorf("close %s server: %v", kind, err)
		}
	})
	return s
}

// unavailable skips the test because a server cannot be had, or fails it when
// BULWARK_IT_REQUIRE=1.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s (%s=1 forbids skipping)", msg, EnvRequire)
	}
	t.Skip(msg)
}

// logTail startup failures: print the log tail at once, then fail.
func failStart(t testing.TB, kind string, b backend, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tail := b.logTail(ctx, 60)
	_ = b.close(ctx)
	t.Fatalf("start %s: %v\nserver log tail:\n%s", kind, err, tail)
}

var modeOnce = sync.OnceValues(func() (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(os.Getenv(EnvMode)))); m {
	case "":
		return ModeAuto, nil
	case ModeDocker, ModeLocal, ModeAuto:
		return m, nil
	default:
		return "", fmt.Errorf("%s=%q: want docker, local or auto", EnvMode, m)
	}
})

// chooseMode resolves the mode for a server whose docker image is image.
func chooseMode(t testing.TB, image string) Mode {
	t.Helper()
	m, err := modeOnce()
	if err != nil {
		t.Fatal(err)
	}
	if m != ModeAuto {
		return m
	}
	if dockerImagePresent(image) {
		return ModeDocker
	}
	return ModeLocal
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// RefusedAddr returns an address on 127.0.0.1 where nothing listens (a port that was
// free a moment ago): dialing it is refused at once, as with a server that is down.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// poll calls probe until it succeeds or ctx ends; it returns the last probe error.
func poll(ctx context.Context, every time.Duration, probe func(ctx context.Context) error) error {
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := probe(pctx)
		cancel()
		if err == nil {
			return nil
		}
		var pe permanentError
		if errors.As(err, &pe) {
			return pe.error
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", errors.Join(ctx.Err(), last))
		case <-time.After(every):
		}
	}
}

// permanentError makes poll give up at once.
type permanentError struct{ error }

// tailLines returns the last n lines of s.
func tailLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
