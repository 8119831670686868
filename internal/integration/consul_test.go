package integration

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"
)

func newConsulClient(t *testing.T, addr, token string) *api.KV {
	t.Helper()
	cfg := api.DefaultConfig()
	cfg.Address, cfg.Token = addr, token
	c, err := api.NewClient(cfg)
	require.NoError(t, err)
	return c.KV()
}

// Consul's controls: Stop, Start (dev mode: empty again, indexes reset), Pause, Resume.
func TestConsul(t *testing.T) {
	srv := StartConsul(t)
	t.Logf("consul in %s mode at %s", srv.Mode(), srv.Addr())
	kv := newConsulClient(t, srv.Addr(), "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q := func(d time.Duration) (*api.QueryOptions, context.CancelFunc) {
		c, cc := context.WithTimeout(ctx, d)
		return (&api.QueryOptions{}).WithContext(c), cc
	}
	for i := range 5 {
		_, err := kv.Put(&api.KVPair{Key: "k", Value: []byte{byte('a' + i)}}, nil)
		require.NoError(t, err)
	}
	o, cc := q(2 * time.Second)
	p, meta, err := kv.Get("k", o)
	cc()
	require.NoError(t, err)
	require.Equal(t, "e", string(p.Value))
	before := meta.LastIndex

	require.NoError(t, srv.Stop(ctx))
	o, cc = q(2 * time.Second)
	_, _, err = kv.Get("k", o)
	cc()
	require.Error(t, err, "read from a stopped server")

	require.NoError(t, srv.Start(ctx))
	o, cc = q(5 * time.Second)
	p, meta, err = kv.Get("k", o)
	cc()
	require.NoError(t, err)
	require.Nil(t, p, "dev mode keeps nothing across a restart")
	require.Less(t, meta.LastIndex, before, "the index starts again")

	require.NoError(t, srv.Pause(ctx))
	o, cc = q(700 * time.Millisecond)
	_, _, err = kv.Get("k", o)
	cc()
	require.Error(t, err, "read from a paused server")
	require.NoError(t, srv.Resume(ctx))
	o, cc = q(5 * time.Second)
	_, err = kv.Put(&api.KVPair{Key: "k", Value: []byte("v2")}, (&api.WriteOptions{}).WithContext(o.Context()))
	cc()
	require.NoError(t, err, "write after resume")
}

// With WithConsulACL, the anonymous token reads nothing and the management token all.
func TestConsulACL(t *testing.T) {
	srv := StartConsul(t, WithConsulACL("root"))
	_, err := newConsulClient(t, srv.Addr(), "root").Put(&api.KVPair{Key: "k", Value: []byte("v")}, nil)
	require.NoError(t, err)
	_, _, err = newConsulClient(t, srv.Addr(), "").Get("k", nil)
	require.ErrorContains(t, err, "403")
}
