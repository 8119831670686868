package redis_test

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// accuracyTimeout replaces the default timeout of a few ms in the tests
// of how instances share a budget: on a loaded CI machine under the race
// detector a lease request sometimes takes far longer, and each entry
// that waited past the timeout would be checked locally, with the rule's
// count (the fallback, which has tests of its own, and for a global rule
// a local limit as high as the global one). The tests assert that no
// entry fell back.
const accuracyTimeout = time.Second

// accuracySeconds is how long the tests of a steady state measure.
const accuracySeconds = 20

// measureSeconds checks the admitted entries of every full second from
// the next one on, for secs seconds: summed over the instances, within
// ±5% of want.
//
// The acceptance is 20 seconds of a steady state (accuracySeconds).
func measureSeconds(t *testing.T, secs int, want float64, ts ...*tally) {
	t.Helper()
	first := time.Now().Unix() + 1
	for sec := first; sec < first+int64(secs); sec++ {
		waitSecond(t, sec)
		got := sumPassed(sec, ts...)
		t.Logf("%s → %d (want %.0f ±5%%)", describe(sec, ts...), got, want)
		assert.InDelta(t, want, float64(got), want*0.05, "second %d", sec)
	}
}

// Four instances, each with its own client, each offered twice its share
// of a global 200/s: together they admit 200 each second.
func TestAccuracyGlobal(t *testing.T) {
	srv := startRedis(t)
	accuracyGlobal(t, func() goredis.UniversalClient { return goredis.NewClient(&goredis.Options{Addr: srv.Addr()}) })
}

// The same against a Redis Cluster of three masters: a flow's keys share a
// hash slot, so its script runs on one node.
func TestAccuracyGlobalRedisCluster(t *testing.T) {
	c := integration.StartRedisCluster(t)
	t.Logf("redis cluster in %s mode at %v", c.Nodes[0].Mode(), c.Addrs())
	accuracyGlobal(t, func() goredis.UniversalClient {
		return goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs()})
	})
}

func accuracyGlobal(t *testing.T, client func() goredis.UniversalClient) {
	id := nextFlow()
	rules := []flow.Rule{clusterRule("orders", id, 200, true, true)}
	tr := startTraffic(t)
	var ins []*instance
	var ts []*tally
	for range 4 {
		in := newInstanceOn(t, client(), rules, redis.WithTimeout(accuracyTimeout))
		c := newTally()
		tr.offer(in.eng, "orders", 100, c)
		ins, ts = append(ins, in), append(ts, c)
	}
	warm(t, ins...)
	measureSeconds(t, accuracySeconds, 200, ts...)
	tr.stop()
	for i, in := range ins {
		st := in.ts.Health()
		t.Logf("instance %d: %+v", i, st)
		assert.True(t, st.Healthy)
		assert.Zero(t, st.Fallbacks)
	}
}

// Average local: 50 per instance with 4 live instances is 200 for all;
// when one instance dies (it stops announcing and never says goodbye: its
// connection is cut), the others adapt to 150 within seconds.
func TestAccuracyAverageLocal(t *testing.T) {
	srv := startRedis(t)
	id := nextFlow()
	rules := []flow.Rule{clusterRule("orders", id, 50, false, true)}
	cut := integration.NewCutter(t, srv.Addr())
	tr := startTraffic(t)
	var ts []*tally
	var ins []*instance
	var dying *instance
	for i := range 4 {
		addr := srv.Addr()
		if i == 3 {
			addr = cut.Addr(0)
		}
		in := newInstance(t, addr, rules, redis.WithTimeout(accuracyTimeout))
		c := newTally()
		tr.offer(in.eng, "orders", 100, c)
		ts, ins = append(ts, c), append(ins, in)
		if i == 3 {
			dying = in
		}
	}
	warm(t, ins...)
	waitSecond(t, time.Now().Unix()) // every instance announced
	measureSeconds(t, accuracySeconds, 200, ts...)

	cut.Disconnect(t)
	died := time.Now()
	rest := ts[:3]
	require.Eventually(t, func() bool {
		sec := time.Now().Unix() - 1
		got := sumPassed(sec, rest...)
		return sec > died.Unix() && got >= 142 && got <= 158
	}, 8*time.Second, 20*time.Millisecond, "the three left admit 150/s once the fourth is gone")
	t.Logf("adapted %v after the fourth instance was cut off", time.Since(died).Round(100*time.Millisecond))
	measureSeconds(t, 2, 150, rest...)
	for i, in := range ins[:3] {
		st := in.ts.Health()
		t.Logf("instance %d: %+v", i, st)
		assert.Zero(t, st.Fallbacks)
	}
	st := dying.ts.Health()
	t.Logf("instance cut off: %+v", st)
	assert.False(t, st.Healthy, "the instance cut off sees Redis failing")
}
