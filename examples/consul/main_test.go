package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
	"github.com/bulwark-go/bulwark/internal/integration"
)

func TestFollowsLiveChanges(t *testing.T) {
	srv := integration.StartConsul(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfg := api.DefaultConfig()
	cfg.Address = srv.Addr()
	cli, err := api.NewClient(cfg)
	require.NoError(t, err)
	kv := cli.KV()
	wo := (&api.WriteOptions{}).WithContext(ctx)
	const key = "bulwark/order-service/test/flow"

	out := exampletest.Start(t, ctx, 10*time.Second, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, config{addr: srv.Addr(), key: key,
			timeout: 3 * time.Second, statusEvery: 10 * time.Millisecond})
	})
	exampletest.FollowsLiveChanges(t, out, key, func(doc string) {
		t.Helper()
		_, err := kv.Put(&api.KVPair{Key: key, Value: []byte(doc)}, wo)
		require.NoError(t, err)
	}, func() {
		_, err := kv.Delete(key, wo)
		require.NoError(t, err)
	})
}

func TestNoServerFailsFast(t *testing.T) {
	exampletest.FailsFast(t, func(addr string) error {
		return run(t.Context(), &exampletest.Buffer{}, config{addr: addr, key: "k",
			timeout: time.Second, statusEvery: time.Second})
	}, func(addr string) string { return "no consul answers at " + addr + " within 1s" })
}
