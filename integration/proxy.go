package integration

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// proxy is a loopback TCP proxy in front of an in-process server. It gives the server a
// stable address across restarts and lets a test freeze traffic (Pause) the way SIGSTOP
// freezes a process: connections stay open, bytes are neither delivered nor answered, new
// connections are accepted by the kernel but not served. Close of the listener (stop)
// makes new connections fail with connection refused.
type proxy struct {
	addr string // listen address, fixed after the first listen

	mu      sync.Mutex
	target  string
	ln      net.Listener
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

// listen opens the listener, on a free port the first time and on the same port after.
func (p *proxy) listen(target string) error {
	addr := p.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("proxy listen on %s: %w", addr, err)
	}
	p.mu.Lock()
	p.addr = ln.Addr().String()
	p.ln = ln
	p.target = target
	p.mu.Unlock()
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

func (p *proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.ln != ln { // closed meanwhile
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns[c] = struct{}{}
		target := p.target
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c, target)
	}
}

func (p *proxy) serve(c net.Conn, target string) {
	defer p.wg.Done()
	defer p.forget(c)
	// A paused server does not even answer a new connection.
	if !p.wait() {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // stopped while dialing
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.forget(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32*1024)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if !p.wait() {
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
		// Either side gone: close both so the other copy ends too.
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}

// wait blocks while the proxy is paused; it returns false when the proxy stopped.
func (p *proxy) wait() bool {
	for {
		p.mu.Lock()
		ch, stopped := p.resumed, p.ln == nil
		p.mu.Unlock()
		if stopped {
			return false
		}
		<-ch
		p.mu.Lock()
		paused, stopped := p.paused, p.ln == nil
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

// stop closes the listener and every connection, and waits for its goroutines. The
// pause state is cleared.
func (p *proxy) stop(ctx context.Context) error {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
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
