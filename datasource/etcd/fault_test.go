package etcd_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/etcd"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
)

// The server is killed and started again while the datasource runs; a
// document written afterwards is applied (with the default reconcile
// interval, so through the resumed watch or the resync).
func TestServerRestart(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr())
	writer := newClient(t, srv.Addr())
	const key = "/bulwark/order-service/test/flow"
	_, err := writer.Put(ctx, key, flowrig.Doc("a", 1))
	require.NoError(t, err)
	rig := flowrig.Start(t, etcd.New(cli, key))
	rig.WaitCount(t, "a", 1)
	probe := etcd.New(cli, key) // reads through the rig's client
	readFails := func() bool {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := probe.Read(ctx)
		return err != nil
	}

	for round := 2; round <= 3; round++ {
		require.NoError(t, srv.Stop(ctx))
		require.Eventually(t, readFails, flowrig.Timeout, 10*time.Millisecond, "reads through the client fail once the server is down")
		assert.Equal(t, float64(round-1), rig.Count("a"), "an unreachable source never changes the rules")
		require.NoError(t, srv.Start(ctx))
		began := time.Now()
		_, err = writer.Put(ctx, key, flowrig.Doc("a", round))
		require.NoError(t, err)
		rig.WaitCount(t, "a", float64(round))
		t.Logf("round %d: applied %v after the write that followed the restart", round, time.Since(began))
	}
	st := rig.DS.Status()
	assert.NoError(t, st.Err)
	assert.Zero(t, st.Failures)
}

// The server freezes for 10 s: the rules stay, Status shows the outage
// (reads fail), a write sent during the freeze is applied once the server
// answers again, and Status recovers.
func TestServerPause(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	cli := newClient(t, srv.Addr())
	writer := newClient(t, srv.Addr())
	const key = "/bulwark/order-service/test/flow"
	_, err := writer.Put(ctx, key, flowrig.Doc("a", 1))
	require.NoError(t, err)
	// A reconcile read every 500 ms is what notices a frozen server (its
	// watch stays silent); each read gives up after 1 s.
	rig := flowrig.Start(t, etcd.New(cli, key),
		datasource.WithReconcileInterval(500*time.Millisecond),
		datasource.WithReadTimeout(time.Second))
	rig.WaitCount(t, "a", 1)

	require.NoError(t, srv.Pause(ctx))
	paused := time.Now()
	var wg sync.WaitGroup
	var putErr error
	wg.Go(func() { // blocks until the server answers again
		_, putErr = writer.Put(ctx, key, flowrig.Doc("a", 2))
	})
	require.Eventually(t, func() bool { st := rig.DS.Status(); return st.Err != nil && st.Failures >= 1 },
		15*time.Second, 10*time.Millisecond, "Status shows the outage")
	outage := rig.DS.Status()
	t.Logf("during the pause: err=%v failures=%d", outage.Err, outage.Failures)
	assert.ErrorIs(t, outage.Err, context.DeadlineExceeded)
	time.Sleep(10*time.Second - time.Since(paused)) // the fault itself: the server stays frozen for 10 s
	assert.Equal(t, float64(1), rig.Count("a"), "the rules stay while the server is away")
	during := rig.DS.Status()
	assert.GreaterOrEqual(t, during.Failures, 2, "reads kept failing")

	// Taken before Resume: once unpaused the server may answer, and the
	// datasource apply, before Resume itself returns.
	resumed := time.Now()
	require.NoError(t, srv.Resume(ctx))
	wg.Wait()
	require.NoError(t, putErr, "the write sent during the pause")
	rig.WaitCount(t, "a", 2)
	t.Logf("applied %v after resume", time.Since(resumed))
	require.Eventually(t, func() bool { st := rig.DS.Status(); return st.Err == nil && st.Failures == 0 },
		15*time.Second, 10*time.Millisecond, "Status recovers")
	st := rig.DS.Status()
	assert.True(t, st.AppliedAt.After(resumed) || st.AppliedAt.Equal(resumed))

	// Nothing lost: the next write arrives too.
	_, err = writer.Put(ctx, key, flowrig.Doc("a", 3))
	require.NoError(t, err)
	rig.WaitCount(t, "a", 3)
}

// Deleting the key clears the rules; WithKeepOnMissing keeps them.
func TestDelete(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	writer := newClient(t, srv.Addr())
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			key := "/bulwark/order-service/test/flow-" + fmt.Sprint(keep)
			_, err := writer.Put(ctx, key, `[{"resource":"a","count":5},{"resource":"b","count":7}]`)
			require.NoError(t, err)
			var opts []datasource.Option
			if keep {
				opts = append(opts, datasource.WithKeepOnMissing())
			}
			rig := flowrig.Start(t, etcd.New(newClient(t, srv.Addr()), key), opts...)
			rig.WaitCount(t, "b", 7)
			_, err = writer.Delete(ctx, key)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return rig.DS.Status().Missing }, 10*time.Second, 2*time.Millisecond)
			if keep {
				assert.Len(t, rig.Engine.Flow().Rules(), 2, "kept")
			} else {
				rig.WaitNoRules(t)
			}
			assert.NoError(t, rig.DS.Status().Err)
			_, err = writer.Put(ctx, key, flowrig.Doc("a", 9))
			require.NoError(t, err)
			rig.WaitCount(t, "a", 9)
			assert.Len(t, rig.Engine.Flow().Rules(), 1)
		})
	}
}

