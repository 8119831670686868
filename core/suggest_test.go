package core_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/testclock"
	"github.com/bulwark-go/bulwark/internal/testtraffic"
)

// driveSecond is testtraffic.Second, failing the test on a block.
func driveSecond(t *testing.T, e *core.Engine, clk *testclock.Clock, loads ...load) {
	t.Helper()
	require.NoError(t, testtraffic.Second(e, clk, loads...))
}

type load = testtraffic.Load

func baselineOf(t *testing.T, sg core.Suggestion, resource string) core.Baseline {
	t.Helper()
	for _, b := range sg.Resources {
		if b.Resource == resource {
			return b
		}
	}
	require.Failf(t, "resource not in the suggestion", "%q", resource)
	return core.Baseline{}
}

// TestSuggestFromKnownTraffic drives a minute of known traffic and checks
// every figure and threshold suggested from it.
func TestSuggestFromKnownTraffic(t *testing.T) {
	clk := testclock.New()
	start := clk.Now()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	inForce := []flow.Rule{
		qps("GET /orders", 1000), // enforcing: kept
		flow.Rule{Resource: "GET /orders", Count: 500, Shadow: true}.WithDefaults(), // replaced by the suggestion
		flow.Rule{Resource: "GET /other", Count: 5, Shadow: true}.WithDefaults(),    // another resource's: kept
	}
	require.NoError(t, e.Flow().Load(inForce))

	// GET /orders: 100 entries a second, 150 in second 20; 20 ms each,
	// 40 ms in second 30; 10 failures in seconds 40 to 44, 50 in second
	// 50. GET /cache: 10 a second, answered at once. GET /rare: 10
	// seconds of traffic.
	for i := range 60 {
		orders := load{Resource: "GET /orders", N: 100, RT: 20 * time.Millisecond}
		switch {
		case i == 20:
			orders.N = 150
		case i == 30:
			orders.RT = 40 * time.Millisecond
		case i >= 40 && i < 45:
			orders.Failed = 10
		case i == 50:
			orders.Failed = 50
		}
		loads := []load{orders, {Resource: "GET /cache", N: 10}}
		if i%6 == 0 {
			loads = append(loads, load{Resource: "GET /rare", N: 3, RT: time.Millisecond})
		}
		driveSecond(t, e, clk, loads...)
	}

	sg := e.Suggest(10*time.Minute, 0)
	assert.Equal(t, 1.3, sg.Factor, "the default")
	assert.Equal(t, start, sg.From, "the span starts at the first minute")
	assert.Equal(t, start.Add(time.Minute), sg.To, "and ends at the last whole second")
	require.Len(t, sg.Resources, 3)
	assert.Equal(t, []string{"GET /cache", "GET /orders", "GET /rare"},
		[]string{sg.Resources[0].Resource, sg.Resources[1].Resource, sg.Resources[2].Resource})

	orders := baselineOf(t, sg, "GET /orders")
	assert.Equal(t, 60, orders.Seconds)
	assert.Equal(t, int64(59*100+150), orders.Passed)
	assert.Equal(t, orders.Passed, orders.Succeeded)
	assert.Equal(t, int64(5*10+50), orders.Failed)
	assert.Zero(t, orders.Blocked)
	assert.Equal(t, int64(150), orders.PeakQPS)
	assert.Equal(t, start.Add(20*time.Second), orders.PeakAt)
	assert.Equal(t, 0.5, orders.PeakErrorRatio)
	assert.Equal(t, 40*time.Millisecond, orders.PeakAvgRT)
	assert.Empty(t, orders.Note)
	assert.Equal(t, []flow.Rule{flow.Rule{Resource: "GET /orders", Count: 195, Shadow: true}.WithDefaults()}, orders.Flow,
		"ceil(1.3 × 150)")
	assert.Equal(t, []circuitbreaker.Rule{
		circuitbreaker.Rule{Resource: "GET /orders", Grade: circuitbreaker.SlowRequestRatio, Count: 52, // ceil(1.3 × 40 ms)
			SlowRatioThreshold: 0.5, TimeWindow: 10, MinRequestAmount: 5, StatIntervalMs: 1000, Shadow: true}.WithDefaults(),
		circuitbreaker.Rule{Resource: "GET /orders", Grade: circuitbreaker.ErrorRatio, Count: 0.65, // 1.3 × 0.5
			TimeWindow: 10, MinRequestAmount: 5, StatIntervalMs: 1000, Shadow: true}.WithDefaults(),
	}, orders.CircuitBreaker)

	cache := baselineOf(t, sg, "GET /cache")
	assert.Equal(t, int64(10), cache.PeakQPS)
	assert.Equal(t, start, cache.PeakAt, "the first second with the peak")
	require.Len(t, cache.Flow, 1)
	assert.Equal(t, 13.0, cache.Flow[0].Count)
	require.Len(t, cache.CircuitBreaker, 2)
	assert.Equal(t, circuitbreaker.SlowRequestRatio, cache.CircuitBreaker[0].Grade)
	assert.Equal(t, 10.0, cache.CircuitBreaker[0].Count, "calls under a millisecond: the 10 ms floor")
	assert.Equal(t, circuitbreaker.ErrorRatio, cache.CircuitBreaker[1].Grade)
	assert.Equal(t, 0.1, cache.CircuitBreaker[1].Count, "no errors seen: the margin")
	assert.Empty(t, cache.Note)

	rare := baselineOf(t, sg, "GET /rare")
	assert.Equal(t, 10, rare.Seconds)
	assert.Empty(t, rare.Flow)
	assert.Empty(t, rare.CircuitBreaker)
	assert.Equal(t, "no flow rule: 10 s with entries passed, 30 needed; no breaker: 0 s with at least 5 completed entries, 30 needed", rare.Note)

	// The rule set: the rules in force, the shadow rule of GET /orders
	// replaced, the suggestions after them.
	assert.Equal(t, []flow.Rule{inForce[0], inForce[2], cache.Flow[0], orders.Flow[0]}, sg.Rules.Flow)
	assert.Equal(t, append(slices.Clone(cache.CircuitBreaker), orders.CircuitBreaker...), sg.Rules.CircuitBreaker)
	for _, r := range sg.Rules.CircuitBreaker {
		assert.True(t, r.Shadow)
		require.NoError(t, r.Validate())
	}
	doc, err := converter.RuleSet().Encode(sg.Rules)
	require.NoError(t, err)
	back, err := converter.RuleSet().Convert(doc)
	require.NoError(t, err)
	assert.Equal(t, sg.Rules, back, "the rule set survives its document")
	require.NoError(t, e.LoadRuleSet(sg.Rules), "and loads")

	assert.Equal(t, 300.0, e.Suggest(10*time.Minute, 2).Resources[1].Flow[0].Count, "factor 2")
}

