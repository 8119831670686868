package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
	"github.com/bulwark-go/bulwark/internal/integration"
)

func TestFollowsLiveChanges(t *testing.T) {
	srv := integration.StartEtcd(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Addr()}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cli.Close()
	const key = "/bulwark/order-service/test/flow"

	var out exampletest.Buffer
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
	waitOut("error (1 failure): ")
	waitOut("count: must be >= 0")
	waitOut("document rejected: the 1 rule in force stays")

	_, err = cli.Delete(ctx, key)
	require.NoError(t, err)
	waitOut("- GET /orders: count=5")
	waitOut("warning: the document was deleted: no rules in force")
}

func TestNoServerFailsFast(t *testing.T) {
	// A server that accepts and never answers, and a port nobody listens on.
	for _, addr := range []string{exampletest.Unresponsive(t), exampletest.Refused(t)} {
		start := time.Now()
		err := run(t.Context(), &exampletest.Buffer{}, config{endpoints: []string{addr}, key: "/k",
			timeout: time.Second, statusEvery: time.Second})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no etcd answers at "+addr+" within 1s")
		assert.Less(t, time.Since(start), 5*time.Second)
		t.Log(err)
	}
}
