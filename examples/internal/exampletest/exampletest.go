package exampletest

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// FailsFast calls connect with the address of a server that accepts
// connections and never answers (Unresponsive), then with one where
// nothing listens (Refused): each call must return, within 5 s, an error
// that contains says(addr).
func FailsFast(t *testing.T, connect func(addr string) error, says func(addr string) string) {
	t.Helper()
	for _, addr := range []string{Unresponsive(t), Refused(t)} {
		start := time.Now()
		err := connect(addr)
		require.Error(t, err)
		assert.Contains(t, err.Error(), says(addr))
		assert.Less(t, time.Since(start), 5*time.Second)
		t.Log(err)
	}
}
