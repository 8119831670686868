package core_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
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

func blockKind(t *testing.T, err error) *core.BlockError {
	t.Helper()
	var be *core.BlockError
	require.ErrorAs(t, err, &be)
	require.ErrorIs(t, err, core.ErrBlocked)
	return be
}

type transitions struct {
	mu    sync.Mutex
	got   []string
	times []time.Time
}

func (tr *transitions) on(c circuitbreaker.StateChange) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.got = append(tr.got, c.Rule.Resource+":"+c.From.String()+"->"+c.To.String())
	tr.times = append(tr.times, c.Time)
}

// at returns when transition i was made.
func (tr *transitions) at(i int) time.Time {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.times[i]
}

func (tr *transitions) list() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.got...)
}

func breakerRule(res string, g circuitbreaker.Grade, count float64) circuitbreaker.Rule {
	return circuitbreaker.Rule{Resource: res, Grade: g, Count: count, TimeWindow: 5, MinRequestAmount: 3,
		StatIntervalMs: 1000, SlowRatioThreshold: 0.5}
}

func TestBreakerThroughEngine(t *testing.T) {
	eachClock(t, func(t *testing.T, clk *engineClock) {
		e := clk.engine(t)
		var tr transitions
		cancel := e.OnBreakerStateChange(tr.on)
		defer cancel()
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{breakerRule("db", circuitbreaker.ErrorRatio, 0.5)}))
		ctx := context.Background()
		boom := errors.New("boom")
		fail := func(context.Context) error { return boom }
		ok := func(context.Context) error { return nil }

		require.NoError(t, e.Do(ctx, "db", ok))
		require.ErrorIs(t, e.Do(ctx, "db", fail), boom)
		require.ErrorIs(t, e.Do(ctx, "db", fail), boom) // 2 of 3 failed: open
		err := e.Do(ctx, "db", ok)
		be := blockKind(t, err)
		assert.Equal(t, core.BlockCircuitBreaker, be.Kind)
		assert.Equal(t, "db", be.Resource)
		assert.Equal(t, "breaker OPEN", be.Detail)
		assert.Contains(t, err.Error(), "degrade rule errorRatio 0.5 timeWindow=5s")
		opened := clk.Now()
		assert.WithinDuration(t, opened, tr.at(0), 0, "a transition's time is the engine clock's")

		clk.Advance(5 * time.Second)
		probe, err := e.Enter(ctx, "db")
		require.NoError(t, err, "the probe passes after timeWindow")
		assert.WithinDuration(t, opened.Add(5*time.Second), tr.at(1), 0)
		_, err = e.Enter(ctx, "db")
		assert.Equal(t, "breaker HALF_OPEN, probe in flight", blockKind(t, err).Detail)
		probe.Exit()
		require.NoError(t, e.Do(ctx, "db", ok), "a successful probe closed the breaker")
		assert.Equal(t, []string{"db:CLOSED->OPEN", "db:OPEN->HALF_OPEN", "db:HALF_OPEN->CLOSED"}, tr.list())

		// Entry.SetError counts too: ok, error, error is 2 of 3.
		for range 2 {
			en, err := e.Enter(ctx, "db")
			require.NoError(t, err)
			en.SetError(boom)
			en.Exit()
		}
		_, err = e.Enter(ctx, "db")
		blockKind(t, err)

		cancel()
		clk.Advance(5 * time.Second)
		en, err := e.Enter(ctx, "db")
		require.NoError(t, err)
		en.Exit()
		assert.Len(t, tr.list(), 4, "a cancelled listener hears nothing more")
	})
}

func TestBreakerSlowProbeThroughEngine(t *testing.T) {
	eachClock(t, func(t *testing.T, clk *engineClock) {
		e := clk.engine(t)
		var tr transitions
		e.OnBreakerStateChange(tr.on)
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{breakerRule("api", circuitbreaker.SlowRequestRatio, 100)}))
		ctx := context.Background()
		call := func(d time.Duration) error {
			en, err := e.Enter(ctx, "api")
			if err != nil {
				return err
			}
			clk.Advance(d)
			en.Exit()
			return nil
		}
		for range 3 {
			require.NoError(t, call(150*time.Millisecond))
		}
		blockKind(t, call(0))
		clk.Advance(5 * time.Second)
		require.NoError(t, call(101*time.Millisecond), "the probe")
		blockKind(t, call(0))
		clk.Advance(5 * time.Second)
		require.NoError(t, call(100*time.Millisecond), "a probe of exactly count ms is not slow")
		require.NoError(t, call(0))
		assert.Equal(t, []string{
			"api:CLOSED->OPEN", "api:OPEN->HALF_OPEN", "api:HALF_OPEN->OPEN",
			"api:OPEN->HALF_OPEN", "api:HALF_OPEN->CLOSED",
		}, tr.list())
	})
}

