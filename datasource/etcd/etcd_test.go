package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/etcd"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/internal/kvcheck"
	sizelimit "github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// harness runs each case on its own key, with a Source whose client goes
// through its own integration.Cutter (the Fault), while Put and Delete use a client
// that talks to the server directly.
func harness(t *testing.T, srv *integration.Server) datasourcetest.Harness {
	other := newClient(t, srv.Addr(), withTLS(srv.TLS()))
	return datasourcetest.Harness{
		Timeout: 20 * time.Second,
		// The lease of a 200 ms beat is raised to the server's minimum TTL
		// (1.5 s here, rounded up), checked every 500 ms.
		RecordExpiry: 5 * time.Second,
		New: func(t *testing.T) datasourcetest.Backend {
			key := "/bulwark-test/conformance/" + t.Name()
			cut := integration.NewCutter(t, srv.Addr())
			cli := newClient(t, cut.Addr(0), withTLS(srv.TLS()))
			// Connect now: the client's connection goroutines are the
			// caller's and outlive the Source (CloseWaitsNoLeak).
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			_, err := cli.Get(ctx, "/bulwark-test/warm-up")
			require.NoError(t, err)
			at := func(key string) datasourcetest.Backend {
				return datasourcetest.Backend{
					Put: func(ctx context.Context, data []byte) error {
						_, err := other.Put(ctx, key, string(data))
						return err
					},
					Delete: func(ctx context.Context) error {
						_, err := other.Delete(ctx, key)
						return err
					},
				}
			}
			b := at(key)
			b.Source = etcd.New(cli, key)
			b.Fault = &datasourcetest.Fault{Disconnect: cut.Disconnect, Reconnect: cut.Reconnect,
				Freeze: func(t *testing.T) func() { return srv.Freeze(t) }}
			b.Overlay = func(group string) datasourcetest.Backend { return at(key + ".overlay." + group) }
			return b
		},
	}
}

func TestConformance(t *testing.T) {
	srv := startEtcd(t)
	datasourcetest.Run(t, harness(t, srv))
}

// The same suite over mutual TLS, with certificates made by the test.
func TestConformanceTLS(t *testing.T) {
	srv := startEtcd(t, integration.WithTLS(nil))
	require.NotNil(t, srv.TLS())
	datasourcetest.Run(t, harness(t, srv))
}

func TestReadWrite(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr())
	src := etcd.New(cli, "/bulwark-test/rw")
	assert.Equal(t, "etcd://"+srv.Addr()+"//bulwark-test/rw", src.String())

	kvcheck.ReadWrite(t, ctx, src, kvcheck.Key{
		Revision: func(ctx context.Context) string {
			resp, err := cli.Get(ctx, "/bulwark-test/rw")
			require.NoError(t, err)
			require.Len(t, resp.Kvs, 1)
			return fmt.Sprint(resp.Kvs[0].ModRevision) // the key's mod revision
		},
		Delete: func(ctx context.Context) error {
			_, err := cli.Delete(ctx, "/bulwark-test/rw")
			return err
		},
	})
	_, err := cli.Get(ctx, "/bulwark-test/rw")
	require.NoError(t, err, "Close leaves the client open")
}

// A snapshot that did not come from this Source's last read: Watch reads
// the key, reports the difference, and watches from there.
func TestWatchForeignSnapshot(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr())
	const key = "/bulwark-test/foreign"
	put, err := cli.Put(ctx, key, "v1")
	require.NoError(t, err)

	src := etcd.New(cli, key)
	wctx, cancel := context.WithCancel(ctx)
	hints := make(chan datasource.Snapshot, 16)
	done := make(chan error, 1)
	go func() {
		done <- src.Watch(wctx, datasource.Snapshot{Missing: true}, func(s datasource.Snapshot) { hints <- s })
	}()
	select {
	case h := <-hints:
		// A hint: the revision, without the value (Watch does not fetch it).
		assert.Equal(t, fmt.Sprint(put.Header.Revision), h.Revision, "the difference with from is reported")
		assert.False(t, h.Missing)
	case <-ctx.Done():
		t.Fatal("no hint for a snapshot that differs")
	}
	_, err = cli.Put(ctx, key, "v2")
	require.NoError(t, err)
	select {
	case h := <-hints:
		assert.Equal(t, "v2", string(h.Data))
	case <-ctx.Done():
		t.Fatal("no hint for a put")
	}
	_, err = cli.Delete(ctx, key)
	require.NoError(t, err)
	select {
	case h := <-hints:
		assert.True(t, h.Missing, "a delete is a missing document")
	case <-ctx.Done():
		t.Fatal("no hint for a delete")
	}
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after its context was canceled")
	}
}

