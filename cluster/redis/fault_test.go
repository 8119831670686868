package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// faultTimeout is the timeout of the fault tests: long enough that a
// serving Redis behind Docker's port proxy answers within it on a loaded
// CI machine (10 ms did not, and the rules fell back while Redis served);
// slack is what such a machine under the race detector may add to it
// before an Enter returns (scheduling, not waiting for Redis: seen up to
// 95 ms with four test binaries on two cores).
const (
	faultTimeout = 50 * time.Millisecond
	slack        = 250 * time.Millisecond
)

// faultRig is one instance with two cluster rules on a global flow of
// 40/s each: "fb" falls back to a local check of 40/s, "pass" lets every
// entry through when Redis fails. Each is offered 200/s.
type faultRig struct {
	in       *instance
	fb, pass *tally
}

func startFaultRig(t *testing.T, addr string) *faultRig {
	t.Helper()
	rules := []flow.Rule{
		clusterRule("fb", nextFlow(), 40, true, true),
		clusterRule("pass", nextFlow(), 40, true, false),
	}
	r := &faultRig{in: newInstance(t, addr, rules, redis.WithTimeout(faultTimeout)), fb: newTally(), pass: newTally()}
	tr := startTraffic(t)
	tr.offer(r.in.eng, "fb", 200, r.fb)
	tr.offer(r.in.eng, "pass", 200, r.pass)
	return r
}

// checkFallback checks a full second while Redis fails: the rule that
// falls back admits about its local count, the other admits everything.
func (r *faultRig) checkFallback(t *testing.T) {
	t.Helper()
	sec := time.Now().Unix() + 1
	waitSecond(t, sec)
	t.Logf("failing, %s fb, %s pass", describe(sec, r.fb), describe(sec, r.pass))
	assert.InDelta(t, 40, r.fb.passed(sec), 6, "fallback: the local check with the rule's count")
	assert.GreaterOrEqual(t, r.pass.passed(sec), 180, "no fallback: every entry passes")
	assert.Zero(t, r.pass.blocked(sec))
}

// checkCluster checks a full second while Redis serves.
func (r *faultRig) checkCluster(t *testing.T) {
	t.Helper()
	sec := time.Now().Unix() + 1
	waitSecond(t, sec)
	t.Logf("serving, %s fb, %s pass", describe(sec, r.fb), describe(sec, r.pass))
	assert.InDelta(t, 40, r.fb.passed(sec), 4)
	assert.InDelta(t, 40, r.pass.passed(sec), 4)
}

func (r *faultRig) waitFailing(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return !r.in.ts.Health().Healthy }, 5*time.Second, time.Millisecond)
}

// waitRecovered measures how long after from the service is healthy again
// and holds a lease: at most a second.
func (r *faultRig) waitRecovered(t *testing.T, from time.Time) {
	t.Helper()
	f0 := r.in.ts.Health().Requests
	require.Eventually(t, func() bool {
		st := r.in.ts.Health()
		return st.Healthy && st.Requests > f0
	}, time.Second, time.Millisecond, "cluster checks resume within a second of Redis answering")
	t.Logf("recovered %v after Redis answered again", time.Since(from).Round(time.Millisecond))
}

func (r *faultRig) checkWaits(t *testing.T) {
	t.Helper()
	for _, c := range []*tally{r.fb, r.pass} {
		t.Logf("Enter: p50 %v, p99 %v, max %v (timeout %v)", c.percentile(0.5), c.percentile(0.99), c.maxWait(), faultTimeout)
		assert.Less(t, c.maxWait(), faultTimeout+slack, "no entry waits past the timeout")
	}
}

func TestRedisPaused(t *testing.T) {
	srv := startRedis(t)
	r := startFaultRig(t, srv.Addr())
	warm(t, r.in)
	r.checkCluster(t)
	ctx := context.Background()
	require.NoError(t, srv.Pause(ctx))
	paused := time.Now()
	r.waitFailing(t)
	r.checkFallback(t)
	r.checkFallback(t)
	require.Eventually(t, func() bool { return time.Since(paused) >= 5*time.Second }, 6*time.Second, 10*time.Millisecond)
	require.NoError(t, srv.Resume(ctx))
	r.waitRecovered(t, time.Now())
	r.checkCluster(t)
	r.checkWaits(t)
	t.Logf("status: %+v", r.in.ts.Health())
}

func TestRedisKilledAndRestarted(t *testing.T) {
	srv := startRedis(t)
	r := startFaultRig(t, srv.Addr())
	warm(t, r.in)
	r.checkCluster(t)
	ctx := context.Background()
	require.NoError(t, srv.Stop(ctx))
	r.waitFailing(t)
	r.checkFallback(t)
	require.NoError(t, srv.Start(ctx))
	r.waitRecovered(t, time.Now())
	r.checkCluster(t)
	r.checkWaits(t)
	t.Logf("status: %+v", r.in.ts.Health())
}

func TestRedisUnreachable(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		r := startFaultRig(t, integration.RefusedAddr(t))
		r.waitFailing(t)
		r.checkFallback(t)
		r.checkWaits(t)
		st := r.in.ts.Health()
		t.Logf("status: %+v", st)
		assert.Error(t, st.Err)
	})
	t.Run("black hole", func(t *testing.T) {
		// TEST-NET-1 (RFC 5737) is never routed: a dial hangs or fails.
		r := startFaultRig(t, "192.0.2.1:6379")
		r.waitFailing(t)
		r.checkFallback(t)
		r.checkWaits(t)
		t.Logf("status: %+v", r.in.ts.Health())
	})
}