// A probe that a later check (here a second breaker of the resource)
// blocks sends its breaker back to OPEN, and the next entry may probe.
func TestProbeBlockedLater(t *testing.T) {
	eachClock(t, func(t *testing.T, clk *engineClock) {
		e := clk.engine(t)
		var tr transitions
		e.OnBreakerStateChange(tr.on)
		short := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.ErrorCount, Count: 0, TimeWindow: 1, MinRequestAmount: 1, StatIntervalMs: 1000}
		long := short
		long.TimeWindow = 10
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{short, long}))
		ctx := context.Background()
		require.Error(t, e.Do(ctx, "r", func(context.Context) error { return errors.New("x") }))
		assert.Equal(t, []string{"r:CLOSED->OPEN", "r:CLOSED->OPEN"}, tr.list())

		clk.Advance(time.Second)
		_, err := e.Enter(ctx, "r")
		be := blockKind(t, err)
		assert.Equal(t, 10, be.Rule.(circuitbreaker.Rule).TimeWindow, "the long breaker blocked")
		assert.Equal(t, []string{"r:CLOSED->OPEN", "r:CLOSED->OPEN", "r:OPEN->HALF_OPEN", "r:HALF_OPEN->OPEN"}, tr.list())
		_, err = e.Enter(ctx, "r")
		blockKind(t, err)
		assert.Len(t, tr.list(), 6, "the short breaker probes again at once, and goes back to OPEN again")

		clk.Advance(9 * time.Second)
		en, err := e.Enter(ctx, "r")
		require.NoError(t, err, "both breakers let their probe through")
		en.Exit()
		_, err = e.Enter(ctx, "r")
		require.NoError(t, err, "both closed")
	})
}

func TestBreakerStateKeptAcrossSwaps(t *testing.T) {
	eachClock(t, func(t *testing.T, clk *engineClock) {
		e := clk.engine(t)
		r := breakerRule("r", circuitbreaker.ErrorCount, 0)
		r.MinRequestAmount = 1
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{r}))
		ctx := context.Background()
		require.Error(t, e.Do(ctx, "r", func(context.Context) error { return errors.New("x") }))
		_, err := e.Enter(ctx, "r")
		blockKind(t, err)

		// Other kinds change, and a second breaker joins: the open one stays open.
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 100}}))
		other := breakerRule("r", circuitbreaker.ErrorRatio, 0.9)
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{other, r}))
		_, err = e.Enter(ctx, "r")
		assert.Equal(t, r.WithDefaults(), blockKind(t, err).Rule)

		// A changed rule is a new breaker, closed.
		r.TimeWindow = 7
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{r}))
		en, err := e.Enter(ctx, "r")
		require.NoError(t, err)
		en.Exit()
	})
}

// The average-RT strategy over a timeline of calls that each take 200 ms
// against a count of 100 ms.
func TestAvgRTThroughEngine(t *testing.T) {
	eachClock(t, func(t *testing.T, clk *engineClock) {
		e := clk.engine(t)
		r := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.AvgRT, Count: 100, TimeWindow: 2,
			MinRequestAmount: 5, StatIntervalMs: 1000, RTSlowRequestAmount: 3}
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{r}))
		ctx := context.Background()
		call := func() error {
			en, err := e.Enter(ctx, "r")
			if err != nil {
				return err
			}
			clk.Advance(200 * time.Millisecond)
			en.Exit()
			return nil
		}
		require.NoError(t, call(), "nothing completed yet: average 0")
		require.NoError(t, call(), "counter 1")
		require.NoError(t, call(), "counter 2")
		blockKind(t, call())
		clk.Advance(1999 * time.Millisecond)
		blockKind(t, call())
		clk.Advance(time.Millisecond)
		// The window has emptied: the average is 0 again.
		require.NoError(t, call())

		// RT samples are capped by WithMaxRT: a 10 s call counts as 50 ms.
		e2 := clk.engine(t, core.WithMaxRT(50*time.Millisecond))
		require.NoError(t, e2.CircuitBreaker().Load([]circuitbreaker.Rule{r}))
		en, err := e2.Enter(ctx, "r")
		require.NoError(t, err)
		clk.Advance(10 * time.Second)
		en.Exit()
		for range 5 {
			en, err := e2.Enter(ctx, "r")
			require.NoError(t, err)
			en.Exit()
		}
	})
}

