package redis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/integration"
)

func TestMain(m *testing.M) {
	// go-redis retries dialing a refused server once a second on a
	// goroutine of its own, which ends within a second of Close, and a
	// dial it started before Close (to a frozen or unreachable server) ends
	// at its DialTimeout. The harness's fork thread (local mode) lives as
	// long as the binary; in docker mode, so do the Docker client's
	// keep-alive connections.
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).queuedNewConn.func2"),
		goleak.IgnoreAnyFunction("github.com/bulwark-go/bulwark/internal/integration.init.func3.1"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	)
}

// startRedis starts a Redis for the token service. The harness makes
// Redis fsync every write (appendfsync always), which a budget's counters
// do not need and which, on a loaded CI disk, makes single writes take
// longer than the timeout: once a second, as a cache is usually run.
func startRedis(t testing.TB) *integration.Server {
	return integration.StartRedis(t, integration.WithRedisArgs("--appendfsync", "everysec"))
}

// warm waits until every instance has had a lease from Redis.
func warm(t *testing.T, ins ...*instance) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, in := range ins {
			if in.ts.Health().Requests == 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond)
}

var flowSeq atomic.Int64

// nextFlow gives each test its own flow id, so tests sharing a server
// never share a budget.
func nextFlow() int64 { return time.Now().UnixNano()%1_000_000_000 + flowSeq.Add(1) }

func clusterRule(resource string, flowID int64, count float64, global, fallback bool) flow.Rule {
	tt := 0
	if global {
		tt = 1
	}
	return flow.Rule{Resource: resource, Count: count, ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{FlowID: flowID, ThresholdType: tt, FallbackToLocalWhenFail: fallback}}
}

// instance is one service instance: its own client, token service and
// engine.
type instance struct {
	client goredis.UniversalClient
	ts     *redis.TokenService
	eng    *core.Engine
	once   sync.Once
}

func newInstance(t *testing.T, addr string, rules []flow.Rule, opts ...redis.Option) *instance {
	t.Helper()
	return newInstanceOn(t, goredis.NewClient(&goredis.Options{Addr: addr}), rules, opts...)
}

// newInstanceOn makes an instance over client, which it closes when it
// stops.
func newInstanceOn(t *testing.T, client goredis.UniversalClient, rules []flow.Rule, opts ...redis.Option) *instance {
	t.Helper()
	in := &instance{client: client}
	in.ts = redis.New(in.client, opts...)
	in.eng = core.NewEngine(core.WithTokenService(in.ts))
	require.NoError(t, in.eng.Flow().Load(rules))
	t.Cleanup(in.stop)
	return in
}

// stop closes the instance as a service shutting down does.
func (in *instance) stop() {
	in.once.Do(func() {
		_ = in.eng.Close()
		_ = in.ts.Close()
		_ = in.client.Close()
	})
}

// tally counts admitted and blocked entries per wall-clock second, and
// the longest an Enter took.
type tally struct {
	mu      sync.Mutex
	pass    map[int64]int
	block   map[int64]int
	slowest time.Duration
	lat     []time.Duration
}

func newTally() *tally { return &tally{pass: map[int64]int{}, block: map[int64]int{}} }

func (c *tally) add(at time.Time, d time.Duration, passed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if passed {
		c.pass[at.Unix()]++
	} else {
		c.block[at.Unix()]++
	}
	c.slowest = max(c.slowest, d)
	if len(c.lat) < 1_000_000 {
		c.lat = append(c.lat, d)
	}
}

func (c *tally) passed(sec int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pass[sec]
}

func (c *tally) blocked(sec int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.block[sec]
}

func (c *tally) maxWait() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slowest
}

func (c *tally) percentile(p float64) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lat) == 0 {
		return 0
	}
	s := slices.Clone(c.lat)
	slices.Sort(s)
	return s[min(int(p*float64(len(s))), len(s)-1)]
}

// traffic offers entries to engines at a steady rate until stopped; its
// goroutines are waited for by stop (and at the test's cleanup).
type traffic struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startTraffic(t *testing.T) *traffic {
	ctx, cancel := context.WithCancel(context.Background())
	tr := &traffic{cancel: cancel}
	t.Cleanup(tr.stop)
	tr.ctx = ctx
	return tr
}

func (tr *traffic) stop() { tr.cancel(); tr.wg.Wait() }

// offer enters resource on eng rate times per second, catching up after
// any delay so that the offered load is exact, and tallies the outcomes.
func (tr *traffic) offer(eng *core.Engine, resource string, rate float64, c *tally) {
	tr.wg.Add(1)
	go func() {
		defer tr.wg.Done()
		start := time.Now()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		sent := 0
		for {
			select {
			case <-tr.ctx.Done():
				return
			case <-tick.C:
			}
			due := int(time.Since(start).Seconds() * rate)
			for ; sent < due; sent++ {
				t0 := time.Now()
				en, err := eng.Enter(tr.ctx, resource)
				d := time.Since(t0)
				if err != nil && !errors.Is(err, core.ErrBlocked) {
					return // the traffic was stopped while an entry waited
				}
				c.add(t0, d, err == nil)
				if en != nil {
					en.Exit()
				}
			}
		}
	}()
}

// waitSecond returns once the wall-clock second after sec has begun.
func waitSecond(t *testing.T, sec int64) {
	t.Helper()
	until := time.Until(time.Unix(sec+1, 0)) + 2*time.Second
	require.Eventually(t, func() bool { return time.Now().Unix() > sec }, until, 5*time.Millisecond)
}

func sumPassed(sec int64, ts ...*tally) int {
	n := 0
	for _, c := range ts {
		n += c.passed(sec)
	}
	return n
}

func describe(sec int64, ts ...*tally) string {
	s := fmt.Sprintf("second %d:", sec)
	for _, c := range ts {
		s += fmt.Sprintf(" %d/%d", c.passed(sec), c.passed(sec)+c.blocked(sec))
	}
	return s
}
