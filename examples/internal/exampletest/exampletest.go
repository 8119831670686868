// Package exampletest holds what the examples' tests share: a buffer a
// test reads while the example writes to it, and addresses of servers that
// never answer or refuse connections.
package exampletest

import (
	"bytes"
	"net"
	"sync"
	"testing"
)

// Buffer is an io.Writer that a test reads (String) while a running
// example writes to it. The zero Buffer is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Unresponsive returns the address of a loopback listener that accepts
// connections and never answers; the test's cleanup closes it and every
// connection it accepted, and waits for its goroutine.
func Unresponsive(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("exampletest: listen: %v", err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	})
	return ln.Addr().String()
}

// Refused returns a loopback address where nothing listens: a port that
// was just free.
func Refused(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("exampletest: listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