type fakeCollector struct {
	mu     sync.Mutex
	load   float64
	cpu    float64
	cpuErr error
	calls  int
}

func (f *fakeCollector) Load1() (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.load, nil
}

func (f *fakeCollector) CPUUsage() (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cpu, f.cpuErr
}

func (f *fakeCollector) set(load, cpu float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.load, f.cpu = load, cpu
}

func (f *fakeCollector) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func sysRule(edit func(*system.Rule)) system.Rule {
	r := system.Rule{HighestSystemLoad: system.Unset, HighestCPUUsage: system.Unset, QPS: system.Unset,
		AvgRT: system.Unset, MaxThread: system.Unset}
	edit(&r)
	return r
}

func TestSystemWithInjectedCollector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := &fakeCollector{load: 0.5, cpu: 0.9}
		e := core.NewEngine(core.WithSystemCollector(fc))
		defer e.Close()
		ctx := context.Background()
		cpu := sysRule(func(r *system.Rule) { r.HighestCPUUsage = 0.8 })
		require.NoError(t, e.System().Load([]system.Rule{cpu}))

		_, err := e.Enter(ctx, "any", core.Inbound())
		be := blockKind(t, err)
		assert.Equal(t, core.BlockSystem, be.Kind)
		assert.Equal(t, "any", be.Resource)
		assert.Equal(t, cpu, be.Rule)
		assert.Equal(t, "cpu usage above 0.8", be.Detail)
		assert.Contains(t, err.Error(), "system rule cpu=0.8")
		en, err := e.Enter(ctx, "any")
		require.NoError(t, err, "system rules check inbound entries only")
		en.Exit()

		fc.set(0.5, 0.7)
		time.Sleep(time.Second) // the collector's next tick
		synctest.Wait()
		en, err = e.Enter(ctx, "any", core.Inbound())
		require.NoError(t, err)
		en.Exit()

		// Rules without load or CPU stop the collector.
		n := fc.count()
		require.NoError(t, e.System().Load([]system.Rule{sysRule(func(r *system.Rule) { r.QPS = 1000 })}))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, n, fc.count(), "the collector stopped")
		// And start it again.
		require.NoError(t, e.System().Load([]system.Rule{cpu}))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		assert.Equal(t, n+4, fc.count(), "one reading at load, one per second")
		require.NoError(t, e.Close())
		require.NoError(t, e.Close())
		time.Sleep(3 * time.Second)
		synctest.Wait()
		assert.Equal(t, n+4, fc.count(), "Close stopped it")
		// After Close, loading rules starts nothing; load and CPU checks are off.
		require.NoError(t, e.System().Load([]system.Rule{cpu, sysRule(func(r *system.Rule) { r.HighestSystemLoad = 0.1 })}))
		en, err = e.Enter(ctx, "any", core.Inbound())
		require.NoError(t, err)
		en.Exit()
	})
}

func TestSystemMetricUnavailableIsLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
		fc := &fakeCollector{load: 9, cpuErr: errors.New("no cpu here")}
		e := core.NewEngine(core.WithSystemCollector(fc), core.WithLogger(log))
		defer e.Close()
		require.NoError(t, e.System().Load([]system.Rule{sysRule(func(r *system.Rule) { r.HighestCPUUsage = 0.01 })}))
		time.Sleep(5 * time.Second)
		synctest.Wait()
		en, err := e.Enter(context.Background(), "r", core.Inbound())
		require.NoError(t, err, "an unreadable metric never blocks")
		en.Exit()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, 1, strings.Count(buf.String(), "system metric unavailable"), buf.String())
		assert.Contains(t, buf.String(), "no cpu here")
	})
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestSystemBBRThroughEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := &fakeCollector{load: 10}
		e := core.NewEngine(core.WithSystemCollector(fc))
		defer e.Close()
		require.NoError(t, e.System().Load([]system.Rule{sysRule(func(r *system.Rule) { r.HighestSystemLoad = 2 })}))
		ctx := context.Background()
		a, err := e.Enter(ctx, "r", core.Inbound())
		require.NoError(t, err, "nothing in flight")
		b, err := e.Enter(ctx, "r", core.Inbound())
		require.NoError(t, err, "one in flight: BBR passes")
		_, err = e.Enter(ctx, "r", core.Inbound())
		assert.Equal(t, core.BlockSystem, blockKind(t, err).Kind, "two in flight, no completion: capacity 0")
		a.Exit()
		b.Exit()
		fc.set(1, 0)
		time.Sleep(time.Second)
		synctest.Wait()
		for range 5 {
			en, err := e.Enter(ctx, "r", core.Inbound())
			require.NoError(t, err, "load below the threshold")
			defer en.Exit()
		}
	})
}

func TestSystemRulesCombineByMinimum(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	defer e.Close()
	rules := []system.Rule{
		sysRule(func(r *system.Rule) { r.QPS = 5; r.MaxThread = 100 }),
		sysRule(func(r *system.Rule) { r.QPS = 3 }),
		sysRule(func(r *system.Rule) { r.MaxThread = 2 }),
	}
	require.NoError(t, e.System().Load(rules))
	ctx := context.Background()
	var held []*core.Entry
	for range 3 {
		en, err := e.Enter(ctx, "r", core.Inbound())
		require.NoError(t, err)
		held = append(held, en)
	}
	_, err := e.Enter(ctx, "r", core.Inbound())
	be := blockKind(t, err)
	assert.Equal(t, rules[1], be.Rule, "QPS 3 of the second rule")
	for _, en := range held {
		en.Exit()
	}
	clk.Advance(time.Second)
	for range 3 {
		en, err := e.Enter(ctx, "r", core.Inbound())
		require.NoError(t, err, "in flight before it: 0, 1, 2, not above 2")
		defer en.Exit()
	}
	clk.Advance(time.Second)
	_, err = e.Enter(ctx, "r", core.Inbound())
	be = blockKind(t, err)
	assert.Equal(t, rules[2], be.Rule, "three in flight: above MaxThread 2 of the third rule")
	assert.Equal(t, "inbound concurrency above 2", be.Detail)
}

func TestAuthorityThroughEngine(t *testing.T) {
	e := core.NewEngine()
	ctx := context.Background()
	require.NoError(t, e.Authority().Load([]authority.Rule{
		{Resource: "admin", LimitApp: "ops,sre", Strategy: authority.White},
		{Resource: "pay", LimitApp: "crawler", Strategy: authority.Black},
	}))
	try := func(res, origin string) error {
		opts := []core.EntryOption{}
		if origin != "" {
			opts = append(opts, core.WithOrigin(origin))
		}
		en, err := e.Enter(ctx, res, opts...)
		if err == nil {
			en.Exit()
		}
		return err
	}
	assert.NoError(t, try("admin", "ops"))
	assert.NoError(t, try("admin", "sre"))
	err := try("admin", "web")
	be := blockKind(t, err)
	assert.Equal(t, core.BlockAuthority, be.Kind)
	assert.Contains(t, err.Error(), "authority rule white limitApp=ops,sre")
	assert.NoError(t, try("admin", ""), "no origin: not checked")
	assert.NoError(t, try("pay", "web"))
	blockKind(t, try("pay", "crawler"))
	assert.NoError(t, try("pay", ""))
}

