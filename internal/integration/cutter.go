package integration

import (
	"context"
	"net"
	"testing"
	"time"
)

// Cutter is a loopback TCP proxy that cuts one client off its server and lets it back,
// while other clients keep talking to the server directly. It listens on one address per
// target; give the client under test [Cutter.Addr] instead of the server's address.
//
// Its Disconnect and Reconnect fit datasourcetest.Fault as method values:
//
//	cut := integration.NewCutter(t, srv.Addr())
//	client := newClient(cut.Addr(0))
//	fault := &datasourcetest.Fault{Disconnect: cut.Disconnect, Reconnect: cut.Reconnect}
//
// Every goroutine of a Cutter ends, and is waited for, by the end of the test's cleanup.
type Cutter struct {
	p *proxy
}

// NewCutter returns a Cutter with one listener per target, each on a free port of
// 127.0.0.1, forwarding to its target. It is closed at t's cleanup.
func NewCutter(t testing.TB, targets ...string) *Cutter {
	t.Helper()
	return newCutter(t, false, targets)
}

// NewCutterSameOffsets is [NewCutter] with listen ports at the same distances from each
// other as the targets' ports, for a client that derives one port from another: the
// Nacos SDK dials gRPC on its HTTP port + [NacosGRPCPortOffset], so
//
//	grpcAddr, _ := integration.NacosGRPCAddr(srv.Addr())
//	cut := integration.NewCutterSameOffsets(t, srv.Addr(), grpcAddr)
//
// lets the SDK be given cut.Addr(0): it finds the gRPC port through the Cutter as well.
func NewCutterSameOffsets(t testing.TB, targets ...string) *Cutter {
	t.Helper()
	return newCutter(t, true, targets)
}

func newCutter(t testing.TB, sameOffsets bool, targets []string) *Cutter {
	t.Helper()
	if len(targets) == 0 {
		t.Fatal("integration.NewCutter: no target")
	}
	p := newProxy()
	p.sameOffsets = sameOffsets
	if err := p.listen(targets...); err != nil {
		t.Fatalf("integration.NewCutter: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.stop(ctx); err != nil {
			t.Errorf("integration.Cutter: %v", err)
		}
	})
	return &Cutter{p: p}
}

// Addr returns the address that forwards to the i-th target. It stays the same across
// Disconnect and Reconnect.
func (c *Cutter) Addr(i int) string { return c.p.addr(i) }

// Disconnect closes the listeners and every forwarded connection: the client sees its
// connections reset and new dials refused. It returns once a dial to each address is
// refused.
func (c *Cutter) Disconnect(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.p.stop(ctx); err != nil {
		t.Fatalf("integration.Cutter: disconnect: %v", err)
	}
	for _, addr := range c.p.addresses() {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			t.Fatalf("integration.Cutter: %s still accepts after Disconnect", addr)
		}
	}
}

// Reconnect listens again on the same addresses, waiting up to 10 s for them to be free.
func (c *Cutter) Reconnect(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := poll(ctx, 50*time.Millisecond, func(context.Context) error { return c.p.reopen() }); err != nil {
		t.Fatalf("integration.Cutter: reconnect: %v", err)
	}
}
