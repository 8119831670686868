package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

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
	srv := integration.StartEtcd(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Addr()}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cli.Close()
	const key = "/bulwark/order-service/test/flow"

	var out syncBuffer
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, &out, config{endpoints: []string{srv.Addr()}, key: key,
			timeout: 3 * time.Second, statusEvery: 10 * time.Millisecond})
	}()
	defer func() {
		stop()
		require.NoError(t, <-done)
		t.Log(out.String())
	}()
	waitOut := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, 10*time.Second, 5*time.Millisecond,
			"output to contain %q (the output is logged below)", want)
	}
	waitOut("warning: key " + key + " does not exist: no rules in force")
	waitOut("status: document missing, watching")

	_, err = cli.Put(ctx, key, `[{"resource":"GET /orders","count":20}]`)
	require.NoError(t, err)
	waitOut("+ GET /orders: count=20")

	_, err = cli.Put(ctx, key, `[{"resource":"GET /orders","count":5}]`)
	require.NoError(t, err)
	waitOut("~ GET /orders: count 20 → 5")

	_, err = cli.Put(ctx, key, `[{"resource":"GET /orders","count":-5}]`)
	require.NoError(t, err)
	waitOut("error (1 failures): ")
	waitOut("count: must be >= 0")
	waitOut("document rejected: the 1 rules in force stay")

	_, err = cli.Delete(ctx, key)
	require.NoError(t, err)
	waitOut("- GET /orders: count=5")
	waitOut("warning: the document was deleted: no rules in force")
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
		err := run(t.Context(), &syncBuffer{}, config{endpoints: []string{addr}, key: "/k",
			timeout: time.Second, statusEvery: time.Second})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no etcd answers at "+addr+" within 1s")
		assert.Less(t, time.Since(start), 5*time.Second)
		t.Log(err)
	}
}
