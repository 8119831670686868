package nacos_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients/config_client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/internal/integration"
)

func uniqueID(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }

// TestNamespacesAndGroups: the same dataId in two namespaces, and in two
// groups of one namespace, are four independent documents.
func TestNamespacesAndGroups(t *testing.T) {
	srv := integration.StartNacos(t)
	ctx := testCtx(t)
	dataID := uniqueID("order-service-flow-rules")
	type place struct{ ns, group string }
	places := []place{{"bulwark-a", "SENTINEL_GROUP"}, {"bulwark-b", "SENTINEL_GROUP"}, {"bulwark-a", "OTHER_GROUP"}, {"", "SENTINEL_GROUP"}}
	rigs := make([]*flowrig.Rig, len(places))
	writers := make([]writer, len(places))
	clients := map[string]config_client.IConfigClient{}
	for i, p := range places {
		if clients[p.ns] == nil {
			clients[p.ns] = newClient(t, srv.Addr(), p.ns)
		}
		writers[i] = newWriter(t, srv.Addr(), p.ns, dataID, p.group)
		rigs[i] = newRig(t, nacos.New(clients[p.ns], dataID, p.group))
	}
	for i := range places {
		require.NoError(t, writers[i].put(ctx, flowrig.Doc("GET /orders", 10+i)))
	}
	for i, p := range places {
		rigs[i].WaitCount(t, "GET /orders", float64(10+i))
		t.Logf("namespace %q group %s: count %v", p.ns, p.group, rigs[i].Count("GET /orders"))
	}
	// A delete in one place leaves the others.
	require.NoError(t, writers[0].del(ctx))
	rigs[0].WaitNoRules(t)
	for i := 1; i < len(places); i++ {
		assert.Equal(t, float64(10+i), rigs[i].Count("GET /orders"), "place %d", i)
	}
}

// TestSharedListener: two Readables over one client and one config (the SDK
// keeps a single listener per config and client) both follow pushes, and
// closing one leaves the other's push working.
func TestSharedListener(t *testing.T) {
	srv := integration.StartNacos(t)
	ctx := testCtx(t)
	dataID := uniqueID("bulwark-shared")
	const group = "SENTINEL_GROUP"
	w := newWriter(t, srv.Addr(), "", dataID, group)
	require.NoError(t, w.put(ctx, flowrig.Doc("r", 1)))
	cli := newClient(t, srv.Addr(), "")
	// Pushes only: no reconcile.
	a := newRig(t, nacos.New(cli, dataID, group), datasource.WithReconcileInterval(0))
	b := newRig(t, nacos.New(cli, dataID, group), datasource.WithReconcileInterval(0))
	a.WaitWatching(t)
	b.WaitWatching(t)
	require.NoError(t, w.put(ctx, flowrig.Doc("r", 2)))
	a.WaitCount(t, "r", 2)
	b.WaitCount(t, "r", 2)
	require.NoError(t, a.DS.Close())
	require.NoError(t, w.put(ctx, flowrig.Doc("r", 3)))
	b.WaitCount(t, "r", 3)
	assert.Equal(t, float64(2), a.Count("r"), "a closed Readable applies nothing")
}

// TestServerRestart: the server is killed and started again while a
// Readable runs; a document published after the restart is applied.
func TestServerRestart(t *testing.T) {
	if raceEnabled {
		t.Skip(sdkReconnectRace)
	}
	srv := integration.StartNacos(t)
	ctx := testCtx(t)
	dataID := uniqueID("bulwark-restart")
	const group = "SENTINEL_GROUP"
	w := newWriter(t, srv.Addr(), "", dataID, group)
	// put returns once a read shows the write; the server's cache is filled
	// from its store, so the document is stored and outlives the restart.
	require.NoError(t, w.put(ctx, flowrig.Doc("GET /orders", 5)))
	r := newRig(t, nacos.New(newClient(t, srv.Addr(), ""), dataID, group))
	r.WaitCount(t, "GET /orders", 5)

	require.NoError(t, srv.Stop(ctx))
	// While the server is away the rules stay; a reconcile read fails and Status says so.
	r.WaitStatus(t, "a read error while the server is down", func(st datasource.Status) bool { return st.Err != nil })
	assert.Equal(t, float64(5), r.Count("GET /orders"), "an unreachable source never changes the rules")
	t.Logf("status while down: %v", r.DS.Status().Err)

	start := time.Now()
	require.NoError(t, srv.Start(ctx))
	require.NoError(t, w.put(ctx, flowrig.Doc("GET /orders", 6)))
	r.WaitCount(t, "GET /orders", 6)
	t.Logf("new document applied %v after Start returned", time.Since(start).Round(time.Millisecond))
	r.WaitStatus(t, "the recovery", func(st datasource.Status) bool { return st.Err == nil && st.Failures == 0 })
	// And pushes work again.
	require.NoError(t, w.put(ctx, flowrig.Doc("GET /orders", 7)))
	r.WaitCount(t, "GET /orders", 7)
}

