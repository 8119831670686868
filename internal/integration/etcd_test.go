package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func newEtcdClient(t *testing.T, cfg clientv3.Config) *clientv3.Client {
	t.Helper()
	cfg.DialTimeout = 2 * time.Second
	cfg.Logger = zap.NewNop()
	c, err := clientv3.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestEtcd(t *testing.T) {
	srv := StartEtcd(t)
	t.Logf("etcd in %s mode at %s", srv.Mode(), srv.Addr())
	c := newEtcdClient(t, clientv3.Config{Endpoints: []string{srv.Addr()}})
	lifecycle(t, srv,
		func(ctx context.Context, v string) error { _, err := c.Put(ctx, "/k", v); return err },
		func(ctx context.Context) (string, error) {
			r, err := c.Get(ctx, "/k")
			if err != nil {
				return "", err
			}
			if len(r.Kvs) == 0 {
				return "", nil
			}
			return string(r.Kvs[0].Value), nil
		})
}

func TestEtcdTLS(t *testing.T) {
	srv := StartEtcd(t, WithTLS(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c := newEtcdClient(t, clientv3.Config{Endpoints: []string{srv.Addr()}, TLS: srv.TLS()})
	_, err := c.Put(ctx, "/k", "secret")
	require.NoError(t, err)
	r, err := c.Get(ctx, "/k")
	require.NoError(t, err)
	require.Equal(t, "secret", string(r.Kvs[0].Value))

	plain := newEtcdClient(t, clientv3.Config{Endpoints: []string{srv.Addr()}})
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	defer pcancel()
	_, err = plain.Get(pctx, "/k")
	require.Error(t, err, "a plain-text client is refused")

	noCert := srv.TLS()
	noCert.Certificates = nil
	anon := newEtcdClient(t, clientv3.Config{Endpoints: []string{srv.Addr()}, TLS: noCert})
	actx, acancel := context.WithTimeout(ctx, 2*time.Second)
	defer acancel()
	_, err = anon.Get(actx, "/k")
	require.Error(t, err, "a client without certificate is refused")
}

func TestEtcdAuth(t *testing.T) {
	srv := StartEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	admin := newEtcdClient(t, clientv3.Config{Endpoints: []string{srv.Addr()}})
	_, err := admin.UserAdd(ctx, "root", "rootpw")
	require.NoError(t, err)
	_, err = admin.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	_, err = admin.AuthEnable(ctx)
	require.NoError(t, err)

	// Without credentials: refused.
	_, err = admin.Get(ctx, "/k")
	require.Error(t, err)

	// Wrong password: the client cannot even authenticate.
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	wrong, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Addr()}, Username: "root", Password: "nope",
		DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err == nil {
		t.Cleanup(func() { wrong.Close() })
		_, err = wrong.Get(wctx, "/k")
	}
	require.Error(t, err, "wrong password")

	root := newEtcdClient(t, clientv3.Config{Endpoints: []string{srv.Addr()}, Username: "root", Password: "rootpw"})
	_, err = root.Put(ctx, "/k", "v")
	require.NoError(t, err)
	r, err := root.Get(ctx, "/k")
	require.NoError(t, err)
	require.Equal(t, "v", string(r.Kvs[0].Value))
}
