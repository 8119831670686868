package core_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

var errBoom = errors.New("boom")

func ok(context.Context) error   { return nil }
func fail(context.Context) error { return errBoom }

// shadowLog records what OnShadowBlock tells.
type shadowLog struct {
	mu  sync.Mutex
	got []core.BlockError
}

func (l *shadowLog) on(b *core.BlockError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, *b)
}

func (l *shadowLog) list() []core.BlockError {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]core.BlockError(nil), l.got...)
}

func listen(t *testing.T, e *core.Engine) *shadowLog {
	l := &shadowLog{}
	t.Cleanup(e.OnShadowBlock(l.on))
	return l
}

// enterN enters resource n times and reports how many were admitted; each
// refusal must be a block of kind want.
func enterN(t *testing.T, e *core.Engine, resource string, n int, want core.BlockKind, opts ...core.EntryOption) int {
	t.Helper()
	k := 0
	for range n {
		en, err := e.Enter(bg, resource, opts...)
		if err != nil {
			assert.Equal(t, want, blockKind(t, err).Kind)
			continue
		}
		k++
		en.Exit()
	}
	return k
}

func TestShadowFlowBesideEnforcing(t *testing.T) {
	e := core.NewEngine(core.WithClock(testclock.New()))
	t.Cleanup(func() { _ = e.Close() })
	log := listen(t, e)
	loose, tight := qps("r", 5), qps("r", 2)
	tight.Shadow = true
	require.NoError(t, e.Flow().Load([]flow.Rule{loose, tight}))

	assert.Equal(t, 5, enterN(t, e, "r", 8, core.BlockFlow), "only the enforcing rule blocks")
	got := log.list()
	require.Len(t, got, 3, "entries 3 to 5 passed the enforcing rule and would have been blocked by the shadow one")
	assert.Equal(t, core.BlockFlow, got[0].Kind)
	assert.Equal(t, "r", got[0].Resource)
	assert.Equal(t, tight, got[0].Rule)

	r := resourceStats(t, e.Stats(), "r")
	assert.Equal(t, int64(5), r.Second.Passed)
	assert.Equal(t, int64(3), r.Second.BlockedBy[core.BlockFlow])
	assert.Equal(t, int64(3), r.Second.ShadowBlocked[core.BlockFlow])
	assert.Zero(t, r.Second.ShadowBlocked[core.BlockCircuitBreaker])

	// Turning the rule on is a change like any other: it now blocks.
	tight.Shadow = false
	require.NoError(t, e.Flow().Load([]flow.Rule{loose, tight}))
	assert.Zero(t, enterN(t, e, "r", 1, core.BlockFlow))
}

func TestShadowRateLimiterNeverWaits(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	log := listen(t, e)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "paced", Grade: flow.GradeQPS, Count: 10,
		ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 150, Shadow: true}}))
	start := clk.Now()
	assert.Equal(t, 10, enterN(t, e, "paced", 10, 0))
	assert.Equal(t, start, clk.Now(), "no entry waited for the shadow rule's pacing")
	assert.NotEmpty(t, log.list(), "entries past the queueing time would have been blocked")
}