func TestHotspotThroughEngine(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	ctx := context.Background()
	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{
		{Resource: "item", Grade: flow.GradeQPS, ParamIdx: -1, Count: 2, DurationInSec: 1,
			ParamFlowItemList: []hotspot.ParamFlowItem{{Object: "42", Count: 4, ClassType: "long"}}},
		{Resource: "user", Grade: flow.GradeThread, ParamIdx: 0, Count: 1, DurationInSec: 1},
		{Resource: "paced", Grade: flow.GradeQPS, Count: 10, DurationInSec: 1,
			ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 150},
	}))
	passes := func(res string, n int, args ...any) int {
		k := 0
		for range n {
			en, err := e.Enter(ctx, res, core.WithArgs(args...))
			if err == nil {
				k++
				en.Exit()
			} else {
				assert.Equal(t, core.BlockHotspot, blockKind(t, err).Kind)
			}
		}
		return k
	}
	assert.Equal(t, 2, passes("item", 5, "x", 7))
	assert.Equal(t, 4, passes("item", 5, "x", 42), "the item threshold of 42")
	assert.Equal(t, 4, passes("item", 4, "x", int32(42)), "a budget per Go value")
	assert.Equal(t, 3, passes("item", 3), "no arguments pass")
	assert.Equal(t, 3, passes("item", 3, nil), "a nil argument passes")

	a, err := e.Enter(ctx, "user", core.WithArgs("alice"))
	require.NoError(t, err)
	_, err = e.Enter(ctx, "user", core.WithArgs("alice"))
	assert.Contains(t, blockKind(t, err).Error(), "paramFlow rule paramIdx=0 thread 1")
	b, err := e.Enter(ctx, "user", core.WithArgs("bob"))
	require.NoError(t, err)
	a.Exit()
	a.Exit() // twice: counted once
	a, err = e.Enter(ctx, "user", core.WithArgs("alice"))
	require.NoError(t, err)
	a.Exit()
	b.Exit()

	start := clk.Now()
	assert.Equal(t, 3, passes("paced", 3, "k"))
	assert.Equal(t, 200*time.Millisecond, clk.Now().Sub(start), "each entry after the first waited its 100 ms turn")
}

// Sentinel's order: authority → system → hot params → flow → breakers.
func TestCheckOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine(core.WithSystemCollector(&fakeCollector{cpu: 1}))
		defer e.Close()
		ctx := context.Background()
		br := breakerRule("r", circuitbreaker.ErrorCount, 0)
		br.MinRequestAmount = 1
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{br}))
		require.Error(t, e.Do(ctx, "r", func(context.Context) error { return errors.New("x") }))
		rs := core.RuleSet{
			Authority:      []authority.Rule{{Resource: "r", LimitApp: "bad", Strategy: authority.Black}},
			System:         []system.Rule{sysRule(func(r *system.Rule) { r.HighestCPUUsage = 0.5 })},
			Hotspot:        []hotspot.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 0, DurationInSec: 1}},
			Flow:           []flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 0}},
			CircuitBreaker: []circuitbreaker.Rule{br},
		}
		want := []core.BlockKind{core.BlockAuthority, core.BlockSystem, core.BlockHotspot, core.BlockFlow, core.BlockCircuitBreaker}
		for _, k := range want {
			require.NoError(t, e.LoadRuleSet(rs))
			_, err := e.Enter(ctx, "r", core.Inbound(), core.WithOrigin("bad"), core.WithArgs(1))
			assert.Equal(t, k, blockKind(t, err).Kind)
			switch k {
			case core.BlockAuthority:
				rs.Authority = nil
			case core.BlockSystem:
				rs.System = nil
			case core.BlockHotspot:
				rs.Hotspot = nil
			case core.BlockFlow:
				rs.Flow = nil
			}
		}
	})
}