// Watching from a read whose store revision was compacted since: Watch
// returns an error wrapping rpctypes.ErrCompacted at once.
func TestWatchCompacted(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr())
	const key = "/bulwark-test/compacted"
	_, err := cli.Put(ctx, key, "v1")
	require.NoError(t, err)
	src := etcd.New(cli, key)
	from, err := src.Read(ctx)
	require.NoError(t, err)

	var last int64
	for i := range 5 {
		resp, err := cli.Put(ctx, key, fmt.Sprintf("v%d", i+2))
		require.NoError(t, err)
		last = resp.Header.Revision
	}
	_, err = cli.Compact(ctx, last, clientv3.WithCompactPhysical())
	require.NoError(t, err)

	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = src.Watch(wctx, from, func(datasource.Snapshot) {})
	require.ErrorIs(t, err, rpctypes.ErrCompacted)
	assert.True(t, strings.HasPrefix(err.Error(), "etcd: watch "), err.Error())
}

// The datasource over a client that was cut off while the key changed and
// the history was compacted: when the client comes back, its watch resumes
// from a compacted revision, breaks, and the Readable reads again and
// converges (reconciling is off: only the resync can deliver).
func TestCompactionResync(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	other := newClient(t, srv.Addr())
	cut := integration.NewCutter(t, srv.Addr())
	cli := newClient(t, cut.Addr(0))
	const key = "/bulwark-test/compaction-resync"
	_, err := other.Put(ctx, key, `[{"resource":"a","count":1}]`)
	require.NoError(t, err)

	rig := flowrig.Start(t, etcd.New(cli, key), datasource.WithReconcileInterval(time.Hour))
	rig.WaitCount(t, "a", 1)
	rig.WaitWatching(t)

	cut.Disconnect(t)
	var last int64
	for i := 2; i <= 6; i++ {
		resp, err := other.Put(ctx, key, fmt.Sprintf(`[{"resource":"a","count":%d}]`, i))
		require.NoError(t, err)
		last = resp.Header.Revision
	}
	_, err = other.Compact(ctx, last, clientv3.WithCompactPhysical())
	require.NoError(t, err)
	cut.Reconnect(t)

	rig.WaitCount(t, "a", 6)
	st := rig.DS.Status()
	require.ErrorIs(t, st.WatchErr, rpctypes.ErrCompacted, "the watch broke on the compaction")
	t.Logf("watch broke with: %v", st.WatchErr)
	rig.WaitWatching(t)

	// And it follows changes again, from the new read.
	_, err = other.Put(ctx, key, `[{"resource":"a","count":7}]`)
	require.NoError(t, err)
	rig.WaitCount(t, "a", 7)
}

