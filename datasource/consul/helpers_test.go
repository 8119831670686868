package consul_test

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

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

// newClient is a client of the agent at addr with token (none: "").
func newClient(t *testing.T, addr, token string) *api.Client {
	t.Helper()
	cfg := api.DefaultConfig()
	cfg.Address, cfg.Token = addr, token
	c, err := api.NewClient(cfg)
	require.NoError(t, err)
	return c
}

func startConsul(t *testing.T, opts ...integration.Option) *integration.Server {
	t.Helper()
	srv := integration.StartConsul(t, opts...)
	t.Logf("consul in %s mode at %s", srv.Mode(), srv.Addr())
	return srv
}
