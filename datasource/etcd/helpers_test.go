package etcd_test

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/bulwark-go/bulwark/integration"
)

// testTimeout bounds every test's context.
const testTimeout = 2 * time.Minute

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

type clientOpt func(*clientv3.Config)

func withTLS(c *tls.Config) clientOpt { return func(cfg *clientv3.Config) { cfg.TLS = c } }
func withUser(user, pw string) clientOpt {
	return func(cfg *clientv3.Config) { cfg.Username, cfg.Password = user, pw }
}

// newClient connects to addr; it never syncs endpoints (see integration.StartEtcd).
func newClient(t *testing.T, addr string, opts ...clientOpt) *clientv3.Client {
	t.Helper()
	cfg := clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := clientv3.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func startEtcd(t *testing.T, opts ...integration.Option) *integration.Server {
	t.Helper()
	srv := integration.StartEtcd(t, opts...)
	t.Logf("etcd in %s mode at %s", srv.Mode(), srv.Addr())
	return srv
}

// cutter is a loopback TCP proxy that cuts one client off its server
// (Disconnect: listener and every connection closed, so dials are refused)
// and lets it back (Reconnect: listening again on the same address), while
// other clients keep talking to the server directly.
type cutter struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newCutter(t *testing.T, target string) *cutter {
	t.Helper()
	c := &cutter{target: target, conns: make(map[net.Conn]struct{})}
	require.NoError(t, c.listen("127.0.0.1:0"))
	t.Cleanup(func() {
		c.cut()
		c.wg.Wait()
	})
	return c
}

func (c *cutter) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.ln, c.addr = ln, ln.Addr().String()
	c.mu.Unlock()
	c.wg.Go(func() { c.accept(ln) })
	return nil
}

func (c *cutter) accept(ln net.Listener) {
	for {
		down, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", c.target)
		if err != nil {
			down.Close()
			continue
		}
		c.mu.Lock()
		if c.ln != ln { // cut meanwhile
			c.mu.Unlock()
			down.Close()
			up.Close()
			continue
		}
		c.conns[down], c.conns[up] = struct{}{}, struct{}{}
		c.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				if n > 0 {
					if _, werr := dst.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			dst.Close()
			src.Close()
			c.mu.Lock()
			delete(c.conns, dst)
			delete(c.conns, src)
			c.mu.Unlock()
		}
		c.wg.Go(func() { pipe(up, down) })
		c.wg.Go(func() { pipe(down, up) })
	}
}

// cut closes the listener and every connection.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln != nil {
		c.ln.Close()
		c.ln = nil
	}
	for conn := range c.conns {
		conn.Close()
	}
}

func (c *cutter) Disconnect(t *testing.T) {
	t.Helper()
	c.cut()
	// Refused from now on: a dial proves it.
	conn, err := net.DialTimeout("tcp", c.addr, time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("cutter %s still accepts after Disconnect", c.addr)
	}
}

func (c *cutter) Reconnect(t *testing.T) {
	t.Helper()
	require.NoError(t, c.listen(c.addr), "listen again on %s", c.addr)
}
