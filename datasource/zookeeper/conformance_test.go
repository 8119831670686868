package zookeeper_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/zookeeper"
)

// TestConformance runs the datasource conformance suite against a real
// ZooKeeper. Every case gets its own node and its own connection for the
// Source, dialled through a gate: the Fault cuts that connection off (the
// server keeps running, so Put and Delete, through another connection,
// still work) and lets it reconnect in the same session.
func TestConformance(t *testing.T) {
	srv := startZK(t)
	other := connect(t, srv.Addr(), connConfig{})
	datasourcetest.Run(t, datasourcetest.Harness{
		Timeout: 20 * time.Second,
		New: func(t *testing.T) datasourcetest.Backend {
			path := nodePath(t)
			g := &gate{}
			conn := connect(t, srv.Addr(), connConfig{dialer: g.Dial})
			at := func(path string) datasourcetest.Backend {
				return datasourcetest.Backend{
					Put: func(ctx context.Context, data []byte) error {
						return zkCall(ctx, func() error { return putNode(other, path, data) })
					},
					Delete: func(ctx context.Context) error {
						return zkCall(ctx, func() error { return other.Delete(path, -1) })
					},
				}
			}
			b := at(path)
			return datasourcetest.Backend{
				Source:  zookeeper.New(conn, path),
				Put:     b.Put,
				Delete:  b.Delete,
				Overlay: func(g string) datasourcetest.Backend { return at(path + ".overlay." + g) },
				Fault: &datasourcetest.Fault{
					Disconnect: func(t *testing.T) {
						g.Close()
						require.Eventually(t, func() bool { return conn.State() != zk.StateHasSession },
							10*time.Second, time.Millisecond, "the connection to drop")
					},
					Reconnect: func(t *testing.T) { g.Open() },
					Freeze:    func(t *testing.T) func() { return srv.Freeze(t) },
				},
			}
		},
		IgnoreGoroutines: []goleak.Option{
			// The connections' own goroutines: they belong to the *zk.Conn,
			// which the test closes at cleanup, not to the Source.
			goleak.IgnoreAnyFunction("github.com/go-zookeeper/zk.(*Conn).loop"),
			goleak.IgnoreAnyFunction("github.com/go-zookeeper/zk.(*Conn).sendSetWatches.func1"),
		},
	})
}
