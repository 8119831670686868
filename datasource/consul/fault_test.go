package consul_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/consul"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	sizelimit "github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/internal/integration"
)

func put(t *testing.T, kv *api.KV, key, value string) {
	t.Helper()
	_, err := kv.Put(&api.KVPair{Key: key, Value: []byte(value)}, nil)
	require.NoError(t, err)
}

// The server is killed and started again while the datasource runs. A dev
// agent comes back empty with its index reset: the rules are cleared (the
// document is missing), and a document written afterwards is applied.
func TestServerRestart(t *testing.T) {
	srv := startConsul(t)
	ctx := testCtx(t)
	writer := newClient(t, srv.Addr(), "").KV()
	const key = "bulwark/order-service/test/flow"
	put(t, writer, key, flowrig.Doc("a", 1))
	rig := flowrig.Start(t, consul.New(newClient(t, srv.Addr(), ""), key))
	rig.WaitCount(t, "a", 1)

	for round := 2; round <= 3; round++ {
		require.NoError(t, srv.Stop(ctx))
		require.NoError(t, srv.Start(ctx))
		rig.WaitNoRules(t) // the key is gone with the server's memory
		began := time.Now()
		put(t, writer, key, flowrig.Doc("a", round))
		rig.WaitCount(t, "a", float64(round))
		t.Logf("round %d: applied %v after the write that followed the restart", round, time.Since(began))
	}
	rig.WaitStatus(t, "no error", func(st datasource.Status) bool { return st.Err == nil && st.Failures == 0 })
}

// Watch from a read made before the server restarted empty: its index is
// far ahead of the new server's. The blocking query answers with a lower
// index once its wait ends; Watch takes that as a fresh read, delivers
// the document the new server holds, and watches on from the new index.
func TestWatchIndexReset(t *testing.T) {
	srv := startConsul(t)
	ctx := testCtx(t)
	writer := newClient(t, srv.Addr(), "").KV()
	const key = "bulwark-test/reset"
	// Push the index well past where a fresh server starts (a write of
	// the value already there does not move it).
	for i := range 100 {
		put(t, writer, key, fmt.Sprint("old ", i))
	}
	src := consul.New(newClient(t, srv.Addr(), ""), key, consul.WithWaitTime(time.Second))
	from, err := src.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, "old 99", string(from.Data))

	require.NoError(t, srv.Stop(ctx))
	require.NoError(t, srv.Start(ctx))
	put(t, writer, key, "new")
	pair, _, err := writer.Get(key, nil)
	require.NoError(t, err)
	require.Less(t, pair.ModifyIndex, mustUint(t, from.Revision), "the index went backwards")

	wctx, cancel := context.WithCancel(ctx)
	hints := make(chan datasource.Snapshot, 16)
	done := make(chan error, 1)
	go func() { done <- src.Watch(wctx, from, func(s datasource.Snapshot) { hints <- s }) }()
	select {
	case h := <-hints:
		assert.Equal(t, "new", string(h.Data))
		assert.Equal(t, revision(pair.ModifyIndex), h.Revision)
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery after the index reset")
	}
	put(t, writer, key, "newer")
	select {
	case h := <-hints:
		assert.Equal(t, "newer", string(h.Data), "the watch goes on from the new index")
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery after the reset")
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

// A frozen server answers no blocking query: the query's client-side
// bound (wait time + jitter + 10 s) ends the Watch with an error, so the
// Readable reads again instead of waiting forever.
func TestWatchPausedServer(t *testing.T) {
	srv := startConsul(t)
	ctx := testCtx(t)
	const key = "bulwark-test/paused"
	put(t, newClient(t, srv.Addr(), "").KV(), key, "v1")
	src := consul.New(newClient(t, srv.Addr(), ""), key, consul.WithWaitTime(time.Second))
	from, err := src.Read(ctx)
	require.NoError(t, err)
	thaw := srv.Freeze(t)
	defer thaw()
	began := time.Now()
	err = src.Watch(ctx, from, func(datasource.Snapshot) { t.Error("no change was made") })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(began), 30*time.Second)
	t.Logf("watch on a frozen server ended after %v: %v", time.Since(began), err)
}

