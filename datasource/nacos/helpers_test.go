package nacos_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// sdkDir holds the SDK's logs and caches for the whole test binary: its
// logger is process-wide and outlives the test that configured it, so a
// per-test temporary directory could be removed under it.
var sdkDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bulwark-nacos-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sdkDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var clientSeq atomic.Int64

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newClient returns a config client of the server at addr (its HTTP address;
// the SDK dials gRPC on port + 1000) in namespace ns, quiet, with its cache
// in sdkDir and the local snapshot off (a GetConfig during an outage fails
// instead of answering from disk). It is closed at cleanup.
func newClient(t *testing.T, addr, ns string) config_client.IConfigClient {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	p, err := strconv.ParseUint(port, 10, 64)
	require.NoError(t, err)
	cc := constant.NewClientConfig(
		constant.WithNamespaceId(ns),
		constant.WithTimeoutMs(3000),
		constant.WithNotLoadCacheAtStart(true),
		constant.WithDisableUseSnapShot(true),
		constant.WithCacheDir(filepath.Join(sdkDir, "cache", strconv.FormatInt(clientSeq.Add(1), 10))),
		constant.WithLogDir(filepath.Join(sdkDir, "log")),
		constant.WithLogLevel("error"),
	)
	cli, err := clients.NewConfigClient(vo.NacosClientParam{
		ClientConfig:  cc,
		ServerConfigs: []constant.ServerConfig{*constant.NewServerConfig(host, p)},
	})
	require.NoError(t, err, "nacos config client")
	t.Cleanup(cli.CloseClient)
	return cli
}

// writer publishes and deletes the way another client (Sentinel's dashboard,
// a Java service) would: no compare-and-set. Each call returns once a read
// sees its result, because the server is eventually consistent (about a
// second) and a test must not read the state before its own write. It reads
// over the v1 HTTP API: the SDK limits GetConfig to 5 a second per config
// for the whole process, and polling through it would starve the Source
// under test.
type writer struct {
	cli           config_client.IConfigClient
	addr, ns      string // server HTTP address and namespace of cli
	dataID, group string
}

func newWriter(t *testing.T, addr, ns, dataID, group string) writer {
	return writer{cli: newClient(t, addr, ns), addr: addr, ns: ns, dataID: dataID, group: group}
}

// put publishes content, retrying for a while when the client is not
// connected (after a server restart it reconnects by itself, in seconds).
func (w writer) put(ctx context.Context, content string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := w.cli.PublishConfig(publishParam(w.dataID, w.group, content))
		if err == nil && ok {
			return w.await(ctx, content)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("publish %s/%s: %v, %w", w.group, w.dataID, ok, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w writer) del(ctx context.Context) error {
	ok, err := w.cli.DeleteConfig(vo.ConfigParam{DataId: w.dataID, Group: w.group})
	if err != nil || !ok {
		return fmt.Errorf("delete %s/%s: %v, %w", w.group, w.dataID, ok, err)
	}
	return w.await(ctx, "")
}

// await polls the config until it reads want ("" = absent).
func (w writer) await(ctx context.Context, want string) error {
	deadline := time.Now().Add(30 * time.Second)
	var got string
	var err error
	for time.Now().Before(deadline) {
		got, err = w.get(ctx)
		if err == nil && got == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s/%s reads %q (err %v) 30s after the write, want %q", w.group, w.dataID, got, err, want)
}

// get reads the config with GET /nacos/v1/cs/configs: 200 and the content,
// or 404 when it does not exist.
func (w writer) get(ctx context.Context) (string, error) {
	q := url.Values{"dataId": {w.dataID}, "group": {w.group}}
	if w.ns != "" {
		q.Set("tenant", w.ns)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.addr+"/nacos/v1/cs/configs?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return string(body), nil
	case http.StatusNotFound:
		return "", nil
	default:
		return "", fmt.Errorf("GET config: %s: %s", resp.Status, body)
	}
}

var httpClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

var (
	casOnce   sync.Once
	casWorks  bool
	casReason string
)

// requireCAS fails the test unless the server stores a publish whose CasMd5
// is the md5 of the current content. Real Nacos does. PolarisMesh v1.18.1
// as released does not: its Nacos API layer drops CasMd5 when it converts
// the request, so it refuses every compare-and-set update of an existing
// config as a conflict (creating works). internal/integration/tools/polaris/build.sh
// applies the fix at build time; this guard makes a server built without it
// fail loudly, instead of the Sink cases failing with bare conflicts (or
// being skipped, which is not a pass).
func requireCAS(t *testing.T, srv *integration.Server) {
	t.Helper()
	casOnce.Do(func() {
		cli := newClient(t, srv.Addr(), "")
		w := writer{cli: cli, addr: srv.Addr(), dataID: fmt.Sprintf("bulwark-cas-probe-%d", time.Now().UnixNano()), group: "BULWARK_PROBE"}
		if err := w.put(testCtx(t), "probe-1"); err != nil {
			casReason = fmt.Sprintf("the probe could not publish: %v", err)
			return
		}
		ok, err := cli.PublishConfig(vo.ConfigParam{DataId: w.dataID, Group: w.group, Content: "probe-2", CasMd5: md5Hex("probe-1")})
		casWorks = ok && err == nil
		casReason = fmt.Sprintf("a publish with CasMd5 = md5 of the current content answered (%v, %v)", ok, err)
		_, _ = cli.DeleteConfig(vo.ConfigParam{DataId: w.dataID, Group: w.group})
	})
	require.True(t, casWorks, "the Nacos server does not honour CasMd5: %s; build PolarisMesh with "+
		"internal/integration/tools/polaris/build.sh (it applies the CasMd5 fix), or use real Nacos", casReason)
}

// newCutter returns a Cutter in front of srv's HTTP and gRPC ports (P and
// P+1000, both dialed by the SDK) that cuts off the client given cut.Addr(0)
// while other clients talk to the server directly.
func newCutter(t *testing.T, srv *integration.Server) *integration.Cutter {
	t.Helper()
	grpcAddr, err := integration.NacosGRPCAddr(srv.Addr())
	require.NoError(t, err)
	return integration.NewCutterSameOffsets(t, srv.Addr(), grpcAddr)
}

// disconnectWait returns a Fault's Disconnect for src's connection through
// cut: it returns once a read through src fails.
func disconnectWait(cut *integration.Cutter, src *nacos.Source) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		cut.Disconnect(t)
		require.Eventually(t, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := src.Read(ctx)
			return err != nil
		}, 20*time.Second, 10*time.Millisecond, "reads through the cut-off client still succeed")
	}
}

// sdkReconnectRace says why tests in which the SDK reconnects cannot run
// under the race detector.
const sdkReconnectRace = "nacos-sdk-go v2.3.2 has a data race when its gRPC client reconnects " +
	"(RpcClient.notifyConnectionEvent reads currentConnection while reconnect writes it; " +
	"nacos-group/nacos-sdk-go issues 741 and 905, not fixed upstream), which fails any test under -race " +
	"in which a client reconnects; run this test without -race"

// newRig starts a flowrig.Rig over src with the timings a Nacos Source
// needs: reads bounded by 5 s and the recommended reconcile interval.
func newRig(t *testing.T, src *nacos.Source, opts ...datasource.Option) *flowrig.Rig {
	t.Helper()
	return flowrig.Start(t, src, append([]datasource.Option{
		datasource.WithReadTimeout(5 * time.Second),
		datasource.WithReconcileInterval(nacos.ReconcileInterval),
	}, opts...)...)
}

func publishParam(dataID, group, content string) vo.ConfigParam {
	return vo.ConfigParam{DataId: dataID, Group: group, Content: content, Type: "json"}
}
