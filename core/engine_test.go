package core_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

var bg = context.Background()

// qps is a QPS rule as the engine holds it, with Java's defaults.
func qps(resource string, count float64) flow.Rule {
	return flow.Rule{Resource: resource, Grade: flow.GradeQPS, Count: count}.WithDefaults()
}

// passes enters resource n times and returns how many were admitted.
func passes(t *testing.T, e *core.Engine, resource string, n int, opts ...core.EntryOption) int {
	t.Helper()
	return passesCtx(t, bg, e, resource, n, opts...)
}

func passesCtx(t *testing.T, ctx context.Context, e *core.Engine, resource string, n int, opts ...core.EntryOption) int {
	t.Helper()
	ok := 0
	for i := 0; i < n; i++ {
		en, err := e.Enter(ctx, resource, opts...)
		if err != nil {
			require.ErrorIs(t, err, core.ErrBlocked)
			continue
		}
		ok++
		en.Exit()
	}
	return ok
}

func newEngine(t *testing.T, rules ...flow.Rule) (*core.Engine, *testclock.Clock) {
	t.Helper()
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { require.NoError(t, e.Close()) })
	require.NoError(t, e.Flow().Load(rules))
	return e, clk
}

func TestEnterPassesWithoutRules(t *testing.T) {
	e, _ := newEngine(t)
	assert.Equal(t, 100, passes(t, e, "free", 100))
}

func TestQPSRuleBlocksAndNamesTheRule(t *testing.T) {
	e, clk := newEngine(t, qps("api", 3))
	assert.Equal(t, 3, passes(t, e, "api", 10))
	_, err := e.Enter(bg, "api")
	var be *core.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, core.BlockFlow, be.Kind)
	assert.Equal(t, "api", be.Resource)
	assert.Equal(t, qps("api", 3), be.Rule)
	assert.Equal(t, "core: api blocked by flow rule QPS 3", err.Error())
	clk.Advance(time.Second)
	assert.Equal(t, 3, passes(t, e, "api", 10), "a new second")
}

func TestThreadRule(t *testing.T) {
	e, _ := newEngine(t, flow.Rule{Resource: "db", Grade: flow.GradeThread, Count: 2})
	a, err := e.Enter(bg, "db")
	require.NoError(t, err)
	b, err := e.Enter(bg, "db")
	require.NoError(t, err)
	_, err = e.Enter(bg, "db")
	require.ErrorIs(t, err, core.ErrBlocked)
	a.Exit()
	a.Exit() // twice is harmless
	c, err := e.Enter(bg, "db")
	require.NoError(t, err)
	b.Exit()
	c.Exit()
}

func TestWithCount(t *testing.T) {
	e, _ := newEngine(t, qps("batch", 10))
	assert.Equal(t, 2, passes(t, e, "batch", 5, core.WithCount(4)))
	assert.Equal(t, 2, passes(t, e, "batch", 5, core.WithCount(1)))
}

func TestBadCalls(t *testing.T) {
	e, _ := newEngine(t)
	//lint:ignore SA1012 a nil context is the bad call under test
	_, err := e.Enter(nil, "r")
	assert.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = e.Enter(bg, "")
	assert.ErrorIs(t, err, core.ErrInvalidArgument)
	_, err = e.Enter(bg, "r", core.WithCount(0))
	assert.ErrorIs(t, err, core.ErrInvalidArgument)
	assert.ErrorIs(t, e.Do(bg, "r", nil), core.ErrInvalidArgument)
	var en *core.Entry
	en.Exit() // a nil entry is harmless
	en.SetError(errors.New("x"))
}

func TestLimitAppNamedOtherDefault(t *testing.T) {
	e, clk := newEngine(t,
		flow.Rule{Resource: "svc", LimitApp: "appA", Grade: flow.GradeQPS, Count: 1},
		flow.Rule{Resource: "svc", LimitApp: "other", Grade: flow.GradeQPS, Count: 2},
		flow.Rule{Resource: "svc", LimitApp: "default", Grade: flow.GradeQPS, Count: 100},
	)
	// A named origin is limited on its own statistics by its rule only.
	assert.Equal(t, 1, passes(t, e, "svc", 5, core.WithOrigin("appA")))
	// "other": each origin no rule names gets its own 2 per second.
	assert.Equal(t, 2, passes(t, e, "svc", 5, core.WithOrigin("appB")))
	assert.Equal(t, 2, passes(t, e, "svc", 5, core.WithOrigin("appC")))
	// No origin: only "default" applies.
	assert.Equal(t, 20, passes(t, e, "svc", 20))
	clk.Advance(time.Second)
	// "default" counts everyone: 100 per second in total.
	e2, _ := newEngine(t, flow.Rule{Resource: "svc", Grade: flow.GradeQPS, Count: 5})
	assert.Equal(t, 3, passes(t, e2, "svc", 3, core.WithOrigin("x")))
	assert.Equal(t, 2, passes(t, e2, "svc", 5, core.WithOrigin("y")))
}