func TestShadowBreakerRunsItsStateMachine(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	var tr transitions
	t.Cleanup(e.OnBreakerStateChange(tr.on))
	log := listen(t, e)
	shadow := breakerRule("db", circuitbreaker.ErrorRatio, 0.5)
	shadow.Shadow = true
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{shadow}))

	require.NoError(t, e.Do(bg, "db", ok))
	require.ErrorIs(t, e.Do(bg, "db", fail), errBoom)
	require.ErrorIs(t, e.Do(bg, "db", fail), errBoom) // 2 of 3 failed: open
	require.NoError(t, e.Do(bg, "db", ok), "an open shadow breaker rejects nothing")
	require.Len(t, log.list(), 1)
	assert.Equal(t, "breaker OPEN", log.list()[0].Detail)
	st := e.Stats()
	require.Len(t, st.Breakers, 1)
	assert.Equal(t, circuitbreaker.Open, st.Breakers[0].State, "its state is reported")
	assert.Equal(t, int64(1), resourceStats(t, st, "db").Second.ShadowBlocked[core.BlockCircuitBreaker])

	clk.Advance(5 * time.Second)
	probe, err := e.Enter(bg, "db")
	require.NoError(t, err)
	require.NoError(t, e.Do(bg, "db", ok), "a half-open shadow breaker rejects nothing either")
	assert.Equal(t, "breaker HALF_OPEN, probe in flight", log.list()[1].Detail)
	probe.Exit()
	assert.Equal(t, []string{"db:CLOSED->OPEN", "db:OPEN->HALF_OPEN", "db:HALF_OPEN->CLOSED"}, tr.list())
}

func TestShadowBreakerBesideEnforcing(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	log := listen(t, e)
	shadow := breakerRule("db", circuitbreaker.ErrorCount, 1)
	shadow.Shadow = true
	enforcing := breakerRule("db", circuitbreaker.ErrorCount, 3)
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{shadow, enforcing}))
	for range 3 {
		require.ErrorIs(t, e.Do(bg, "db", fail), errBoom)
	}
	// 3 errors: past the shadow breaker's threshold, not the enforcing one's.
	require.NoError(t, e.Do(bg, "db", ok))
	assert.Len(t, log.list(), 1)
	require.ErrorIs(t, e.Do(bg, "db", fail), errBoom) // 4 errors > 3: both open
	err := e.Do(bg, "db", ok)
	blocker := blockKind(t, err).Rule.(circuitbreaker.Rule)
	assert.False(t, blocker.Shadow, "the enforcing breaker blocks")
	assert.Equal(t, 3.0, blocker.Count)
	assert.Len(t, log.list(), 3, "the shadow breaker, checked first, counted the last two entries too")
}

func TestShadowSystemBesideEnforcing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := &fakeCollector{load: 0.5, cpu: 0.9}
		e := core.NewEngine(core.WithSystemCollector(fc))
		defer e.Close()
		log := listen(t, e)
		shadow := sysRule(func(r *system.Rule) { r.HighestCPUUsage = 0.8; r.Shadow = true })
		enforcing := sysRule(func(r *system.Rule) { r.HighestCPUUsage = 0.95 })
		require.NoError(t, e.System().Load([]system.Rule{shadow, enforcing}))

		assert.Equal(t, 2, enterN(t, e, "any", 2, 0, core.Inbound()))
		got := log.list()
		require.Len(t, got, 2)
		assert.Equal(t, "any", got[0].Resource)
		assert.Equal(t, shadow, got[0].Rule)
		assert.Equal(t, int64(2), resourceStats(t, e.Stats(), "any").Second.ShadowBlocked[core.BlockSystem])

		fc.set(0.5, 0.99)
		time.Sleep(time.Second) // the collector's next tick (synctest's clock)
		synctest.Wait()         // and its reading
		assert.Zero(t, enterN(t, e, "any", 1, core.BlockSystem, core.Inbound()))
		assert.Len(t, log.list(), 2, "a blocked entry is not also a shadow block")
	})
}

func TestShadowAuthorityBesideEnforcing(t *testing.T) {
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	log := listen(t, e)
	require.NoError(t, e.Authority().Load([]authority.Rule{
		{Resource: "pay", LimitApp: "crawler", Strategy: authority.Black, Shadow: true},
		{Resource: "pay", LimitApp: "bot", Strategy: authority.Black},
	}))
	assert.Equal(t, 1, enterN(t, e, "pay", 1, 0, core.WithOrigin("crawler")))
	assert.Zero(t, enterN(t, e, "pay", 1, core.BlockAuthority, core.WithOrigin("bot")))
	assert.Equal(t, 1, enterN(t, e, "pay", 1, 0, core.WithOrigin("web")))
	got := log.list()
	require.Len(t, got, 1)
	assert.Equal(t, core.BlockAuthority, got[0].Kind)
	r := resourceStats(t, e.Stats(), "pay")
	assert.Equal(t, int64(1), r.Second.ShadowBlocked[core.BlockAuthority])
	assert.Equal(t, int64(1), r.Second.BlockedBy[core.BlockAuthority])
}

