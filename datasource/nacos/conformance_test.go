package nacos_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// sdkGoroutines are goroutines that outlive a Source: the nacos SDK's
// (its listen loop's self-notification, its rpc clients' event and health
// loops, the server-push stream, lumberjack's log rotation), gRPC's, and the
// forwarders of the test's integration.Cutter and of the harness' namespace
// forwarder (both integration's proxy), for connections the SDK opens while
// a case runs: they end at the test's cleanup, after the leak check.
var sdkGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/clients/config_client.(*ConfigClient).asyncNotifyListenConfig.func1"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/clients/config_client.(*ConfigClient).startInternal.func1"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*RpcClient).Start.func1"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*RpcClient).Start.func2"),
	goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/v2/common/remote/rpc.(*GrpcClient).bindBiRequestStream.func1"),
	goleak.IgnoreAnyFunction("gopkg.in/natefinch/lumberjack%2ev2.(*Logger).millRun"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc.newClientStreamWithParams.func4"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc.(*addrConn).resetTransportAndUnlock"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/transport.(*http2Client).keepalive"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/transport.(*controlBuffer).get"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/transport.(*http2Client).reader"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/transport.newHTTP2Client.func6"),
	goleak.IgnoreAnyFunction("github.com/bulwark-go/bulwark/integration.(*proxy).forward"),
	goleak.IgnoreAnyFunction("github.com/bulwark-go/bulwark/integration.(*proxy).pipe"),
}

func TestConformance(t *testing.T) {
	srv := integration.StartNacos(t)
	t.Logf("nacos server at %s (%s mode)", srv.Addr(), srv.Mode())
	requireCAS(t, srv)
	if raceEnabled {
		t.Logf("ReconnectResync is skipped under the race detector (no fault hook): %s", sdkReconnectRace)
	}
	n := 0
	datasourcetest.Run(t, datasourcetest.Harness{
		Timeout:          30 * time.Second,
		IgnoreGoroutines: sdkGoroutines,
		// A round takes about 2 s here: the writer waits until a read shows
		// each write (the server shows it at its next refresh, 0.3-1.1 s),
		// so 300 rounds would take 10 minutes a case. 100 rounds each way
		// were run by hand (0 lost); CI runs 40 per case and mode.
		BurstRounds: 40,
		// A beat is a compare-and-set of one config that shows at the
		// next refresh: beats of 200 ms would only contend.
		BeatInterval: 2 * time.Second,
		RecordExpiry: 8 * time.Second, // 3 beats, and the server's refresh

		New: func(t *testing.T) datasourcetest.Backend {
			n++
			dataID := fmt.Sprintf("bulwark-conformance-%d-%d", time.Now().UnixNano(), n)
			const group = "SENTINEL_GROUP"
			cut := newCutter(t, srv)
			src := nacos.New(newClient(t, cut.Addr(0), ""), dataID, group)
			w := newWriter(t, srv.Addr(), "", dataID, group)
			// Connect now, so that the goroutines of the connection are
			// there before the leak check takes its baseline.
			_, err := src.Read(testCtx(t))
			require.NoError(t, err)
			at := func(w writer) datasourcetest.Backend {
				return datasourcetest.Backend{
					Put:    func(ctx context.Context, b []byte) error { return w.put(ctx, string(b)) },
					Delete: func(ctx context.Context) error { return w.del(ctx) },
				}
			}
			b := at(w)
			b.Source = src
			b.Overlay = func(g string) datasourcetest.Backend {
				return at(newWriter(t, srv.Addr(), "", dataID+".overlay."+g, group))
			}
			if !raceEnabled {
				b.Fault = &datasourcetest.Fault{Disconnect: disconnectWait(cut, src), Reconnect: cut.Reconnect}
			}
			return b
		},
	})
}
