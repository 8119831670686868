package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/integration"
)

// syncBuffer is an io.Writer the test reads while run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestFollowsLiveChanges(t *testing.T) {
	srv := integration.StartRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer cli.Close()
	key := "bulwark:order-service:test:flow"
	channel := key + ":changed"

	var out syncBuffer
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, &out, config{addr: srv.Addr(), key: key, channel: channel,
			timeout: 3 * time.Second, statusEvery: 10 * time.Millisecond})
	}()
	defer func() {
		stop()
		require.NoError(t, <-done)
	}()
	waitOut := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, 10*time.Second, 5*time.Millisecond,
			"output to contain %q; got:\n%s", want, out.String())
	}
	waitOut("key " + key + " does not exist yet")
	waitOut("status: document missing, watching")

	doc := `[{"resource":"GET /orders","count":20}]`
	require.NoError(t, cli.Set(ctx, key, doc, 0).Err())
	require.NoError(t, cli.Publish(ctx, channel, doc).Err())
	waitOut("+ GET /orders: 20 QPS")

	require.NoError(t, cli.Set(ctx, key, `[{"resource":"GET /orders","count":-5}]`, 0).Err())
	require.NoError(t, cli.Publish(ctx, channel, "changed").Err())
	waitOut("error (1 failures): decode revision")
	t.Log(out.String())
}

func TestNoServerFailsFast(t *testing.T) {
	// A listener that accepts and never answers, and a port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
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
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := closed.Addr().String()
	closed.Close()

	for _, addr := range []string{ln.Addr().String(), refused} {
		start := time.Now()
		err := run(context.Background(), &syncBuffer{}, config{addr: addr, key: "k", channel: "c",
			timeout: time.Second, statusEvery: time.Second})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no Redis answers at "+addr)
		assert.Less(t, time.Since(start), 5*time.Second)
	}
}