// TestSuggestSpan checks that a suggestion covers the minutes of its
// period, and no more than the hour the engine keeps.
func TestSuggestSpan(t *testing.T) {
	clk := testclock.New()
	start := clk.Now()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	for i := range 60 {
		driveSecond(t, e, clk, load{Resource: "r", N: 100 + i, RT: time.Millisecond})
	}
	clk.Advance(5 * time.Minute)
	assert.Empty(t, e.Suggest(4*time.Minute, 1.3).Resources, "the traffic ended five minutes ago")
	sg := e.Suggest(6*time.Minute, 1.3)
	require.Len(t, sg.Resources, 1)
	assert.Equal(t, int64(159), sg.Resources[0].PeakQPS)
	assert.Equal(t, start, sg.From)

	// An hour and more later, new traffic: the old is gone from the
	// ring, even for the longest period.
	clk.Advance(70 * time.Minute)
	for range 40 {
		driveSecond(t, e, clk, load{Resource: "r", N: 50, RT: time.Millisecond})
	}
	sg = e.Suggest(0, 1.3)
	require.Len(t, sg.Resources, 1)
	assert.Equal(t, int64(50), sg.Resources[0].PeakQPS)
	assert.Equal(t, 40, sg.Resources[0].Seconds)
	assert.Equal(t, int64(40*50), sg.Resources[0].Passed)
	// now is 60 s + 5 min + 70 min + 40 s after the start, 4600 s: the
	// hour before it starts in its 16th minute.
	assert.Equal(t, start.Add(4600*time.Second), sg.To)
	assert.Equal(t, start.Add(16*time.Minute), sg.From, "0 means an hour")
}

