package etcd_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/bulwark-go/bulwark/internal/integration"
)

// testTimeout bounds every test's context.
const testTimeout = 2 * time.Minute

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

type clientOpt func(*clientv3.Config)

func withTLS(c *tls.Config) clientOpt { return func(cfg *clientv3.Config) { cfg.TLS = c } }
func withUser(user, pw string) clientOpt {
	return func(cfg *clientv3.Config) { cfg.Username, cfg.Password = user, pw }
}

// newClient connects to addr; it never syncs endpoints (see integration.StartEtcd).
func newClient(t *testing.T, addr string, opts ...clientOpt) *clientv3.Client {
	t.Helper()
	cfg := clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := clientv3.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func startEtcd(t *testing.T, opts ...integration.Option) *integration.Server {
	t.Helper()
	srv := integration.StartEtcd(t, opts...)
	t.Logf("etcd in %s mode at %s", srv.Mode(), srv.Addr())
	return srv
}