// TestJavaDocument: a document as Sentinel's dashboard (a Java client)
// publishes it, with its entity fields, is applied to a real engine and
// limits traffic.
func TestJavaDocument(t *testing.T) {
	srv := integration.StartNacos(t)
	ctx := testCtx(t)
	dataID := uniqueID("order-service-flow-rules")
	const group = "SENTINEL_GROUP"
	doc := `[{"id":3,"app":"order-service","ip":"10.0.0.7","port":8719,"gmtCreate":1732870000000,"gmtModified":1732870000000,` +
		`"resource":"GET /orders","limitApp":"default","grade":1,"count":20,"strategy":0,"controlBehavior":0,"clusterMode":false}]`
	w := newWriter(t, srv.Addr(), "", dataID, group)
	r := newRig(t, nacos.New(newClient(t, srv.Addr(), ""), dataID, group))
	assert.Empty(t, r.Engine.Flow().Rules())
	require.NoError(t, w.put(ctx, doc))
	r.WaitCount(t, "GET /orders", 20)
	rules := r.Engine.Flow().Rules()
	require.Len(t, rules, 1)
	assert.Equal(t, "default", rules[0].LimitApp)
	assert.Equal(t, flow.GradeQPS, rules[0].Grade)
	// Status follows the swap (it is updated just after the rules), so wait
	// for it rather than read it at once.
	r.WaitStatus(t, "the revision to be Nacos' md5 of the content", func(st datasource.Status) bool { return st.Revision == md5Hex(doc) })

	passed, blocked := 0, 0
	for range 40 {
		err := r.Engine.Do(ctx, "GET /orders", func(context.Context) error { return nil })
		switch {
		case err == nil:
			passed++
		case errors.Is(err, core.ErrBlocked):
			blocked++
		default:
			t.Fatal(err)
		}
	}
	t.Logf("40 calls at once: %d passed, %d blocked", passed, blocked)
	assert.LessOrEqual(t, passed, 21, "a 20 QPS rule lets about 20 of 40 immediate calls pass")
	assert.Positive(t, blocked)
}

