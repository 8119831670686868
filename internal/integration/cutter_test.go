package integration_test

import (
	"bufio"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/internal/integration"
)

// echoServer answers every line with the line, on a free loopback port, until cleanup.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// roundTrip sends a line over c and returns the answer.
func roundTrip(c net.Conn, r *bufio.Reader, line string) (string, error) {
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	got, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return got[:len(got)-1], nil
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return n
}

// A Cutter forwards, breaks its connections and refuses dials on Disconnect,
// serves again on the same addresses on Reconnect, and leaves no goroutine
// behind.
func TestCutter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // other tests leave server helpers running
	t.Run("forward disconnect reconnect", func(t *testing.T) {
		a, b := echoServer(t), echoServer(t)
		cut := integration.NewCutterSameOffsets(t, a, b)
		require.Equal(t, port(t, b)-port(t, a), port(t, cut.Addr(1))-port(t, cut.Addr(0)), "same offsets as the targets")
		addrs := []string{cut.Addr(0), cut.Addr(1)}

		c, err := net.Dial("tcp", cut.Addr(1))
		require.NoError(t, err)
		defer c.Close()
		r := bufio.NewReader(c)
		got, err := roundTrip(c, r, "hello")
		require.NoError(t, err)
		require.Equal(t, "hello", got)

		cut.Disconnect(t)
		_, err = roundTrip(c, r, "again")
		require.Error(t, err, "a connection through the Cutter is broken")
		for _, addr := range addrs {
			_, err := net.DialTimeout("tcp", addr, time.Second)
			require.Error(t, err, "dial %s after Disconnect", addr)
		}

		cut.Reconnect(t)
		require.Equal(t, addrs, []string{cut.Addr(0), cut.Addr(1)}, "the same addresses")
		for _, addr := range addrs {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			got, err := roundTrip(c, bufio.NewReader(c), "back "+addr)
			c.Close()
			require.NoError(t, err)
			require.Equal(t, "back "+addr, got)
		}
	})
}