// The token loses its read permission while the datasource runs: reads
// fail with an error that says so, and the rules in force stay.
func TestPermissionDenied(t *testing.T) {
	srv := startConsul(t, integration.WithConsulACL("root"))
	ctx := testCtx(t)
	admin := newClient(t, srv.Addr(), "root")
	const key = "bulwark/order-service/test/flow"
	put(t, admin.KV(), key, flowrig.Doc("a", 1))
	pol, _, err := admin.ACL().PolicyCreate(&api.ACLPolicy{Name: "flow-read", Rules: `key_prefix "bulwark/" { policy = "read" }`}, nil)
	require.NoError(t, err)
	tok, _, err := admin.ACL().TokenCreate(&api.ACLToken{Policies: []*api.ACLTokenPolicyLink{{ID: pol.ID}}}, nil)
	require.NoError(t, err)

	// Read permission only: a write is refused, and says why.
	reader := consul.New(newClient(t, srv.Addr(), tok.SecretID), key)
	cur, err := reader.Read(ctx)
	require.NoError(t, err)
	_, err = reader.Write(ctx, []byte(flowrig.Doc("a", 9)), cur.Revision)
	require.Error(t, err)
	assert.NotErrorIs(t, err, datasource.ErrConflict)
	assert.Contains(t, strings.ToLower(err.Error()), "permission denied")
	t.Logf("write with a read-only token: %v", err)

	rig := flowrig.Start(t, consul.New(newClient(t, srv.Addr(), tok.SecretID), key),
		datasource.WithReconcileInterval(200*time.Millisecond))
	rig.WaitCount(t, "a", 1)

	tok.Policies = nil
	_, _, err = admin.ACL().TokenUpdate(tok, nil)
	require.NoError(t, err)
	put(t, admin.KV(), key, flowrig.Doc("a", 2))
	rig.WaitStatus(t, "a read refused", func(st datasource.Status) bool { return st.Err != nil })
	st := rig.DS.Status()
	assert.ErrorContains(t, st.Err, "permission denied")
	assert.ErrorContains(t, st.Err, key)
	t.Logf("status: %v", st.Err)
	assert.Equal(t, float64(1), rig.Count("a"), "the rules in force stay")

	// Without any token the Source names the problem at once too.
	_, err = consul.New(newClient(t, srv.Addr(), ""), key).Read(ctx)
	require.ErrorContains(t, err, "permission denied")
}

// A value larger than the read limit is refused, one at the limit is read;
// a write larger than the server's kv_max_value_size (512 KiB) is refused
// by the server and stores nothing.
func TestValueTooLarge(t *testing.T) {
	srv := startConsul(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr(), "")
	const key = "bulwark-test/limit"
	src := consul.New(cli, key)
	const limit = 100
	put(t, cli.KV(), key, strings.Repeat("x", limit))
	snap, err := src.Read(sizelimit.With(ctx, limit))
	require.NoError(t, err)
	assert.Len(t, snap.Data, limit)

	put(t, cli.KV(), key, strings.Repeat("x", limit+1))
	_, err = src.Read(sizelimit.With(ctx, limit))
	require.ErrorIs(t, err, datasource.ErrTooLarge)
	assert.ErrorContains(t, err, key)

	cur, err := src.Read(ctx)
	require.NoError(t, err)
	_, err = src.Write(ctx, make([]byte, 513<<10), cur.Revision)
	require.Error(t, err)
	t.Logf("a 513 KiB write: %v", err)
	after, err := src.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, cur, after, "nothing was stored")
}

// A key created and deleted in one transaction while Watch waits on it as
// missing: Consul's blocking get of a missing key keeps blocking when the
// key is missing again when the server looks, so Watch also waits on the
// keys under it (whose index counts the deletion) and reports the key as
// it is then. A Readable whose read caught the key in between reads
// again on that hint.
func TestWatchSeesCreateDeleteWhileMissing(t *testing.T) {
	srv := startConsul(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr(), "")
	const key = "bulwark-test/flicker"
	src := consul.New(cli, key, consul.WithWaitTime(time.Minute))
	from, err := src.Read(ctx)
	require.NoError(t, err)
	require.True(t, from.Missing)

	wctx, cancel := context.WithCancel(ctx)
	hints := make(chan datasource.Snapshot, 16)
	done := make(chan error, 1)
	go func() { done <- src.Watch(wctx, from, func(s datasource.Snapshot) { hints <- s }) }()
	ok, _, _, err := cli.Txn().Txn(api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVSet, Key: key, Value: []byte("brief")}},
		{KV: &api.KVTxnOp{Verb: api.KVDelete, Key: key}},
	}, nil)
	require.NoError(t, err)
	require.True(t, ok)
	select {
	case h := <-hints:
		assert.True(t, h.Missing, "the key is missing again")
	case <-time.After(10 * time.Second):
		t.Fatal("no hint within 10 s (the query waits up to a minute)")
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
