package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// newZKConn connects and waits for a session.
func newZKConn(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogInfo(false))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c
			}
		case <-timeout:
			t.Fatalf("no zookeeper session at %s", addr)
		}
	}
}

// withTimeout runs a zk call (which takes no context) with a deadline.
func withTimeout[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() { v, err := f(); ch <- res{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func TestZooKeeper(t *testing.T) {
	srv := StartZooKeeper(t)
	t.Logf("zookeeper in %s mode at %s", srv.Mode(), srv.Addr())
	c := newZKConn(t, srv.Addr())
	lifecycle(t, srv,
		func(ctx context.Context, v string) error {
			_, err := withTimeout(ctx, func() (*zk.Stat, error) {
				_, err := c.Create("/k", []byte(v), 0, zk.WorldACL(zk.PermAll))
				if errors.Is(err, zk.ErrNodeExists) {
					return c.Set("/k", []byte(v), -1)
				}
				return nil, err
			})
			return err
		},
		func(ctx context.Context) (string, error) {
			b, err := withTimeout(ctx, func() ([]byte, error) { b, _, err := c.Get("/k"); return b, err })
			return string(b), err
		})
}

func TestZooKeeperDigestACL(t *testing.T) {
	srv := StartZooKeeper(t)
	owner := newZKConn(t, srv.Addr())
	require.NoError(t, owner.AddAuth("digest", []byte("alice:pw")))
	_, err := owner.Create("/secret", []byte("rules"), 0, zk.DigestACL(zk.PermAll, "alice", "pw"))
	require.NoError(t, err)

	stranger := newZKConn(t, srv.Addr())
	_, _, err = stranger.Get("/secret")
	require.ErrorIs(t, err, zk.ErrNoAuth)

	require.NoError(t, stranger.AddAuth("digest", []byte("alice:wrong")))
	_, _, err = stranger.Get("/secret")
	require.ErrorIs(t, err, zk.ErrNoAuth, "wrong password")

	friend := newZKConn(t, srv.Addr())
	require.NoError(t, friend.AddAuth("digest", []byte("alice:pw")))
	data, _, err := friend.Get("/secret")
	require.NoError(t, err)
	require.Equal(t, "rules", string(data))
}