// User/password authentication comes from the client: a Source over an
// authenticated client reads and writes; a client whose password is wrong
// fails, and Status says why.
func TestAuth(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	admin := newClient(t, srv.Addr())
	const key = "/bulwark/order-service/test/flow"
	_, err := admin.Put(ctx, key, `[{"resource":"a","count":5}]`)
	require.NoError(t, err)
	_, err = admin.UserAdd(ctx, "root", "rootpw")
	require.NoError(t, err)
	_, err = admin.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	_, err = admin.RoleAdd(ctx, "rules")
	require.NoError(t, err)
	_, err = admin.RoleGrantPermission(ctx, "rules", "/bulwark/", clientv3.GetPrefixRangeEnd("/bulwark/"), clientv3.PermissionType(clientv3.PermReadWrite))
	require.NoError(t, err)
	_, err = admin.UserAdd(ctx, "svc", "svcpw")
	require.NoError(t, err)
	_, err = admin.UserGrantRole(ctx, "svc", "rules")
	require.NoError(t, err)
	// Made before auth is on, so they exist: the client checks the password
	// when it is created, and again whenever it needs a token.
	good := newClient(t, srv.Addr(), withUser("svc", "svcpw"))
	wrong := newClient(t, srv.Addr(), withUser("svc", "not-the-password"))
	_, err = admin.AuthEnable(ctx)
	require.NoError(t, err)

	// Authenticating costs the server a bcrypt comparison (seconds under -race).
	slow := datasource.WithReadTimeout(30 * time.Second)
	rig := flowrig.Start(t, etcd.New(good, key), slow)
	rig.WaitCount(t, "a", 5)
	w := datasource.NewWritable(etcd.New(good, key), converter.FlowRules(), datasource.WaitApplied(rig.DS, 10*time.Second))
	require.NoError(t, w.Update(ctx, flowrig.SetCount("a", 6)))
	rig.WaitCount(t, "a", 6)

	bad := datasource.NewReadable(etcd.New(wrong, key), converter.FlowRules(), slow, datasource.WithBackoff(50*time.Millisecond, time.Second))
	t.Cleanup(func() { _ = bad.Close() })
	err = bad.Start(ctx)
	require.ErrorIs(t, err, rpctypes.ErrAuthFailed)
	st := bad.Status()
	require.ErrorIs(t, st.Err, rpctypes.ErrAuthFailed)
	assert.ErrorContains(t, st.Err, "etcd: get "+key)
	assert.ErrorContains(t, st.Err, "authentication failed")
	assert.GreaterOrEqual(t, st.Failures, 1)
	t.Logf("status with a wrong password: %v", st.Err)

	// Outside a role's permission: a clear error too.
	_, err = admin.Put(ctx, "/elsewhere", "x") // admin has no token: refused
	require.Error(t, err)
	other := datasource.NewReadable(etcd.New(good, "/elsewhere/flow"), converter.FlowRules(), slow)
	t.Cleanup(func() { _ = other.Close() })
	err = other.Start(ctx)
	require.ErrorIs(t, err, rpctypes.ErrPermissionDenied)

	// After auth is on, a wrong password fails when the client is made.
	_, err = clientv3.New(clientv3.Config{Endpoints: []string{srv.Addr()}, Username: "svc", Password: "nope",
		DialTimeout: 30 * time.Second, Logger: zap.NewNop()})
	require.True(t, errors.Is(err, rpctypes.ErrAuthFailed), "clientv3.New: %v", err)
}

// A key prefix set on the client (namespace.NewKV and NewWatcher) applies
// to reads, watches and writes.
func TestNamespace(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	raw := newClient(t, srv.Addr())
	tenant := newClient(t, srv.Addr())
	tenant.KV = namespace.NewKV(tenant.KV, "/tenant-a")
	tenant.Watcher = namespace.NewWatcher(tenant.Watcher, "/tenant-a")

	_, err := raw.Put(ctx, "/tenant-a/flow", flowrig.Doc("a", 1))
	require.NoError(t, err)
	_, err = raw.Put(ctx, "/flow", flowrig.Doc("a", 99)) // outside the namespace
	require.NoError(t, err)
	rig := flowrig.Start(t, etcd.New(tenant, "/flow"))
	rig.WaitCount(t, "a", 1)
	_, err = raw.Put(ctx, "/tenant-a/flow", flowrig.Doc("a", 2))
	require.NoError(t, err)
	rig.WaitCount(t, "a", 2)

	w := datasource.NewWritable(etcd.New(tenant, "/flow"), converter.FlowRules(), datasource.WaitApplied(rig.DS, 10*time.Second))
	require.NoError(t, w.Update(ctx, flowrig.SetCount("a", 3)))
	assert.Equal(t, float64(3), rig.Count("a"))
	resp, err := raw.Get(ctx, "/tenant-a/flow")
	require.NoError(t, err)
	assert.Contains(t, string(resp.Kvs[0].Value), `"count":3`)
	resp, err = raw.Get(ctx, "/flow")
	require.NoError(t, err)
	assert.Contains(t, string(resp.Kvs[0].Value), `"count":99`, "outside the namespace: untouched")
}