func TestLoadRuleSet(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	ctx := context.Background()
	var flowChanges, breakerChanges, hotspotChanges int
	e.Flow().OnChange(func(core.RuleChange[flow.Rule]) { flowChanges++ })
	e.CircuitBreaker().OnChange(func(core.RuleChange[circuitbreaker.Rule]) { breakerChanges++ })
	e.Hotspot().OnChange(func(core.RuleChange[hotspot.Rule]) { hotspotChanges++ })

	good := core.RuleSet{
		Flow:           []flow.Rule{{Resource: "a", Grade: flow.GradeQPS, Count: 0}},
		CircuitBreaker: []circuitbreaker.Rule{breakerRule("b", circuitbreaker.ErrorCount, 3)},
		Authority:      []authority.Rule{{Resource: "c", LimitApp: "x", Strategy: authority.Black}},
	}
	require.NoError(t, e.LoadRuleSet(good))
	assert.Equal(t, 1, flowChanges)
	assert.Equal(t, 1, breakerChanges)
	assert.Equal(t, 0, hotspotChanges, "an unchanged kind is not notified")
	_, err := e.Enter(ctx, "a")
	blockKind(t, err)

	// One invalid rule of one kind rejects every kind.
	bad := core.RuleSet{
		Flow:    []flow.Rule{{Resource: "a", Grade: flow.GradeQPS, Count: 100}},
		Hotspot: []hotspot.Rule{{Resource: "h", Grade: flow.GradeQPS, Count: 1, DurationInSec: 1}, {Resource: "h", Count: -1, DurationInSec: 1}},
	}
	err = e.LoadRuleSet(bad)
	require.ErrorIs(t, err, core.ErrInvalidRules)
	assert.Contains(t, err.Error(), "paramFlow rules rejected")
	assert.Contains(t, err.Error(), "rules[1].count: must be >= 0")
	_, err = e.Enter(ctx, "a")
	blockKind(t, err)
	assert.Len(t, e.CircuitBreaker().Rules(), 1, "nothing changed")
	assert.Len(t, e.Authority().Rules(), 1)

	// Lenient hotspot: its valid rules apply, with everything else.
	e.Hotspot().SetLenient(true)
	err = e.LoadRuleSet(bad)
	var verr *core.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Applied)
	en, err := e.Enter(ctx, "a")
	require.NoError(t, err)
	en.Exit()
	assert.Len(t, e.Hotspot().Rules(), 1)
	assert.Empty(t, e.CircuitBreaker().Rules(), "a kind left nil is cleared")
	assert.Empty(t, e.Authority().Rules())

	// RegisterRuleSet: the current value at once, later values on Set.
	p := core.NewProperty[core.RuleSet]()
	require.NoError(t, p.Set(good))
	cancel := e.RegisterRuleSet(p)
	_, err = e.Enter(ctx, "a")
	blockKind(t, err)
	require.NoError(t, p.Set(core.RuleSet{}))
	en, err = e.Enter(ctx, "a")
	require.NoError(t, err)
	en.Exit()
	cancel()
	require.NoError(t, p.Set(good))
	assert.Empty(t, e.Flow().Rules(), "cancelled")
}

// Many goroutines enter and exit while every kind's rules are swapped.
func TestConcurrentEnterWhileSwapping(t *testing.T) {
	e := core.NewEngine(core.WithSystemCollector(&fakeCollector{load: 0.1, cpu: 0.1}))
	defer e.Close()
	sets := []core.RuleSet{
		{
			Flow:           []flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 1e9}},
			CircuitBreaker: []circuitbreaker.Rule{breakerRule("r", circuitbreaker.ErrorRatio, 0.5)},
			System:         []system.Rule{sysRule(func(r *system.Rule) { r.HighestCPUUsage = 0.9; r.QPS = 1e9 })},
			Authority:      []authority.Rule{{Resource: "r", LimitApp: "evil", Strategy: authority.Black}},
			Hotspot:        []hotspot.Rule{{Resource: "r", Grade: flow.GradeThread, Count: 1e6, DurationInSec: 1}},
		},
		{
			CircuitBreaker: []circuitbreaker.Rule{breakerRule("r", circuitbreaker.SlowRequestRatio, 1)},
			Hotspot:        []hotspot.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 1e6, DurationInSec: 1, ParamIdx: -1}},
		},
		{},
	}
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			boom := errors.New("boom")
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				en, err := e.Enter(ctx, "r", core.Inbound(), core.WithOrigin("app"), core.WithArgs(g, i%10))
				if err != nil {
					if !errors.Is(err, core.ErrBlocked) {
						t.Error(err)
						return
					}
					continue
				}
				if i%3 == 0 {
					en.SetError(boom)
				}
				en.Exit()
			}
		})
	}
	for i := range 300 {
		if i%2 == 0 {
			require.NoError(t, e.LoadRuleSet(sets[i%3]))
		} else {
			s := sets[(i+1)%3]
			require.NoError(t, e.CircuitBreaker().Load(s.CircuitBreaker))
			require.NoError(t, e.Hotspot().Load(s.Hotspot))
			require.NoError(t, e.System().Load(s.System))
			require.NoError(t, e.Authority().Load(s.Authority))
		}
	}
	close(stop)
	wg.Wait()
}
