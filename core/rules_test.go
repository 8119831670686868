package core_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/rule"
	"github.com/bulwark-go/bulwark/core/system"
)

func TestLoadStrictRejectsWholeListNamingEveryBadRule(t *testing.T) {
	e, _ := newEngine(t, qps("a", 5))
	err := e.Flow().Load([]flow.Rule{
		qps("a", 1),
		qps("b", 1),
		{Resource: "c", Grade: flow.GradeQPS, Count: -1},
		{Resource: "", Grade: flow.GradeQPS, Count: 1, Strategy: flow.Relate},
	})
	require.ErrorIs(t, err, core.ErrInvalidRules)
	var verr *core.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.False(t, verr.Applied)
	require.Len(t, verr.Rules, 2)
	assert.Equal(t, 2, verr.Rules[0].Index)
	assert.Equal(t, 3, verr.Rules[1].Index)
	assert.Equal(t, "core: flow rules rejected, previous rules kept: rules[2].count: must be >= 0; "+
		"rules[3].resource: must not be empty; rules[3].refResource: must name a resource for strategy relate", err.Error())
	assert.Equal(t, []flow.Rule{qps("a", 5)}, e.Flow().Rules(), "nothing changed")
	assert.Equal(t, 5, passes(t, e, "a", 10))
}

func TestLoadLenientAppliesValidRules(t *testing.T) {
	e, _ := newEngine(t)
	e.Flow().SetLenient(true)
	err := e.Flow().Load([]flow.Rule{qps("a", 1), {Resource: "b", Count: -1}, qps("c", 2)})
	var verr *core.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Applied)
	require.Len(t, verr.Rules, 1)
	assert.Equal(t, 1, verr.Rules[0].Index)
	assert.Contains(t, err.Error(), "1 invalid flow rule(s) skipped: rules[1].count: must be >= 0")
	assert.Equal(t, []flow.Rule{qps("a", 1), qps("c", 2)}, e.Flow().Rules())
	assert.Equal(t, 1, passes(t, e, "a", 5))
}

func TestUnchangedRulesKeepState(t *testing.T) {
	paced := flow.Rule{Resource: "p", Grade: flow.GradeQPS, Count: 1, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 1}
	e, _ := newEngine(t, paced)
	require.Equal(t, 1, passes(t, e, "p", 1))
	require.Equal(t, 0, passes(t, e, "p", 1), "the next slot is a second away")
	// Another rule changes; the pacer of the unchanged rule keeps its timeline.
	require.NoError(t, e.Flow().Load([]flow.Rule{paced, qps("other", 5)}))
	assert.Equal(t, 0, passes(t, e, "p", 1), "state kept")
	// The same resources at the same places (the swap pairs rules by
	// place): still kept.
	require.NoError(t, e.Flow().Load([]flow.Rule{paced, qps("other", 6)}))
	assert.Equal(t, 0, passes(t, e, "p", 1), "state kept by place")
	assert.Equal(t, 6, passes(t, e, "other", 9), "the other rule changed")
	// A changed rule starts afresh.
	changed := paced
	changed.Count = 2
	require.NoError(t, e.Flow().Load([]flow.Rule{changed}))
	assert.Equal(t, 1, passes(t, e, "p", 1), "new rule, new timeline")
}

func TestStatisticsSurviveRuleChanges(t *testing.T) {
	e, _ := newEngine(t, qps("s", 10))
	require.Equal(t, 6, passes(t, e, "s", 6))
	require.NoError(t, e.Flow().Load([]flow.Rule{qps("s", 8)}))
	assert.Equal(t, 2, passes(t, e, "s", 10), "the window still holds the 6 passes")
}

func TestIdenticalListIsSkipped(t *testing.T) {
	e, _ := newEngine(t)
	var changes atomic.Int32
	cancel := e.Flow().OnChange(func(core.RuleChange[flow.Rule]) { changes.Add(1) })
	defer cancel()
	rules := []flow.Rule{qps("a", 1), qps("b", 2)}
	require.NoError(t, e.Flow().Load(rules))
	require.NoError(t, e.Flow().Load([]flow.Rule{qps("a", 1), qps("b", 2)}))
	assert.Equal(t, int32(1), changes.Load())
}