// WithNamespace puts the key under a prefix, for reads, watches and
// writes, and the Source's name holds it.
func TestWithNamespace(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	raw := newClient(t, srv.Addr())
	cli := newClient(t, srv.Addr())

	_, err := raw.Put(ctx, "/tenant-b/flow", flowrig.Doc("a", 1))
	require.NoError(t, err)
	_, err = raw.Put(ctx, "/flow", flowrig.Doc("a", 99)) // outside the namespace
	require.NoError(t, err)
	src := etcd.New(cli, "/flow", etcd.WithNamespace("/tenant-b"))
	assert.Equal(t, "etcd://"+srv.Addr()+"//tenant-b/flow", src.String())
	assert.NotEqual(t, etcd.New(cli, "/flow").String(), src.String())

	tenant := flowrig.Start(t, src)
	tenant.WaitCount(t, "a", 1)
	_, err = raw.Put(ctx, "/tenant-b/flow", flowrig.Doc("a", 2))
	require.NoError(t, err)
	tenant.WaitCount(t, "a", 2) // watched under the prefix

	w := datasource.NewWritable(etcd.New(cli, "/flow", etcd.WithNamespace("/tenant-b")), converter.FlowRules(),
		datasource.WaitApplied(tenant.DS, 10*time.Second))
	require.NoError(t, w.Update(ctx, flowrig.SetCount("a", 3)))
	resp, err := raw.Get(ctx, "/tenant-b/flow")
	require.NoError(t, err)
	assert.Contains(t, string(resp.Kvs[0].Value), `"count":3`)
	resp, err = raw.Get(ctx, "/flow")
	require.NoError(t, err)
	assert.Contains(t, string(resp.Kvs[0].Value), `"count":99`, "outside the namespace: untouched")
}

// The name identifies the document: servers, prefix and key.
func TestString(t *testing.T) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{"https://10.0.0.2:2379", "10.0.0.1:2379"},
		Logger:    zap.NewNop(),
	})
	require.NoError(t, err) // no DialTimeout: it connects lazily, no server needed
	t.Cleanup(func() { _ = cli.Close() })
	src := etcd.New(cli, "/bulwark/flow")
	assert.Equal(t, "etcd://10.0.0.1:2379,10.0.0.2:2379//bulwark/flow", src.String())
	assert.Equal(t, "etcd://10.0.0.1:2379,10.0.0.2:2379/tenant/bulwark/flow",
		etcd.New(cli, "bulwark/flow", etcd.WithNamespace("tenant/")).String())
}

// A value larger than the read limit is refused, one at the limit is read.
func TestReadLimit(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr())
	const key = "/bulwark-test/limit"
	src := etcd.New(cli, key)
	const limit = 100
	_, err := cli.Put(ctx, key, strings.Repeat("x", limit))
	require.NoError(t, err)
	snap, err := src.Read(sizelimit.With(ctx, limit))
	require.NoError(t, err)
	assert.Len(t, snap.Data, limit)

	_, err = cli.Put(ctx, key, strings.Repeat("x", limit+1))
	require.NoError(t, err)
	_, err = src.Read(sizelimit.With(ctx, limit))
	require.ErrorIs(t, err, datasource.ErrTooLarge)
	assert.ErrorContains(t, err, key)
	t.Logf("over the limit: %v", err)
}
