package redis_test

import (
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/integration"
)

// The server is killed and started again while the datasource runs; a
// document written afterwards (SET + PUBLISH by another client) is applied,
// and pushes work again. Reconciling is an hour away: only the resync
// after the broken watch and the new subscription can deliver.
func TestServerKilledAndRestarted(t *testing.T) {
	t.Parallel()
	srv := integration.StartRedis(t)
	ctx := testCtx(t, 90*time.Second)
	key, channel := keyFor(t)
	writer := newClient(t, srv, nil)
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowDoc(1)))
	src := redis.New(newClient(t, srv, nil), key, channel, redis.WithHealthCheckInterval(testHealth))
	f := startFlow(t, ctx, src, datasource.WithReconcileInterval(time.Hour))
	require.Eventually(t, func() bool { return f.ds.Status().Watching }, 5*time.Second, 5*time.Millisecond)

	require.NoError(t, srv.Stop(ctx))
	require.Eventually(t, func() bool { st := f.ds.Status(); return st.Err != nil && st.Failures > 0 && st.WatchErr != nil },
		10*time.Second, 5*time.Millisecond, "the outage to show in Status")
	down := f.ds.Status()
	t.Logf("server down: watching=%v watchErr=%v err=%v failures=%d", down.Watching, down.WatchErr, down.Err, down.Failures)
	assert.Equal(t, 1.0, f.count(), "an unreachable server never changes the rules")

	require.NoError(t, srv.Start(ctx))
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowDoc(2)))
	f.waitCount(t, 2, 15*time.Second)
	require.Eventually(t, func() bool { st := f.ds.Status(); return st.Err == nil && st.Failures == 0 && st.Watching },
		15*time.Second, 5*time.Millisecond, "the recovery to show in Status")

	// Pushes are delivered by the new subscription.
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowDoc(3)))
	f.waitCount(t, 3, 10*time.Second)
}

// The server is frozen for 10 s (SIGSTOP, docker pause): connections stay
// open and silent. The health check notices, Status shows the outage; a
// write that another client issued during the pause lands when the server
// resumes, and the datasource converges to it: nothing is lost.
func TestServerPaused(t *testing.T) {
	t.Parallel()
	srv := integration.StartRedis(t)
	ctx := testCtx(t, 90*time.Second)
	key, channel := keyFor(t)
	writer := newClient(t, srv, nil)
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowDoc(1)))
	src := redis.New(newClient(t, srv, nil), key, channel, redis.WithHealthCheckInterval(testHealth))
	f := startFlow(t, ctx, src, datasource.WithReconcileInterval(time.Hour))
	require.Eventually(t, func() bool { return f.ds.Status().Watching }, 5*time.Second, 5*time.Millisecond)

	// A patient writer whose command waits in the socket until the resume.
	patient := newClient(t, srv, &goredis.Options{ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxRetries: -1})
	require.NoError(t, patient.Ping(ctx).Err()) // connected before the pause

	paused := time.Now()
	require.NoError(t, srv.Pause(ctx))
	var wg sync.WaitGroup
	var writeErr error
	wg.Go(func() { writeErr = javaWrite(ctx, patient, key, channel, flowDoc(2)) })

	require.Eventually(t, func() bool { st := f.ds.Status(); return st.Err != nil && st.Failures > 0 },
		9*time.Second, 5*time.Millisecond, "the outage to show in Status")
	down := f.ds.Status()
	t.Logf("paused %v: watching=%v watchErr=%v err=%v failures=%d", time.Since(paused).Round(time.Millisecond),
		down.Watching, down.WatchErr, down.Err, down.Failures)
	assert.Error(t, down.WatchErr, "the silent subscription was declared broken")
	assert.Equal(t, 1.0, f.count(), "an unreachable server never changes the rules")

	time.Sleep(time.Until(paused.Add(10 * time.Second)))
	require.NoError(t, srv.Resume(ctx))
	wg.Wait()
	require.NoError(t, writeErr, "the write issued during the pause")

	f.waitCount(t, 2, 15*time.Second)
	require.Eventually(t, func() bool { st := f.ds.Status(); return st.Err == nil && st.Failures == 0 && st.Watching },
		15*time.Second, 5*time.Millisecond, "the recovery to show in Status")
	up := f.ds.Status()
	t.Logf("resumed: watching=%v err=%v failures=%d revision=%s", up.Watching, up.Err, up.Failures, up.Revision)

	require.NoError(t, javaWrite(ctx, writer, key, channel, flowDoc(3)))
	f.waitCount(t, 3, 10*time.Second)
}

// Java Sentinel's Redis datasource loses a document published while its
// subscriber is disconnected (Redis does not queue messages). Here the
// subscriber's user is disabled and its connections killed; a document is
// SET and PUBLISHed to nobody (PUBLISH answers 0 receivers); once the user
// is enabled again, the datasource re-subscribes, reads the key and
// applies it. Reconciling is an hour away.
func TestDocumentWrittenWhileSubscriberAway(t *testing.T) {
	t.Parallel()
	srv := integration.StartRedis(t)
	ctx := testCtx(t, 60*time.Second)
	key, channel := keyFor(t)
	admin := newClient(t, srv, nil)
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "subscriber", "on", ">pw", "~*", "&*", "+@all").Err())
	require.NoError(t, javaWrite(ctx, admin, key, channel, flowDoc(1)))
	cli := newClient(t, srv, &goredis.Options{Username: "subscriber", Password: "pw"})
	f := startFlow(t, ctx, redis.New(cli, key, channel, redis.WithHealthCheckInterval(testHealth)),
		datasource.WithReconcileInterval(time.Hour))
	numsub := func() int64 { return admin.PubSubNumSub(ctx, channel).Val()[channel] }
	require.Eventually(t, func() bool { return numsub() == 1 }, 5*time.Second, 5*time.Millisecond)

	cutUser(t, admin, cli, "subscriber")
	require.Eventually(t, func() bool { return numsub() == 0 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, admin.Set(ctx, key, flowDoc(2), 0).Err())
	receivers, err := admin.Publish(ctx, channel, flowDoc(2)).Result()
	require.NoError(t, err)
	require.Zero(t, receivers, "the message reached nobody")
	require.Eventually(t, func() bool { return f.ds.Status().Err != nil }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 1.0, f.count())

	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "subscriber", "on").Err())
	f.waitCount(t, 2, 10*time.Second)
	require.Eventually(t, func() bool { return numsub() == 1 }, 10*time.Second, 5*time.Millisecond, "re-subscribed")
	require.NoError(t, javaWrite(ctx, admin, key, channel, flowDoc(3)))
	f.waitCount(t, 3, 10*time.Second)
}

// The subscriber's connection alone is killed (CLIENT KILL TYPE pubsub),
// many times, while writes go on: the rules always converge.
func TestSubscriberConnectionKilled(t *testing.T) {
	t.Parallel()
	srv := integration.StartRedis(t)
	ctx := testCtx(t, 60*time.Second)
	key, channel := keyFor(t)
	admin := newClient(t, srv, nil)
	require.NoError(t, javaWrite(ctx, admin, key, channel, flowDoc(0)))
	f := startFlow(t, ctx, redis.New(newClient(t, srv, nil), key, channel, redis.WithHealthCheckInterval(testHealth)),
		datasource.WithReconcileInterval(time.Hour))
	for i := 1; i <= 10; i++ {
		require.NoError(t, admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err())
		require.NoError(t, javaWrite(ctx, admin, key, channel, flowDoc(i)))
		f.waitCount(t, float64(i), 10*time.Second)
	}
}
