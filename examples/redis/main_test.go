package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
	"github.com/bulwark-go/bulwark/internal/integration"
)

func TestFollowsLiveChanges(t *testing.T) {
	srv := integration.StartRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer cli.Close()
	key := "bulwark:order-service:test:flow"
	channel := key + ":changed"

	var out exampletest.Buffer
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, &out, config{addr: srv.Addr(), key: key, channel: channel,
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
		require.NoError(t, cli.Set(ctx, key, doc, 0).Err())
		require.NoError(t, cli.Publish(ctx, channel, "changed").Err())
	}
	set(`[{"resource":"GET /orders","count":20}]`)
	waitOut("+ GET /orders: count=20")

	set(`[{"resource":"GET /orders","count":5}]`)
	waitOut("~ GET /orders: count 20 → 5")

	set(`[{"resource":"GET /orders","count":-5}]`)
	waitOut("error (1 failure): ")
	waitOut("count: must be >= 0")
	waitOut("document rejected: the 1 rule in force stays")

	require.NoError(t, cli.Del(ctx, key).Err())
	require.NoError(t, cli.Publish(ctx, channel, "changed").Err())
	waitOut("warning: the document was deleted: no rules in force")
}

func TestClientLogsGoThroughSlogAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		var buf bytes.Buffer
		l := redisLog{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))}
		l.Printf(t.Context(), "redis: discarding bad PubSub connection: %v", "EOF")
		if level == slog.LevelDebug {
			assert.Contains(t, buf.String(), `level=DEBUG msg="redis: discarding bad PubSub connection: EOF" client=go-redis`)
		} else {
			assert.Empty(t, buf.String(), "silent unless debug (-v)")
		}
	}
}

func TestNoServerFailsFast(t *testing.T) {
	// A server that accepts and never answers, and a port nobody listens on.
	for _, addr := range []string{exampletest.Unresponsive(t), exampletest.Refused(t)} {
		start := time.Now()
		err := run(context.Background(), &exampletest.Buffer{}, config{addr: addr, key: "k", channel: "c",
			timeout: time.Second, statusEvery: time.Second})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no Redis answers at "+addr)
		assert.Less(t, time.Since(start), 5*time.Second)
	}
}