func TestShadowHotspot(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	log := listen(t, e)
	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{
		{Resource: "item", Grade: flow.GradeQPS, Count: 1, DurationInSec: 1, Shadow: true},
		{Resource: "item", Grade: flow.GradeQPS, Count: 10, DurationInSec: 1, ControlBehavior: flow.RateLimiter,
			MaxQueueingTimeMs: 1, Shadow: true},
	}))
	start := clk.Now()
	assert.Equal(t, 3, enterN(t, e, "item", 3, 0, core.WithArgs("k")))
	assert.Equal(t, start, clk.Now(), "no entry waited for a shadow rule's pacing")
	assert.Len(t, log.list(), 4, "two entries past each rule")
	assert.Equal(t, int64(4), resourceStats(t, e.Stats(), "item").Second.ShadowBlocked[core.BlockHotspot])
}

// TestShadowBlockAllocatesNothing: an entry that shadow rules would have
// blocked, counted and told to a listener, costs no allocation.
func TestShadowBlockAllocatesNothing(t *testing.T) {
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	n := 0
	t.Cleanup(e.OnShadowBlock(func(*core.BlockError) { n++ }))
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 0, Shadow: true}}))
	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 0, DurationInSec: 1, Shadow: true}}))
	require.NoError(t, e.Authority().Load([]authority.Rule{{Resource: "r", LimitApp: "app", Strategy: authority.Black, Shadow: true}}))
	allocs := testing.AllocsPerRun(100, func() {
		en, err := e.Enter(bg, "r", core.WithOrigin("app"), core.WithArgs("k"))
		if err != nil {
			t.Fatal(err)
		}
		en.Exit()
	})
	assert.Zero(t, allocs, "allocations per shadow-blocked Enter and Exit")
	assert.Equal(t, 3*101, n, "three shadow rules, 101 entries (one warm-up)")
}

func TestShadowBlocksInMinuteTotalAndHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		shadow := qps("r", 2)
		shadow.Shadow = true
		require.NoError(t, e.Flow().Load([]flow.Rule{shadow}))
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, 5, enterN(t, e, "r", 5, 0))

		time.Sleep(2 * time.Second)
		r := resourceStats(t, e.Stats(), "r")
		assert.Zero(t, r.Second.ShadowBlocked[core.BlockFlow], "the second window slid past")
		assert.Equal(t, int64(3), r.Minute.ShadowBlocked[core.BlockFlow])
		assert.Equal(t, int64(3), r.Total.ShadowBlocked[core.BlockFlow])
		assert.Equal(t, int64(5), r.Total.Passed)
		assert.Zero(t, r.Total.Blocked)
		h := e.History("r")
		require.Len(t, h, 60)
		assert.Equal(t, int64(3), h[58].ShadowBlocked[core.BlockFlow])
	})
}

// Blocks are told apart by kind in a resource's striped statistics too
// (a resource with a flow rule counts on a line per core): a system rule's
// blocks use the slot a striped window keeps its completions apart from.
func TestBlockedByKindStriped(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: 1e9}}))
		require.NoError(t, e.System().Load([]system.Rule{sysRule(func(r *system.Rule) { r.QPS = 2 })}))
		assert.Equal(t, 2, enterN(t, e, "r", 5, core.BlockSystem, core.Inbound()))
		r := resourceStats(t, e.Stats(), "r")
		assert.Equal(t, int64(3), r.Second.BlockedBy[core.BlockSystem])
		assert.Equal(t, int64(3), r.Second.Blocked)
	})
}