// TestWriteCAS: compare-and-set through the Sink. Stale revisions and
// creating over an existing config fail with ErrConflict and store nothing;
// of two concurrent creators one wins; an update at the current md5
// succeeds and of two concurrent updaters one wins.
func TestWriteCAS(t *testing.T) {
	srv := integration.StartNacos(t)
	requireCAS(t, srv)
	ctx := testCtx(t)
	const group = "SENTINEL_GROUP"
	cli := newClient(t, srv.Addr(), "")

	t.Run("CreateOnlyIfAbsent", func(t *testing.T) {
		dataID := uniqueID("bulwark-cas-create")
		src := nacos.New(cli, dataID, group)
		snap, err := src.Write(ctx, []byte(flowrig.Doc("a", 1)), "")
		require.NoError(t, err)
		assert.Equal(t, md5Hex(flowrig.Doc("a", 1)), snap.Revision)
		w := newWriter(t, srv.Addr(), "", dataID, group)
		require.NoError(t, w.await(ctx, flowrig.Doc("a", 1)))
		_, err = src.Write(ctx, []byte(flowrig.Doc("a", 2)), "")
		require.ErrorIs(t, err, datasource.ErrConflict)
		t.Logf("create over an existing config: %v", err)
		// Nothing stored: the server still holds the first document, as a
		// compare-and-set against its md5 proves (the server compares with
		// what it stores, not with what its read cache serves).
		_, err = src.Write(ctx, []byte(flowrig.Doc("a", 3)), md5Hex(flowrig.Doc("a", 1)))
		require.NoError(t, err, "the config still holds the first document")
		require.NoError(t, w.await(ctx, flowrig.Doc("a", 3)))
	})

	t.Run("TwoCreatorsOneWins", func(t *testing.T) {
		dataID := uniqueID("bulwark-cas-race")
		errs := twoWriters(t, srv, dataID, group, "")
		requireOneWinner(t, errs)
	})

	t.Run("StaleRevisionConflicts", func(t *testing.T) {
		dataID := uniqueID("bulwark-cas-stale")
		w := newWriter(t, srv.Addr(), "", dataID, group)
		require.NoError(t, w.put(ctx, flowrig.Doc("a", 1)))
		src := nacos.New(cli, dataID, group)
		_, err := src.Write(ctx, []byte(flowrig.Doc("a", 3)), md5Hex(flowrig.Doc("a", 0)))
		require.ErrorIs(t, err, datasource.ErrConflict)
		t.Logf("stale revision: %v", err)
	})

	t.Run("UpdateAtCurrentRevision", func(t *testing.T) {
		dataID := uniqueID("bulwark-cas-update")
		w := newWriter(t, srv.Addr(), "", dataID, group)
		require.NoError(t, w.put(ctx, flowrig.Doc("a", 1)))
		src := nacos.New(cli, dataID, group)
		cur, err := src.Read(ctx)
		require.NoError(t, err)
		snap, err := src.Write(ctx, []byte(flowrig.Doc("a", 2)), cur.Revision)
		require.NoError(t, err)
		assert.Equal(t, md5Hex(flowrig.Doc("a", 2)), snap.Revision)
		require.NoError(t, w.await(ctx, flowrig.Doc("a", 2)))
	})
	t.Run("TwoUpdatersOneWins", func(t *testing.T) {
		dataID := uniqueID("bulwark-cas-race-update")
		w := newWriter(t, srv.Addr(), "", dataID, group)
		require.NoError(t, w.put(ctx, flowrig.Doc("a", 1)))
		requireOneWinner(t, twoWriters(t, srv, dataID, group, md5Hex(flowrig.Doc("a", 1))))
	})
}

// twoWriters writes two documents at once, through Sources on two
// clients, both expecting the revision expect.
func twoWriters(t *testing.T, srv *integration.Server, dataID, group, expect string) []error {
	t.Helper()
	ctx := testCtx(t)
	srcs := []*nacos.Source{
		nacos.New(newClient(t, srv.Addr(), ""), dataID, group),
		nacos.New(newClient(t, srv.Addr(), ""), dataID, group),
	}
	errs := make([]error, len(srcs))
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Go(func() { _, errs[i] = src.Write(ctx, []byte(flowrig.Doc("writer", i)), expect) })
	}
	wg.Wait()
	return errs
}

func requireOneWinner(t *testing.T, errs []error) {
	t.Helper()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		require.ErrorIs(t, err, datasource.ErrConflict)
		t.Logf("loser: %v", err)
	}
	require.Equal(t, 1, wins, "exactly one writer wins: %v", errs)
}

// TestOverlaysUnsupported: the test server, PolarisMesh's Nacos API, has
// no config search (its GET /nacos/v1/cs/configs reads one config and
// answers 404 for "dataId.overlay.*"; it has no /v3/admin/cs/config/list),
// so Overlays says the server cannot list overlays rather than "none"
// while an overlay exists.
func TestOverlaysUnsupported(t *testing.T) {
	srv := integration.StartNacos(t)
	dataID := uniqueID("bulwark-overlays")
	const group = "SENTINEL_GROUP"
	src := nacos.New(newClient(t, srv.Addr(), ""), dataID, group)
	t.Cleanup(func() { _ = src.Close() })
	ov := newWriter(t, srv.Addr(), "", dataID+".overlay.canary", group)
	require.NoError(t, ov.put(testCtx(t), `["canary"]`))
	got, err := src.Overlays(testCtx(t))
	require.ErrorIs(t, err, errors.ErrUnsupported, "listed %q", got)
	assert.Contains(t, err.Error(), "nacos: list the overlays of "+group+"/"+dataID)
	t.Logf("Overlays: %v", err)
}
