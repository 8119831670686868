package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// BenchmarkEnterExit compares Enter+Exit on a local rule and on a cluster
// rule served from its lease, in the same run: both rules admit
// everything (the cluster rule's budget is so large that one lease lasts
// a window).
func BenchmarkEnterExit(b *testing.B) {
	srv := startRedis(b)
	client := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer client.Close()
	ts := redis.New(client)
	defer ts.Close()
	e := core.NewEngine(core.WithTokenService(ts))
	defer e.Close()
	require.NoError(b, e.Flow().Load([]flow.Rule{
		{Resource: "local", Count: 1e12},
		clusterRule("cluster", nextFlow(), 1e12, true, true),
	}))
	ctx := context.Background()
	for _, res := range []string{"local", "cluster"} {
		b.Run(res, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				en, err := e.Enter(ctx, res)
				if err != nil {
					b.Fatal(err)
				}
				en.Exit()
			}
		})
		b.Run(res+"-parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					en, err := e.Enter(ctx, res)
					if err != nil {
						b.Error(err)
						return
					}
					en.Exit()
				}
			})
		})
	}
	if st := ts.Health(); st.Fallbacks > 0 {
		b.Fatalf("cluster entries fell back: %+v", st)
	}
}

// commandCalls returns how many times Redis ran the lease and announce
// scripts (EVALSHA and EVAL, from INFO commandstats).
func commandCalls(t testing.TB, c *goredis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(info, "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:", "cmdstat_eval:"} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
				calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
				v, err := strconv.Atoi(calls)
				require.NoError(t, err)
				n += v
			}
		}
	}
	return n
}

// TestCost measures, for a global limit shared by 4 instances each offered
// twice its share, the Redis commands per 1,000 admitted entries and the
// latency of Enter on the cluster rule against a local rule of the same
// instances. The commands are bounded by the lease size: about 1,000 /
// batch, batch = 5% of the window's budget / 4 instances, plus one
// announcement per instance and second.
func TestCost(t *testing.T) {
	high := 20_000.0
	if raceEnabled {
		high = 4_000 // the race detector makes each entry ~10 times dearer
	}
	for _, limit := range []float64{200, high} {
		t.Run(strconv.Itoa(int(limit)), func(t *testing.T) {
			srv := startRedis(t)
			admin := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
			t.Cleanup(func() { _ = admin.Close() })
			id := nextFlow()
			rules := []flow.Rule{
				clusterRule("cluster", id, limit, true, true),
				{Resource: "local", Count: limit / 4},
			}
			tr := startTraffic(t)
			var ins []*instance
			var cl, lo []*tally
			for range 4 {
				in := newInstance(t, srv.Addr(), rules, redis.WithTimeout(accuracyTimeout))
				c, l := newTally(), newTally()
				tr.offer(in.eng, "cluster", limit/2, c)
				tr.offer(in.eng, "local", limit/2, l)
				ins, cl, lo = append(ins, in), append(cl, c), append(lo, l)
			}
			warm(t, ins...)
			sec := time.Now().Unix() + 1
			waitSecond(t, sec-1)
			before := commandCalls(t, admin)
			waitSecond(t, sec+2)
			after := commandCalls(t, admin)
			admitted := sumPassed(sec, cl...) + sumPassed(sec+1, cl...) + sumPassed(sec+2, cl...)
			tr.stop()
			for _, in := range ins {
				assert.Zero(t, in.ts.Health().Fallbacks)
			}
			perK := float64(after-before) * 1000 / float64(admitted)
			batch := max(int(0.05*limit/4), 1)
			t.Logf("limit %.0f/s: %d admitted in 3 s, %d script calls: %.1f per 1,000 admitted (lease %d tokens)", limit, admitted, after-before, perK, batch)
			assert.InDelta(t, 3*limit, admitted, 3*limit*0.05)
			assert.LessOrEqual(t, perK, 1000/float64(batch)*1.5+4*3*1000/float64(admitted))
			t.Logf("Enter on the cluster rule: p50 %v p99 %v; on the local rule: p50 %v p99 %v",
				cl[0].percentile(0.5), cl[0].percentile(0.99), lo[0].percentile(0.5), lo[0].percentile(0.99))
		})
	}
}