func TestRelateStrategy(t *testing.T) {
	// Writes are throttled when reads are busy.
	e, clk := newEngine(t, flow.Rule{Resource: "write", Grade: flow.GradeQPS, Count: 3, Strategy: flow.Relate, RefResource: "read"})
	assert.Equal(t, 5, passes(t, e, "write", 5), "reads are idle")
	clk.Advance(time.Second)
	assert.Equal(t, 10, passes(t, e, "read", 10), "the rule does not limit the related resource")
	assert.Equal(t, 0, passes(t, e, "write", 5), "reads are busy")
}

func TestChainStrategy(t *testing.T) {
	e, _ := newEngine(t, flow.Rule{Resource: "query", Grade: flow.GradeQPS, Count: 2, Strategy: flow.Chain, RefResource: "checkout"})
	checkout := core.WithContextName(bg, "checkout")
	browse := core.WithContextName(bg, "browse")
	assert.Equal(t, 2, passesCtx(t, checkout, e, "query", 5))
	assert.Equal(t, 5, passesCtx(t, browse, e, "query", 5), "another entrance is not limited")
	assert.Equal(t, 5, passes(t, e, "query", 5), "no entrance is not limited")
}

func TestRateLimiterWaitsThroughClock(t *testing.T) {
	e, clk := newEngine(t, flow.Rule{Resource: "pace", Grade: flow.GradeQPS, Count: 10, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 250})
	start := clk.Now()
	assert.Equal(t, 10, passes(t, e, "pace", 10), "each entry waits its turn")
	assert.Equal(t, 900*time.Millisecond, clk.Now().Sub(start), "ten entries 100 ms apart")
}

func TestRateLimiterWaitHonoursContext(t *testing.T) {
	e := core.NewEngine() // real time
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "pace", Grade: flow.GradeQPS, Count: 1, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 60_000}}))
	en, err := e.Enter(bg, "pace")
	require.NoError(t, err)
	en.Exit()
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = e.Enter(ctx, "pace")
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, core.ErrBlocked)
}

func TestPriorityOccupiesNextWindow(t *testing.T) {
	e, clk := newEngine(t, qps("hot", 10))
	assert.Equal(t, 10, passes(t, e, "hot", 10))
	clk.Advance(600 * time.Millisecond)
	assert.Equal(t, 0, passes(t, e, "hot", 1), "normal entries are rejected")
	before := clk.Now()
	en, err := e.Enter(bg, "hot", core.WithPriority())
	require.NoError(t, err, "a prioritized entry waits for the next bucket")
	en.Exit()
	assert.Equal(t, 400*time.Millisecond, clk.Now().Sub(before))
}

func TestDoRecordsErrorsAndPanics(t *testing.T) {
	e, _ := newEngine(t, flow.Rule{Resource: "job", Grade: flow.GradeThread, Count: 1})
	boom := errors.New("boom")
	assert.ErrorIs(t, e.Do(bg, "job", func(context.Context) error { return boom }), boom)
	assert.PanicsWithValue(t, "kaput", func() {
		_ = e.Do(bg, "job", func(context.Context) error { panic("kaput") })
	})
	// The panicking entry exited: the thread slot is free again.
	assert.NoError(t, e.Do(bg, "job", func(context.Context) error { return nil }))
}

func TestDoBlocked(t *testing.T) {
	e, _ := newEngine(t, qps("job", 0))
	called := false
	err := e.Do(bg, "job", func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, core.ErrBlocked)
	assert.False(t, called)
}

func TestDefaultIsShared(t *testing.T) {
	assert.Same(t, core.Default(), core.Default())
}

func TestManyResourcesStayBoundedButRulesAlwaysApply(t *testing.T) {
	e := core.NewEngine(core.WithMaxResources(10))
	require.NoError(t, e.Flow().Load([]flow.Rule{qps("guarded", 1)}))
	for i := 0; i < 100; i++ {
		en, err := e.Enter(bg, "/items/"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		require.NoError(t, err)
		en.Exit()
	}
	assert.Equal(t, 1, passes(t, e, "guarded", 5), "a resource with rules is checked whatever the bound")
}

func TestConcurrentEnterExitKeepsCounts(t *testing.T) {
	e, _ := newEngine(t, flow.Rule{Resource: "c", Grade: flow.GradeThread, Count: 1e9})
	var wg sync.WaitGroup
	var n atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				if err := e.Do(bg, "c", func(context.Context) error { return nil }); err == nil {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(4000), n.Load())
	// Concurrency is back to zero: a thread limit of 1 admits one entry.
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "c", Grade: flow.GradeThread, Count: 1}}))
	a, err := e.Enter(bg, "c")
	require.NoError(t, err)
	_, err = e.Enter(bg, "c")
	require.ErrorIs(t, err, core.ErrBlocked)
	a.Exit()
}
