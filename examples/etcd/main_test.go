package main

import (
	"context"
	"io"
	"testing"
	"time"

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

	out := exampletest.Start(t, ctx, 10*time.Second, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, config{endpoints: []string{srv.Addr()}, key: key,
			timeout: 3 * time.Second, statusEvery: 10 * time.Millisecond})
	})
	exampletest.FollowsLiveChanges(t, out, key, func(doc string) {
		t.Helper()
		_, err := cli.Put(ctx, key, doc)
		require.NoError(t, err)
	}, func() {
		_, err := cli.Delete(ctx, key)
		require.NoError(t, err)
	})
}

func TestNoServerFailsFast(t *testing.T) {
	exampletest.FailsFast(t, func(addr string) error {
		return run(t.Context(), &exampletest.Buffer{}, config{endpoints: []string{addr}, key: "/k",
			timeout: time.Second, statusEvery: time.Second})
	}, func(addr string) string { return "no etcd answers at " + addr + " within 1s" })
}
