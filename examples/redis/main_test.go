package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
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

	out := exampletest.Start(t, ctx, 10*time.Second, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, config{addr: srv.Addr(), key: key, channel: channel,
			timeout: 3 * time.Second, statusEvery: 10 * time.Millisecond})
	})
	exampletest.FollowsLiveChanges(t, out, key, func(doc string) {
		t.Helper()
		require.NoError(t, cli.Set(ctx, key, doc, 0).Err())
		require.NoError(t, cli.Publish(ctx, channel, "changed").Err())
	}, func() {
		require.NoError(t, cli.Del(ctx, key).Err())
		require.NoError(t, cli.Publish(ctx, channel, "changed").Err())
	})
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
	exampletest.FailsFast(t, func(addr string) error {
		return run(context.Background(), &exampletest.Buffer{}, config{addr: addr, key: "k", channel: "c",
			timeout: time.Second, statusEvery: time.Second})
	}, func(addr string) string { return "no Redis answers at " + addr })
}
