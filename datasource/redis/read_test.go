package redis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
	sizelimit "github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// A document over the read limit is refused, one at the limit is read;
// the size limit changes nothing else about reading.
func TestReadLimit(t *testing.T) {
	srv := integration.StartRedis(t)
	ctx := testCtx(t, 60*time.Second)
	key, channel := keyFor(t)
	cli := newClient(t, srv, nil)
	src := redis.New(cli, key, channel)
	const limit = 100
	limited := sizelimit.With(ctx, limit)

	snap, err := src.Read(limited)
	require.NoError(t, err)
	assert.True(t, snap.Missing, "a missing key")

	require.NoError(t, cli.Set(ctx, key, "", 0).Err())
	snap, err = src.Read(limited)
	require.NoError(t, err)
	assert.False(t, snap.Missing, "an empty string is a document")
	assert.Empty(t, snap.Data)

	at := strings.Repeat("x", limit)
	require.NoError(t, cli.Set(ctx, key, at, 0).Err())
	snap, err = src.Read(limited)
	require.NoError(t, err)
	assert.Equal(t, at, string(snap.Data))
	assert.Equal(t, contentrev.Of([]byte(at)), snap.Revision)

	require.NoError(t, cli.Set(ctx, key, at+"x", 0).Err())
	_, err = src.Read(limited)
	require.ErrorIs(t, err, datasource.ErrTooLarge)
	assert.ErrorContains(t, err, key)
	assert.ErrorContains(t, err, "101 bytes")
	t.Logf("over the limit: %v", err)

	snap, err = src.Read(sizelimit.With(ctx, 0))
	require.NoError(t, err, "no limit")
	assert.Len(t, snap.Data, limit+1)

	require.NoError(t, cli.Del(ctx, key).Err())
	require.NoError(t, cli.RPush(ctx, key, "x").Err())
	_, err = src.Read(limited)
	require.Error(t, err, "a key of another type")
	assert.Contains(t, err.Error(), "WRONGTYPE")
}

// Read returns when its context ends, although go-redis would wait for the
// server's answer until its ReadTimeout (defect 3: a blocked read must not
// block Close); Close waits for the abandoned command only up to its bound.
func TestReadHonoursContext(t *testing.T) {
	srv := integration.StartRedis(t)
	ctx := testCtx(t, 60*time.Second)
	key, channel := keyFor(t)
	cli := newClient(t, srv, &goredis.Options{ReadTimeout: time.Minute, MaxRetries: -1})
	require.NoError(t, cli.Ping(ctx).Err()) // a pooled connection, so the read waits on the server
	src := redis.New(cli, key, channel, redis.WithCloseWait(10*time.Millisecond))
	require.NoError(t, srv.Pause(ctx))
	t.Cleanup(func() { _ = srv.Resume(context.Background()) })

	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := src.Read(rctx); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-ctx.Done():
		t.Fatal("Read did not return when its context ended")
	}
	err := src.Close()
	require.Error(t, err, "the command is still waiting for the frozen server")
	assert.ErrorContains(t, err, "still waiting")
	_, err = src.Read(ctx)
	require.ErrorIs(t, err, datasource.ErrClosed)
	require.NoError(t, srv.Resume(ctx))
}

func TestString(t *testing.T) {
	plain := goredis.NewClient(&goredis.Options{Addr: "10.0.0.1:6379", DB: 3, Username: "svc", Password: "secret"})
	t.Cleanup(func() { _ = plain.Close() })
	src := redis.New(plain, "bulwark:flow", "bulwark:flow:changed")
	assert.Equal(t, "redis://10.0.0.1:6379/3/bulwark:flow", src.String())
	assert.NotContains(t, src.String(), "secret")
	other := goredis.NewClient(&goredis.Options{Addr: "10.0.0.1:6379", DB: 4})
	t.Cleanup(func() { _ = other.Close() })
	assert.NotEqual(t, src.String(), redis.New(other, "bulwark:flow", "c").String(), "another database")

	cluster := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"10.0.0.3:7000", "10.0.0.2:7000"}})
	t.Cleanup(func() { _ = cluster.Close() })
	assert.Equal(t, "redis://10.0.0.2:7000,10.0.0.3:7000/0/{flow}", redis.New(cluster, "{flow}", "{flow}:c").String())

	ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"b": "10.0.0.5:6379", "a": "10.0.0.4:6379"}, DB: 1})
	t.Cleanup(func() { _ = ring.Close() })
	assert.Equal(t, "redis://10.0.0.4:6379,10.0.0.5:6379/1/k", redis.New(ring, "k", "c").String())

	failover := goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{"10.0.0.6:26379"}, DB: 2})
	t.Cleanup(func() { _ = failover.Close() })
	assert.Equal(t, "redis:///2/k", redis.New(failover, "k", "c").String(), "a failover client tells no address")
	assert.Equal(t, "redis://mymaster@10.0.0.6:26379/2/k",
		redis.New(failover, "k", "c", redis.WithServers("mymaster@10.0.0.6:26379")).String())
}
