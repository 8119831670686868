package nacos_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/integration"
)

// sdkGoroutines are goroutines the nacos SDK starts and that outlive a
// Source: the listener callbacks it starts per change, its listen loop's
// self-notification, and the gRPC machinery of its clients.
var sdkGoroutines = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/nacos-group/nacos-sdk-go/v2/clients/config_client.(*ConfigClient).asyncNotifyListenConfig.func1"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*RpcClient).Start.func1"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*RpcClient).Start.func2"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*GrpcClient).bindRequestStream.func1"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc.(*addrConn).resetTransportAndUnlock"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/transport.(*http2Client).keepalive"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/transport.(*controlBuffer).get"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/transport.(*http2Client).reader"),
}

// readOnly hides the Sink of a Source (for servers that cannot compare and set).
type readOnly struct{ s *nacos.Source }

func (r readOnly) Read(ctx context.Context) (datasource.Snapshot, error) { return r.s.Read(ctx) }
func (r readOnly) Close() error                                          { return r.s.Close() }
func (r readOnly) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	return r.s.Watch(ctx, from, changed)
}

var _ datasource.Watcher = readOnly{}

func TestConformance(t *testing.T) {
	srv := integration.StartNacos(t)
	t.Logf("nacos server at %s (%s mode)", srv.Addr(), srv.Mode())
	other := newClient(t, srv.Addr(), "")
	cas, why := serverHonoursCAS(t, srv)
	if !cas {
		t.Logf("THE SERVER DOES NOT HONOUR CasMd5 (%s): the Sink cases of the suite are skipped "+
			"(they are not passes); TestWriteCAS checks what can be checked", why)
	}
	n := 0
	datasourcetest.Run(t, datasourcetest.Harness{
		Timeout:          30 * time.Second,
		IgnoreGoroutines: sdkGoroutines,
		New: func(t *testing.T) datasourcetest.Backend {
			n++
			dataID := fmt.Sprintf("bulwark-conformance-%d-%d", time.Now().UnixNano(), n)
			const group = "SENTINEL_GROUP"
			cut := newCutter(t, srv.Addr())
			src := nacos.New(newClient(t, cut.Addr(), ""), dataID, group)
			w := writer{cli: other, dataID: dataID, group: group}
			disconnect, reconnect := cut.fault(src)
			var s datasource.Source = src
			if !cas {
				s = readOnly{src}
			}
			return datasourcetest.Backend{
				Source: s,
				Put:    func(ctx context.Context, b []byte) error { return w.put(ctx, string(b)) },
				Delete: func(ctx context.Context) error { return w.del(ctx) },
				Fault:  &datasourcetest.Fault{Disconnect: disconnect, Reconnect: reconnect},
			}
		},
	})
}
