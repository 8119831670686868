package zookeeper_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/integration"
)

// quiet is a go-zookeeper logger that drops everything: the client logs
// every reconnect attempt, and its goroutines outlive the tests' t.Log.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// testCtx is a context bounded well inside the test binary's timeout.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// gate is a zk.Dialer that the test can shut: Close drops every connection
// it made and refuses new ones until Open. It cuts one client off a server
// that keeps running, which is what a network partition does.
type gate struct {
	mu    sync.Mutex
	shut  bool
	conns []net.Conn
}

func (g *gate) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return nil, errors.New("gate: shut")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		g.conns = append(g.conns, c)
	}
	return c, err
}

func (g *gate) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = true
	for _, c := range g.conns {
		_ = c.Close()
	}
	g.conns = nil
}

func (g *gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = false
}

type connConfig struct {
	timeout time.Duration
	dialer  zk.Dialer
	auth    string // "user:password", digest
}

// connect opens a connection to addr, waits for its session (bounded) and
// closes it at cleanup.
func connect(t *testing.T, addr string, cfg connConfig) *zk.Conn {
	t.Helper()
	if cfg.timeout == 0 {
		cfg.timeout = 4 * time.Second
	}
	if cfg.dialer == nil {
		cfg.dialer = net.DialTimeout
	}
	conn, _, err := zk.Connect([]string{addr}, cfg.timeout,
		zk.WithLogger(quiet{}), zk.WithLogInfo(false), zk.WithDialer(cfg.dialer))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	waitSession(t, conn, 30*time.Second)
	if cfg.auth != "" {
		require.NoError(t, conn.AddAuth("digest", []byte(cfg.auth)))
	}
	return conn
}

func waitSession(t *testing.T, conn *zk.Conn, d time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return conn.State() == zk.StateHasSession }, d, 5*time.Millisecond,
		"no zookeeper session within %v (state %s)", d, conn.State())
}

// putNode stores data at path the way another client would: set, or
// create with parents.
func putNode(conn *zk.Conn, path string, data []byte, acl ...zk.ACL) error {
	if len(acl) == 0 {
		acl = zk.WorldACL(zk.PermAll)
	}
	_, err := conn.Set(path, data, -1)
	if !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			if _, err := conn.Create(path[:i], nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
		}
	}
	_, err = conn.Create(path, data, 0, acl)
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = conn.Set(path, data, -1)
	}
	return err
}

// zkCall runs a go-zookeeper call (which takes no context) bounded by ctx.
func zkCall(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// nodePath makes a ZooKeeper path out of a test name.
func nodePath(t *testing.T) string {
	return "/bulwark-test/" + strings.NewReplacer(" ", "_", "#", "_").Replace(t.Name())
}

func startZK(t *testing.T) *integration.Server {
	t.Helper()
	srv := integration.StartZooKeeper(t)
	t.Logf("zookeeper in %s mode at %s", srv.Mode(), srv.Addr())
	return srv
}

// armLog is a slog handler for a Readable's logger (the Source's Watch
// logs to it) that records the
// revisions at which its watch was armed ("zookeeper watch armed").
type armLog struct {
	mu   sync.Mutex
	revs []string
}

func (a *armLog) Enabled(context.Context, slog.Level) bool { return true }
func (a *armLog) WithAttrs([]slog.Attr) slog.Handler       { return a }
func (a *armLog) WithGroup(string) slog.Handler            { return a }

func (a *armLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "zookeeper watch armed" {
		return nil
	}
	r.Attrs(func(attr slog.Attr) bool {
		if attr.Key == "revision" {
			a.mu.Lock()
			a.revs = append(a.revs, attr.Value.String())
			a.mu.Unlock()
		}
		return true
	})
	return nil
}

// at reports whether the watch was armed at revision rev.
func (a *armLog) at(rev string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Contains(a.revs, rev)
}