// A document that does not decode, or that the rule manager rejects,
// leaves the last good rules, and Status names the error.
func TestInvalidDocument(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	writer := newClient(t, srv.Addr())
	const key = "/bulwark/order-service/test/flow"
	_, err := writer.Put(ctx, key, flowrig.Doc("a", 5))
	require.NoError(t, err)
	rig := flowrig.Start(t, etcd.New(newClient(t, srv.Addr()), key))
	rig.WaitCount(t, "a", 5)
	good := rig.DS.Status().Revision

	for _, bad := range []struct{ doc, says string }{
		{`[{"resource":"a","count":-1}]`, "count"},          // fails validation
		{`[{"resource":"a","count":5,"speed":3}]`, "speed"}, // unknown field
		{`[{"resource":"a","count":5}`, "decode"},           // truncated JSON
	} {
		resp, err := writer.Put(ctx, key, bad.doc)
		require.NoError(t, err)
		rev := fmt.Sprint(resp.Header.Revision)
		require.Eventually(t, func() bool {
			err := rig.DS.Status().Err
			return err != nil && containsAll(err.Error(), rev, bad.says)
		}, 10*time.Second, 2*time.Millisecond, "Status names the rejected revision %s: %+v", rev, rig.DS.Status())
		st := rig.DS.Status()
		t.Logf("%s -> %v", bad.doc, st.Err)
		assert.Equal(t, good, st.Revision, "Status.Revision stays the applied one")
		assert.GreaterOrEqual(t, st.Failures, 1)
		assert.Equal(t, float64(5), rig.Count("a"), "the last good rules stay")
	}
	_, err = writer.Put(ctx, key, flowrig.Doc("a", 6))
	require.NoError(t, err)
	rig.WaitCount(t, "a", 6)
	require.Eventually(t, func() bool { return rig.DS.Status().Err == nil }, 10*time.Second, 2*time.Millisecond)
}

// Two engines (two clients) on one key end with identical rules after a
// burst of writes.
func TestTwoEngines(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	writer := newClient(t, srv.Addr())
	const key = "/bulwark/order-service/test/flow"
	_, err := writer.Put(ctx, key, flowrig.Doc("a", 1))
	require.NoError(t, err)
	r1 := flowrig.Start(t, etcd.New(newClient(t, srv.Addr()), key))
	r2 := flowrig.Start(t, etcd.New(newClient(t, srv.Addr()), key))
	for i := range 50 {
		doc := fmt.Sprintf(`[{"resource":"a","count":%d},{"resource":"r%d","count":%d,"grade":0}]`, i+2, i%5, i)
		_, err := writer.Put(ctx, key, doc)
		require.NoError(t, err)
	}
	r1.WaitCount(t, "a", 51)
	r2.WaitCount(t, "a", 51)
	assert.Equal(t, r1.Engine.Flow().Rules(), r2.Engine.Flow().Rules())
	// Status is updated just after the rules swap: wait for both to catch up.
	require.Eventually(t, func() bool { return r1.DS.Status().Revision == r2.DS.Status().Revision },
		10*time.Second, 10*time.Millisecond, "both datasources report the same revision")
}

// Two writers with compare-and-set: of two writes against one revision one
// gets ErrConflict; concurrent Updates lose nothing; both engines see it.
func TestTwoWriters(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	const key = "/bulwark/order-service/test/flow"
	seed := newClient(t, srv.Addr())
	_, err := seed.Put(ctx, key, flowrig.Doc("a", 1))
	require.NoError(t, err)
	rig := flowrig.Start(t, etcd.New(newClient(t, srv.Addr()), key))

	w1 := datasource.NewWritable(etcd.New(newClient(t, srv.Addr()), key), converter.FlowRules())
	w2 := datasource.NewWritable(etcd.New(newClient(t, srv.Addr()), key), converter.FlowRules())
	base1, rev1, err := w1.Read(ctx)
	require.NoError(t, err)
	base2, rev2, err := w2.Read(ctx)
	require.NoError(t, err)

	one, _ := flowrig.SetCount("a", 10)(base1)
	two, _ := flowrig.SetCount("a", 20)(base2)
	var wg sync.WaitGroup
	var err1, err2 error
	wg.Go(func() { err1 = w1.Write(ctx, one, rev1) })
	wg.Go(func() { err2 = w2.Write(ctx, two, rev2) })
	wg.Wait()
	require.True(t, (err1 == nil) != (err2 == nil), "exactly one write wins: %v / %v", err1, err2)
	lost := err1
	want := float64(20)
	if err2 != nil {
		lost, want = err2, 10
	}
	require.ErrorIs(t, lost, datasource.ErrConflict)
	t.Logf("the loser: %v", lost)
	rig.WaitCount(t, "a", want)

	// Updates from both writers, concurrently: every one lands.
	const each = 10
	errs := make(chan error, 2*each)
	for i, w := range []*datasource.Writable[[]flow.Rule]{w1, w2} {
		wg.Go(func() {
			for j := range each {
				errs <- w.Update(ctx, flowrig.SetCount(fmt.Sprintf("w%d-%d", i, j), float64(j+1)))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	rig.WaitCount(t, "w0-9", 10)
	rig.WaitCount(t, "w1-9", 10)
	require.Eventually(t, func() bool { return len(rig.Engine.Flow().Rules()) == 1+2*each }, 10*time.Second, 2*time.Millisecond)
	assert.Equal(t, want, rig.Count("a"), "the first winner's edit is kept")
}

func containsAll(s string, parts ...string) bool {
	return !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(s, p) })
}