func TestOnChangeDescribesTheSwap(t *testing.T) {
	e, clk := newEngine(t, qps("a", 1), qps("b", 2))
	var got []core.RuleChange[flow.Rule]
	cancel := e.Flow().OnChange(func(c core.RuleChange[flow.Rule]) { got = append(got, c) })
	require.NoError(t, e.Flow().Load([]flow.Rule{qps("a", 1), qps("b", 3), qps("c", 4)}))
	require.Len(t, got, 1)
	c := got[0]
	assert.Equal(t, []flow.Rule{qps("a", 1), qps("b", 2)}, c.Old)
	assert.Equal(t, []flow.Rule{qps("a", 1), qps("b", 3), qps("c", 4)}, c.New)
	assert.Equal(t, []flow.Rule{qps("b", 3), qps("c", 4)}, c.Added)
	assert.Equal(t, []flow.Rule{qps("b", 2)}, c.Removed)
	assert.Equal(t, []string{"b", "c"}, c.Resources)
	assert.WithinDuration(t, clk.Now(), c.Time, time.Millisecond)
	require.NoError(t, e.Flow().Load([]flow.Rule{qps("b", 3), qps("c", 5), qps("c", 4)}))
	require.Len(t, got, 2)
	assert.Equal(t, []string{"a", "c"}, got[1].Resources, "a removed, c given one more rule")
	cancel()
	require.NoError(t, e.Flow().Load(nil))
	assert.Len(t, got, 2, "cancelled")
}

func TestRulesReturnsACopy(t *testing.T) {
	e, _ := newEngine(t, qps("a", 1))
	r := e.Flow().Rules()
	r[0].Count = 99
	assert.Equal(t, 1.0, e.Flow().Rules()[0].Count)
}

func TestRegisterMovesToTheNewProperty(t *testing.T) {
	e, _ := newEngine(t)
	p1 := core.NewProperty[[]flow.Rule]()
	require.NoError(t, p1.Set([]flow.Rule{qps("a", 1)}))
	e.Flow().Register(p1)
	assert.Equal(t, []flow.Rule{qps("a", 1)}, e.Flow().Rules(), "the current value applies at once")

	p2 := core.NewProperty[[]flow.Rule]()
	e.Flow().Register(p2)
	require.NoError(t, p1.Set([]flow.Rule{qps("old", 1)}))
	assert.Equal(t, []flow.Rule{qps("a", 1)}, e.Flow().Rules(), "the old property is no longer heard")
	require.NoError(t, p2.Set([]flow.Rule{qps("b", 2)}))
	assert.Equal(t, []flow.Rule{qps("b", 2)}, e.Flow().Rules())

	err := p2.Set([]flow.Rule{{Resource: "bad", Count: -1}})
	require.ErrorIs(t, err, core.ErrInvalidRules, "Set reports the manager's rejection")
	assert.Equal(t, []flow.Rule{qps("b", 2)}, e.Flow().Rules())
}

func TestPropertyListeners(t *testing.T) {
	p := core.NewProperty[int]()
	_, ok := p.Get()
	assert.False(t, ok)
	var a, b []int
	cancelA := p.Listen(func(v int) error { a = append(a, v); return nil })
	require.NoError(t, p.Set(1))
	cancelB := p.Listen(func(v int) error { b = append(b, v); return errors.New("b refuses") })
	assert.Equal(t, []int{1}, b, "a new listener gets the current value at once")
	err := p.Set(2)
	assert.EqualError(t, err, "b refuses")
	v, ok := p.Get()
	assert.True(t, ok)
	assert.Equal(t, 2, v)
	cancelA()
	cancelB()
	require.NoError(t, p.Set(3))
	assert.Equal(t, []int{1, 2}, a)
	assert.Equal(t, []int{1, 2}, b)
}

