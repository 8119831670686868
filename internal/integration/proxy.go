package integration

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// proxy is a loopback TCP proxy: one listener per target, each forwarding to its target.
// It gives a server a stable address across restarts and lets a test freeze traffic
// (pause) the way SIGSTOP freezes a process: connections stay open, bytes are neither
// delivered nor answered, new connections are accepted by the kernel but not served.
// Closing the listeners (stop) makes new connections fail with connection refused and
// ends every forwarded connection; listen opens them again on the same addresses.
//
// It serves the embedded etcd, the forwarder into Polaris' private network namespace and
// the exported [Cutter].
type proxy struct {
	// dial connects to a target; nil is a plain TCP dial.
	dial func(ctx context.Context, addr string) (net.Conn, error)
	// sameOffsets makes the first listen pick ports at the same distances from each
	// other as the targets' ports (the Nacos HTTP and gRPC ports, P and P+1000).
	sameOffsets bool

	mu      sync.Mutex
	addrs   []string // listen addresses, fixed after the first listen
	targets []string
	lns     []net.Listener // nil while stopped
	gen     int            // counts stops: a connection of an older generation is not served
	conns   map[net.Conn]struct{}
	paused  bool
	resumed chan struct{} // closed on resume; replaced on pause
	wg      sync.WaitGroup
}

func newProxy() *proxy {
	ch := make(chan struct{})
	close(ch)
	return &proxy{conns: make(map[net.Conn]struct{}), resumed: ch}
}

// listen opens one listener per target: on free ports of 127.0.0.1 the first time, on
// the same addresses after. When the proxy already listens only the targets change (for
// new connections).
func (p *proxy) listen(targets ...string) error {
	p.mu.Lock()
	addrs, open := p.addrs, p.lns != nil
	if open {
		p.targets = slices.Clone(targets)
	}
	p.mu.Unlock()
	if open {
		return nil
	}
	var lns []net.Listener
	var err error
	switch {
	case addrs != nil:
		if len(addrs) != len(targets) {
			return fmt.Errorf("proxy listen: %d targets for %d addresses", len(targets), len(addrs))
		}
		lns, err = listenAll(addrs)
	case p.sameOffsets:
		var offsets []int
		if offsets, err = portOffsets(targets); err == nil {
			lns, err = listenSpread(offsets...)
		}
	default:
		lns, err = listenAll(slices.Repeat([]string{"127.0.0.1:0"}, len(targets)))
	}
	if err != nil {
		return fmt.Errorf("proxy listen: %w", err)
	}
	p.serve(lns, targets)
	return nil
}

// reopen listens again, after stop, with the targets of the last listen.
func (p *proxy) reopen() error {
	p.mu.Lock()
	targets := p.targets
	p.mu.Unlock()
	return p.listen(targets...)
}

// serve takes over listeners lns, lns[i] forwarding to targets[i], and accepts on them.
func (p *proxy) serve(lns []net.Listener, targets []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.addrs == nil {
		for _, ln := range lns {
			p.addrs = append(p.addrs, ln.Addr().String())
		}
	}
	p.lns, p.targets = lns, slices.Clone(targets)
	for i, ln := range lns {
		p.wg.Add(1)
		go p.accept(ln, i, p.gen)
	}
}

// addr returns the address of listener i.
func (p *proxy) addr(i int) string { return p.addresses()[i] }

// addresses returns the listen addresses, one per target.
func (p *proxy) addresses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.addrs)
}

func (p *proxy) accept(ln net.Listener, i, gen int) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.gen != gen { // stopped meanwhile
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns[c] = struct{}{}
		target := p.targets[i]
		p.wg.Add(1)
		p.mu.Unlock()
		go p.forward(c, target, gen)
	}
}

// forward copies between c and a new connection to target until either side ends.
func (p *proxy) forward(c net.Conn, target string, gen int) {
	defer p.wg.Done()
	defer p.forget(c)
	// A paused server does not even answer a new connection.
	if !p.wait(gen) {
		c.Close()
		return
	}
	dial := p.dial
	if dial == nil {
		var d net.Dialer
		dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	up, err := dial(ctx, target)
	cancel()
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.gen != gen { // stopped while dialing
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.forget(up)
	done := make(chan struct{}, 2)
	go p.pipe(up, c, gen, done)
	go p.pipe(c, up, gen, done)
	<-done
	<-done
}

// pipe copies src to dst, holding bytes while the proxy is paused. When either side is
// gone it closes both, so that the other pipe ends too.
func (p *proxy) pipe(dst, src net.Conn, gen int, done chan<- struct{}) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait(gen) {
				break
			}
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
	done <- struct{}{}
}

// wait blocks while the proxy is paused; it returns false when the proxy has stopped
// since generation gen.
func (p *proxy) wait(gen int) bool {
	for {
		p.mu.Lock()
		ch, stopped := p.resumed, p.gen != gen
		p.mu.Unlock()
		if stopped {
			return false
		}
		<-ch
		p.mu.Lock()
		paused, stopped := p.paused, p.gen != gen
		p.mu.Unlock()
		if stopped {
			return false
		}
		if !paused {
			return true
		}
	}
}

func (p *proxy) forget(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *proxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.paused = true
		p.resumed = make(chan struct{})
	}
}

func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		close(p.resumed)
	}
}

// stop closes the listeners and every connection, and waits for its goroutines. The
// pause state is cleared.
func (p *proxy) stop(ctx context.Context) error {
	p.mu.Lock()
	for _, ln := range p.lns {
		ln.Close()
	}
	p.lns = nil
	p.gen++
	for c := range p.conns {
		c.Close()
	}
	if p.paused { // wake waiters; they see the stop
		p.paused = false
		close(p.resumed)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("proxy stop: %w", ctx.Err())
	}
}

// listenAll listens on every address, or on none.
func listenAll(addrs []string) ([]net.Listener, error) {
	lns := make([]net.Listener, 0, len(addrs))
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			closeListeners(lns)
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// listenSpread listens on 127.0.0.1:P+offsets[i], for each i, for some P at which all of
// them are free.
func listenSpread(offsets ...int) ([]net.Listener, error) {
	if len(offsets) == 0 {
		return nil, nil
	}
	var last error
	for range 50 {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free ports: %w", err)
		}
		base := first.Addr().(*net.TCPAddr).Port - offsets[0]
		lns := []net.Listener{first}
		for _, off := range offsets[1:] {
			port := base + off
			if port < 1 || port > 65535 {
				last = fmt.Errorf("port %d out of range", port)
				break
			}
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				last = err
				break
			}
			lns = append(lns, ln)
		}
		if len(lns) == len(offsets) {
			return lns, nil
		}
		closeListeners(lns)
	}
	return nil, fmt.Errorf("find free ports P%+v: %w", offsets, last)
}

// portOffsets returns the distance of each address's port from the first one's.
func portOffsets(addrs []string) ([]int, error) {
	offsets := make([]int, len(addrs))
	var first int
	for i, addr := range addrs {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", addr, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("target %q: port: %w", addr, err)
		}
		if i == 0 {
			first = n
		}
		offsets[i] = n - first
	}
	return offsets, nil
}

func closeListeners(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}
