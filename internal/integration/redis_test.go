package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newRedisClient(t *testing.T, opt *redis.Options) *redis.Client {
	opt.DialTimeout = time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = -1
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRedis(t *testing.T) {
	srv := StartRedis(t)
	t.Logf("redis in %s mode at %s", srv.Mode(), srv.Addr())
	c := newRedisClient(t, &redis.Options{Addr: srv.Addr()})
	lifecycle(t, srv,
		func(ctx context.Context, v string) error { return c.Set(ctx, "k", v, 0).Err() },
		func(ctx context.Context) (string, error) { return c.Get(ctx, "k").Result() })
}

func TestRedisTLS(t *testing.T) {
	srv := StartRedis(t, WithTLS(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c := newRedisClient(t, &redis.Options{Addr: srv.Addr(), TLSConfig: srv.TLS()})
	require.NoError(t, c.Set(ctx, "k", "secret", 0).Err())
	require.Equal(t, "secret", c.Get(ctx, "k").Val())

	plain := newRedisClient(t, &redis.Options{Addr: srv.Addr()})
	require.Error(t, plain.Ping(ctx).Err(), "a plain-text client is refused")

	noCert := srv.TLS()
	noCert.Certificates = nil
	anon := newRedisClient(t, &redis.Options{Addr: srv.Addr(), TLSConfig: noCert})
	require.Error(t, anon.Ping(ctx).Err(), "a client without certificate is refused")
}

func TestRedisACL(t *testing.T) {
	srv := StartRedis(t, WithRedisArgs(
		"--user", "default", "off",
		"--user", "alice", "on", ">pw", "~*", "&*", "+@all",
	))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	alice := newRedisClient(t, &redis.Options{Addr: srv.Addr(), Username: "alice", Password: "pw"})
	require.NoError(t, alice.Set(ctx, "k", "v", 0).Err())
	require.Equal(t, "v", alice.Get(ctx, "k").Val())

	wrong := newRedisClient(t, &redis.Options{Addr: srv.Addr(), Username: "alice", Password: "nope"})
	require.Error(t, wrong.Get(ctx, "k").Err(), "wrong password")

	anon := newRedisClient(t, &redis.Options{Addr: srv.Addr()})
	require.Error(t, anon.Get(ctx, "k").Err(), "the default user is off")
}

func TestRedisCluster(t *testing.T) {
	c := StartRedisCluster(t)
	t.Logf("redis cluster in %s mode at %v", c.Nodes[0].Mode(), c.Addrs())
	require.Len(t, c.Addrs(), 3)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer client.Close()
	ctx := context.Background()
	// Keys spread over the slots, so over the three masters.
	for i := range 30 {
		require.NoError(t, client.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err())
	}
	var masters atomic.Int32 // ForEachMaster runs fn on each master concurrently
	require.NoError(t, client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		if n > 0 {
			masters.Add(1)
		}
		return err
	}))
	assert.Equal(t, int32(3), masters.Load(), "every master holds some of the keys")
}

// A node's controls act on that node only: paused, it answers nothing while the others
// do; stopped, it refuses; started again, it rejoins and the cluster serves every slot.
func TestRedisClusterNodeControls(t *testing.T) {
	c := StartRedisCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := c.Nodes[1]
	direct := newRedisClient(t, &redis.Options{Addr: node.Addr()})
	other := newRedisClient(t, &redis.Options{Addr: c.Nodes[0].Addr()})
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 500*time.Millisecond) }

	require.NoError(t, node.Pause(ctx))
	sc, scancel := short()
	assert.Error(t, direct.Ping(sc).Err(), "a paused node answers nothing")
	scancel()
	require.NoError(t, other.Ping(ctx).Err(), "the other nodes run")
	require.NoError(t, node.Resume(ctx))
	require.NoError(t, direct.Ping(ctx).Err())

	require.NoError(t, node.Stop(ctx))
	sc, scancel = short()
	assert.Error(t, direct.Ping(sc).Err(), "a stopped node refuses")
	scancel()
	require.NoError(t, other.Ping(ctx).Err())
	require.NoError(t, node.Start(ctx))
	require.NoError(t, direct.Ping(ctx).Err())

	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRetries: -1})
	defer client.Close()
	require.Eventually(t, func() bool {
		for i := range 30 {
			sc, scancel := short()
			err := client.Set(sc, fmt.Sprintf("k%d", i), i, 0).Err()
			scancel()
			if err != nil {
				return false
			}
		}
		return true
	}, time.Minute, 100*time.Millisecond, "the cluster serves every slot again")
}