// TestSwapIsAtomic swaps between two rule sets in a loop while entries run.
// In each set one rule blocks origin "x" and the other passes it, the roles
// swapped between sets; an entry that saw the passing rule of one set and
// the passing rule of the other would be admitted. None may be.
func TestSwapIsAtomic(t *testing.T) {
	set := func(even bool) []flow.Rule {
		named, all := 0.0, 1e12
		if !even {
			named, all = 1e12, 0
		}
		return []flow.Rule{
			{Resource: "r", LimitApp: "x", Grade: flow.GradeQPS, Count: named},
			{Resource: "r", LimitApp: "default", Grade: flow.GradeQPS, Count: all},
		}
	}
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, e.Flow().Load(set(true)))
	var admitted, blocked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				en, err := e.Enter(bg, "r", core.WithOrigin("x"))
				if err == nil {
					admitted.Add(1)
					en.Exit()
					continue
				}
				var be *core.BlockError
				if errors.As(err, &be) && be.Rule.(flow.Rule).Count == 0 {
					blocked.Add(1)
				}
			}
		}()
	}
	for i := 0; i < 2000; i++ {
		require.NoError(t, e.Flow().Load(set(i%2 == 1)))
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, admitted.Load(), "an entry saw a mix of two rule sets")
	assert.Positive(t, blocked.Load())
}

func TestGoRulesGetJavaDefaults(t *testing.T) {
	e, _ := newEngine(t, flow.Rule{Resource: "r", Count: 2})
	assert.Equal(t, 2, passes(t, e, "r", 5), "Count 2 with no Grade is 2 QPS, as {\"resource\":\"r\",\"count\":2}")
	assert.Equal(t, []flow.Rule{{Resource: "r", LimitApp: "default", Grade: flow.GradeQPS, Count: 2,
		WarmUpPeriodSec: 10, MaxQueueingTimeMs: 500}}, e.Flow().Rules(), "Rules holds the defaults")

	// A breaker without MinRequestAmount, StatIntervalMs and SlowRatioThreshold.
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{Resource: "b", Grade: circuitbreaker.ErrorCount, Count: 1, TimeWindow: 10}}))
	assert.Equal(t, []circuitbreaker.Rule{{Resource: "b", LimitApp: "default", Grade: circuitbreaker.ErrorCount, Count: 1, TimeWindow: 10,
		MinRequestAmount: 5, SlowRatioThreshold: 1, StatIntervalMs: 1000, RTSlowRequestAmount: 5}}, e.CircuitBreaker().Rules())

	// A system rule sets what it names; the rest is unset.
	require.NoError(t, e.System().Load([]system.Rule{{MaxThread: 100}}))
	assert.Equal(t, []system.Rule{{HighestSystemLoad: -1, HighestCPUUsage: -1, QPS: -1, AvgRT: -1, MaxThread: 100}}, e.System().Rules())

	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{{Resource: "h", Count: 1}}))
	assert.Equal(t, []hotspot.Rule{{Resource: "h", LimitApp: "default", Grade: flow.GradeQPS, Count: 1, DurationInSec: 1}}, e.Hotspot().Rules())
}

func TestDefaultsKeepState(t *testing.T) {
	e, _ := newEngine(t)
	var changes atomic.Int32
	cancel := e.Flow().OnChange(func(core.RuleChange[flow.Rule]) { changes.Add(1) })
	defer cancel()
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "a", Count: 1}}))
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "a", LimitApp: "default", Count: 1, WarmUpPeriodSec: 10, MaxQueueingTimeMs: 500}}))
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "a", Count: 1}}))
	assert.Equal(t, int32(1), changes.Load(), "a zero field and Java's default are the same rule")
}

func TestValidationErrorsAreTyped(t *testing.T) {
	e, _ := newEngine(t)
	err := e.System().Load([]system.Rule{{QPS: 10}, {}, {HighestCPUUsage: 2}})
	var verr *core.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, "core: system rules rejected, previous rules kept: "+
		"rules[1]: rule sets no threshold: set at least one of highestSystemLoad, highestCpuUsage, qps, avgRt, maxThread; "+
		"rules[2].highestCpuUsage: must be a ratio in (0, 1], or -1 to leave it unset; got 2", err.Error())

	var re core.RuleError
	require.ErrorAs(t, err, &re, "a ValidationError unwraps to its rule errors")
	assert.Equal(t, 1, re.Index)
	fe, ok := errors.AsType[*rule.FieldError](err)
	require.True(t, ok, "and they to their field errors")
	assert.Equal(t, "", fe.Field)

	fields := rule.Fields(verr.Rules[1].Err)
	require.Len(t, fields, 1)
	assert.Equal(t, "highestCpuUsage", fields[0].Field)
	assert.Equal(t, "must be a ratio in (0, 1], or -1 to leave it unset; got 2", fields[0].Err.Error())
}
