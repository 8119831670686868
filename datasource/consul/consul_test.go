package consul_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource/consul"
	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/internal/kvcheck"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// harness runs each case on its own key, with a Source whose client goes
// through its own integration.Cutter (the Fault), while Put and Delete use
// a client that talks to the server directly.
func harness(t *testing.T, srv *integration.Server) datasourcetest.Harness {
	other := newClient(t, srv.Addr(), "").KV()
	return datasourcetest.Harness{
		Timeout: 20 * time.Second,
		// The client's idle keep-alive connections outlive the Source,
		// and so do the Cutter's goroutines that carry them.
		IgnoreGoroutines: append(slices.Clone(httpConns),
			goleak.IgnoreAnyFunction("github.com/bulwark-go/bulwark/internal/integration.(*proxy).forward"),
			goleak.IgnoreAnyFunction("github.com/bulwark-go/bulwark/internal/integration.(*proxy).pipe")),
		// A session's TTL is at least 10 s, and Consul invalidates it
		// up to twice its TTL after the last renewal.
		RecordExpiry: 25 * time.Second,
		New: func(t *testing.T) datasourcetest.Backend {
			key := "bulwark-test/conformance/" + t.Name()
			cut := integration.NewCutter(t, srv.Addr())
			cli := newClient(t, cut.Addr(0), "")
			at := func(key string) datasourcetest.Backend {
				return datasourcetest.Backend{
					Put: func(ctx context.Context, data []byte) error {
						_, err := other.Put(&api.KVPair{Key: key, Value: data}, (&api.WriteOptions{}).WithContext(ctx))
						return err
					},
					Delete: func(ctx context.Context) error {
						_, err := other.Delete(key, (&api.WriteOptions{}).WithContext(ctx))
						return err
					},
				}
			}
			b := at(key)
			// A short wait: a cut connection is noticed by the Source's
			// next query anyway; this keeps the proxy's idle queries short.
			b.Source = consul.New(cli, key, consul.WithWaitTime(5*time.Second))
			b.Fault = &datasourcetest.Fault{Disconnect: cut.Disconnect, Reconnect: cut.Reconnect,
				Freeze: func(t *testing.T) func() { return srv.Freeze(t) }}
			b.Overlay = func(group string) datasourcetest.Backend { return at(key + ".overlay." + group) }
			return b
		},
	}
}

func TestConformance(t *testing.T) {
	srv := startConsul(t)
	datasourcetest.Run(t, harness(t, srv))
}

func TestReadWrite(t *testing.T) {
	srv := startConsul(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr(), "")
	src := consul.New(cli, "bulwark-test/rw")
	assert.Equal(t, "consul://"+srv.Addr()+"//bulwark-test/rw", src.String())

	kvcheck.ReadWrite(t, ctx, src, kvcheck.Key{
		Revision: func(context.Context) string {
			pair, _, err := cli.KV().Get("bulwark-test/rw", nil)
			require.NoError(t, err)
			require.NotNil(t, pair)
			return revision(pair.ModifyIndex) // the key's ModifyIndex
		},
		Delete: func(context.Context) error {
			_, err := cli.KV().Delete("bulwark-test/rw", nil)
			return err
		},
	})
}

// String names the client's datacenter and namespace, never its token.
func TestString(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.Address, cfg.Datacenter, cfg.Token = "https://10.0.0.1:8501", "dc2", "secret-token"
	cli, err := api.NewClient(cfg)
	require.NoError(t, err)
	assert.Equal(t, "consul://10.0.0.1:8501/dc2/bulwark/flow", consul.New(cli, "bulwark/flow").String())
	cfg.Namespace = "team"
	cli, err = api.NewClient(cfg)
	require.NoError(t, err)
	assert.Equal(t, "consul://10.0.0.1:8501/team@dc2/bulwark/flow", consul.New(cli, "bulwark/flow").String())
}