// TestSuggestFromDemand: a resource that a rule in force holds down is
// suggested from its demand (passed and blocked entries per second), not
// from the limit it has; entries that an authority rule refuses are not
// demand.
func TestSuggestFromDemand(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, e.Flow().Load([]flow.Rule{qps("GET /orders", 20)}))
	require.NoError(t, e.Authority().Load([]authority.Rule{{Resource: "GET /orders", LimitApp: "scraper",
		Strategy: authority.Black}}))
	// 40 s: 25 calls a second from callers, 5 of them over the limit,
	// and 30 from a caller the authority rule refuses; 10 calls a
	// second to GET /free, which no rule limits.
	for range 40 {
		driveSecond(t, e, clk,
			load{Resource: "GET /orders", N: 25, Blocked: 5, RT: 20 * time.Millisecond},
			load{Resource: "GET /orders", Origin: "scraper", N: 30, Blocked: 30},
			load{Resource: "GET /free", N: 10, RT: 20 * time.Millisecond})
	}
	sg := e.Suggest(10*time.Minute, 1.5)

	b := baselineOf(t, sg, "GET /orders")
	assert.Equal(t, int64(40*20), b.Passed)
	assert.Equal(t, int64(40*35), b.Blocked, "every block is in the totals")
	assert.Equal(t, int64(20), b.PeakQPS, "the limit in force")
	assert.Equal(t, int64(25), b.PeakDemand, "passed and blocked by flow, not by authority")
	require.Len(t, b.Flow, 1)
	assert.Equal(t, 38.0, b.Flow[0].Count, "ceil(1.5 × 25), not 1.5 × the limit of 20")
	assert.Equal(t, "flow count from the peak demand 25/s (passed and blocked), not the 20/s passed: rules in force blocked the rest", b.Note)

	free := baselineOf(t, sg, "GET /free")
	assert.Equal(t, int64(10), free.PeakQPS)
	assert.Equal(t, int64(10), free.PeakDemand, "nothing blocked: the demand is what passed")
	assert.Equal(t, 15.0, free.Flow[0].Count)
	assert.Empty(t, free.Note)
}

// TestSuggestSlowCallFloor: the slow-call threshold is factor × the peak
// average RT, but at least 10 ms: a 1.4 ms peak would otherwise make it
// 2 ms, which any pause trips.
func TestSuggestSlowCallFloor(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	for range 40 {
		driveSecond(t, e, clk,
			load{Resource: "fast", N: 3, RT: time.Millisecond}, // 3 × 1 ms + 2 × 2 ms: 1.4 ms on average
			load{Resource: "fast", N: 2, RT: 2 * time.Millisecond},
			load{Resource: "mid", N: 5, RT: 9 * time.Millisecond})
	}
	sg := e.Suggest(10*time.Minute, 1.3)
	slow := func(resource string) circuitbreaker.Rule {
		b := baselineOf(t, sg, resource)
		require.NotEmpty(t, b.CircuitBreaker, resource)
		require.Equal(t, circuitbreaker.SlowRequestRatio, b.CircuitBreaker[0].Grade, resource)
		return b.CircuitBreaker[0]
	}
	assert.Equal(t, 1400*time.Microsecond, baselineOf(t, sg, "fast").PeakAvgRT)
	assert.Equal(t, 10.0, slow("fast").Count, "ceil(1.3 × 1.4 ms) is 2 ms: the floor")
	assert.Equal(t, 12.0, slow("mid").Count, "ceil(1.3 × 9 ms), above the floor")
}

// manualClock is a core.Clock that moves only when told, so that the
// example measures a minute of traffic without waiting for it.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func ExampleEngine_Suggest() {
	clk := &manualClock{t: time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)}
	e := core.NewEngine(core.WithClock(clk))
	defer e.Close()

	// A minute of traffic: 80 calls a second, 120 in one of them.
	for s := range 60 {
		n := 80
		if s == 42 {
			n = 120
		}
		for range n {
			if en, err := e.Enter(context.Background(), "GET /orders"); err == nil {
				en.Exit()
			}
		}
		for range 2 { // read as often as the harvesting goroutine would
			clk.advance(500 * time.Millisecond)
			e.Stats()
		}
	}

	sg := e.Suggest(10*time.Minute, 1.3)
	b := sg.Resources[0]
	fmt.Printf("%s: peak %d/s at %s\n", b.Resource, b.PeakQPS, b.PeakAt.Format(time.TimeOnly))
	doc, _ := converter.FlowRules().Encode(sg.Rules.Flow)
	fmt.Print(string(doc))
	// Output:
	// GET /orders: peak 120/s at 14:00:42
	// [
	//   {"resource":"GET /orders","limitApp":"default","grade":1,"count":156,"strategy":0,"refResource":"","controlBehavior":0,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null,"shadow":true}
	// ]
}
