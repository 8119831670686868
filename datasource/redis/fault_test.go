package redis_test

import (
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
)

// The server is killed and started again while the datasource runs; a
// document written afterwards (SET + PUBLISH by another client) is applied,
// and pushes work again. Reconciling is an hour away: only the resync
// after the broken watch and the new subscription can deliver.
func TestServerKilledAndRestarted(t *testing.T) {
	t.Parallel()
	srv, ctx, key, channel, writer := startKey(t, 90*time.Second, flowrig.Doc("a", 1))
	_, f := pushOnly(t, newClient(t, srv, nil), key, channel)
	f.WaitWatching(t)

	require.NoError(t, srv.Stop(ctx))
	f.WaitStatus(t, "the outage to show in Status", func(st datasource.Status) bool { return st.Err != nil && st.Failures > 0 && st.WatchErr != nil })
	down := f.DS.Status()
	t.Logf("server down: watching=%v watchErr=%v err=%v failures=%d", down.Watching, down.WatchErr, down.Err, down.Failures)
	assert.Equal(t, 1.0, f.Count("a"), "an unreachable server never changes the rules")

	require.NoError(t, srv.Start(ctx))
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowrig.Doc("a", 2)))
	f.WaitCount(t, "a", 2)
	f.WaitStatus(t, "the recovery to show in Status", func(st datasource.Status) bool { return st.Err == nil && st.Failures == 0 && st.Watching })

	// Pushes are delivered by the new subscription.
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowrig.Doc("a", 3)))
	f.WaitCount(t, "a", 3)
}

// The server is frozen for 10 s (SIGSTOP, docker pause): connections stay
// open and silent. The health check notices, Status shows the outage; a
// write that another client issued during the pause lands when the server
// resumes, and the datasource converges to it: nothing is lost.
func TestServerPaused(t *testing.T) {
	t.Parallel()
	srv, ctx, key, channel, writer := startKey(t, 90*time.Second, flowrig.Doc("a", 1))
	_, f := pushOnly(t, newClient(t, srv, nil), key, channel)
	f.WaitWatching(t)

	// A patient writer whose command waits in the socket until the resume.
	patient := newClient(t, srv, &goredis.Options{ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxRetries: -1})
	require.NoError(t, patient.Ping(ctx).Err()) // connected before the pause

	paused := time.Now()
	require.NoError(t, srv.Pause(ctx))
	var wg sync.WaitGroup
	var writeErr error
	wg.Go(func() { writeErr = javaWrite(ctx, patient, key, channel, flowrig.Doc("a", 2)) })

	// Within the freeze, which ends 10 s after it began.
	require.Eventually(t, func() bool { st := f.DS.Status(); return st.Err != nil && st.Failures > 0 },
		9*time.Second, 5*time.Millisecond, "the outage to show in Status while the server is frozen")
	down := f.DS.Status()
	t.Logf("paused %v: watching=%v watchErr=%v err=%v failures=%d", time.Since(paused).Round(time.Millisecond),
		down.Watching, down.WatchErr, down.Err, down.Failures)
	assert.Error(t, down.WatchErr, "the silent subscription was declared broken")
	assert.Equal(t, 1.0, f.Count("a"), "an unreachable server never changes the rules")

	time.Sleep(time.Until(paused.Add(10 * time.Second))) // the fault itself: the server stays frozen for 10 s
	require.NoError(t, srv.Resume(ctx))
	wg.Wait()
	require.NoError(t, writeErr, "the write issued during the pause")

	f.WaitCount(t, "a", 2)
	f.WaitStatus(t, "the recovery to show in Status", func(st datasource.Status) bool { return st.Err == nil && st.Failures == 0 && st.Watching })
	up := f.DS.Status()
	t.Logf("resumed: watching=%v err=%v failures=%d revision=%s", up.Watching, up.Err, up.Failures, up.Revision)

	require.NoError(t, javaWrite(ctx, writer, key, channel, flowrig.Doc("a", 3)))
	f.WaitCount(t, "a", 3)
}

// Java Sentinel's Redis datasource loses a document published while its
// subscriber is disconnected (Redis does not queue messages). Here the
// subscriber's user is disabled and its connections killed; a document is
// SET and PUBLISHed to nobody (PUBLISH answers 0 receivers); once the user
// is enabled again, the datasource re-subscribes, reads the key and
// applies it. Reconciling is an hour away.
func TestDocumentWrittenWhileSubscriberAway(t *testing.T) {
	t.Parallel()
	srv, ctx, key, channel, admin := startKey(t, 60*time.Second, flowrig.Doc("a", 1))
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "subscriber", "on", ">pw", "~*", "&*", "+@all").Err())
	cli := newClient(t, srv, &goredis.Options{Username: "subscriber", Password: "pw"})
	_, f := pushOnly(t, cli, key, channel)
	numsub := func() int64 { return admin.PubSubNumSub(ctx, channel).Val()[channel] }
	require.Eventually(t, func() bool { return numsub() == 1 }, 5*time.Second, 5*time.Millisecond)

	cutUser(t, admin, cli, "subscriber")
	require.Eventually(t, func() bool { return numsub() == 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, admin.Set(ctx, key, flowrig.Doc("a", 2), 0).Err())
	receivers, err := admin.Publish(ctx, channel, flowrig.Doc("a", 2)).Result()
	require.NoError(t, err)
	require.Zero(t, receivers, "the message reached nobody")
	f.WaitStatus(t, "an error", func(st datasource.Status) bool { return st.Err != nil })
	assert.Equal(t, 1.0, f.Count("a"))

	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "subscriber", "on").Err())
	f.WaitCount(t, "a", 2)
	require.Eventually(t, func() bool { return numsub() == 1 }, 10*time.Second, 5*time.Millisecond, "re-subscribed")
	require.NoError(t, javaWrite(ctx, admin, key, channel, flowrig.Doc("a", 3)))
	f.WaitCount(t, "a", 3)
}

// The subscriber's connection alone is killed (CLIENT KILL TYPE pubsub),
// many times, while writes go on: the rules always converge.
func TestSubscriberConnectionKilled(t *testing.T) {
	t.Parallel()
	srv, ctx, key, channel, admin := startKey(t, 60*time.Second, flowrig.Doc("a", 0))
	_, f := pushOnly(t, newClient(t, srv, nil), key, channel)
	for i := 1; i <= 10; i++ {
		require.NoError(t, admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err())
		require.NoError(t, javaWrite(ctx, admin, key, channel, flowrig.Doc("a", i)))
		f.WaitCount(t, "a", float64(i))
	}
}
