package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
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

	var out exampletest.Buffer
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, &out, config{addr: srv.Addr(), key: key,
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

	set := func(doc string) {
		t.Helper()
		_, err := kv.Put(&api.KVPair{Key: key, Value: []byte(doc)}, wo)
		require.NoError(t, err)
	}
	set(`[{"resource":"GET /orders","count":20}]`)
	waitOut("+ GET /orders: count=20")

	set(`[{"resource":"GET /orders","count":5}]`)
	waitOut("~ GET /orders: count 20 → 5")

	set(`[{"resource":"GET /orders","count":-5}]`)
	waitOut("error (1 failure): ")
	waitOut("count: must be >= 0")
	waitOut("document rejected: the 1 rule in force stays")

	_, err = kv.Delete(key, wo)
	require.NoError(t, err)
	waitOut("- GET /orders: count=5")
	waitOut("warning: the document was deleted: no rules in force")
}

func TestNoServerFailsFast(t *testing.T) {
	// A server that accepts and never answers, and a port nobody listens on.
	for _, addr := range []string{exampletest.Unresponsive(t), exampletest.Refused(t)} {
		start := time.Now()
		err := run(t.Context(), &exampletest.Buffer{}, config{addr: addr, key: "k",
			timeout: time.Second, statusEvery: time.Second})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no consul answers at "+addr+" within 1s")
		assert.Less(t, time.Since(start), 5*time.Second)
		t.Log(err)
	}
}
