package core_test

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

// The test clock takes over the engine's waiting through the documented
// contract.
var _ core.Sleeper = (*testclock.Clock)(nil)

// coarseResolution is the coarse clock's resolution in the tests that run
// with it.
const coarseResolution = time.Millisecond

// engineClock is the injected clock of a test's engines, read in one of
// the two ways an engine reads its clock: at every Enter and Exit (the
// default), or through the coarse clock (WithCoarseClock), which samples
// it every coarseResolution.
type engineClock struct {
	*testclock.Clock
	coarse bool
}

// eachClock runs body once per way of reading the clock: the exactness
// tests hold in both. The coarse run is inside a testing/synctest bubble,
// so the coarse clock ticks on the bubble's time and Advance can wait for
// its tick without sleeping.
func eachClock(t *testing.T, body func(t *testing.T, clk *engineClock)) {
	t.Run("exact", func(t *testing.T) { body(t, &engineClock{Clock: testclock.New()}) })
	t.Run("coarse", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { body(t, &engineClock{Clock: testclock.New(), coarse: true}) })
	})
}

// engine returns an engine reading clk, with the coarse clock in the
// coarse run, closed when the test ends.
func (clk *engineClock) engine(t *testing.T, opts ...core.Option) *core.Engine {
	opts = append([]core.Option{core.WithClock(clk.Clock)}, opts...)
	if clk.coarse {
		opts = append(opts, core.WithCoarseClock(coarseResolution))
	}
	e := core.NewEngine(opts...)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// Advance moves the clock by d; with the coarse clock, it then lets the
// clock tick, so that entries see the new time.
func (clk *engineClock) Advance(d time.Duration) {
	clk.Clock.Advance(d)
	if clk.coarse {
		time.Sleep(coarseResolution) // the bubble's time: returns at once
		synctest.Wait()
	}
}

// The coarse clock samples the injected clock: entries see its time when
// the clock ticks, not before; once the engine is closed they read the
// clock themselves.
func TestCoarseClockSamplesInjectedClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := testclock.New()
		e := core.NewEngine(core.WithClock(clk), core.WithCoarseClock(100*time.Millisecond))
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 1}}))
		enter := func() error {
			en, err := e.Enter(bg, "r")
			if err == nil {
				en.Exit()
			}
			return err
		}
		require.NoError(t, enter())
		require.ErrorIs(t, enter(), core.ErrBlocked)

		clk.Advance(time.Second)
		require.ErrorIs(t, enter(), core.ErrBlocked, "no tick yet: the engine's time has not moved")
		time.Sleep(99 * time.Millisecond)
		synctest.Wait()
		require.ErrorIs(t, enter(), core.ErrBlocked, "99 ms on: still no tick")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.NoError(t, enter(), "the tick published the clock's time: a new window")

		require.NoError(t, e.Close())
		clk.Advance(time.Second)
		require.NoError(t, enter(), "closed: entries read the clock themselves")
		require.ErrorIs(t, enter(), core.ErrBlocked)
	})
}

// Without an injected clock the coarse clock samples the time package: in
// a bubble, its time. A response time is the difference of two samples.
func TestCoarseClockResolution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine(core.WithCoarseClock(10 * time.Millisecond))
		defer e.Close()
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 1e6}}))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()

		// A call of 9 ms without a tick in between takes no time.
		en, err := e.Enter(bg, "r")
		require.NoError(t, err)
		time.Sleep(9 * time.Millisecond)
		synctest.Wait()
		en.Exit()
		// A call of 2 ms across a tick takes one resolution.
		en, err = e.Enter(bg, "r")
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		en.Exit()

		st := e.Stats().Resources
		require.Len(t, st, 1)
		assert.EqualValues(t, 2, st[0].Second.Succeeded)
		assert.Equal(t, 10*time.Millisecond, st[0].Second.RT, "0 + 10 ms")
	})
}

// The coarse clock's goroutine belongs to the engine: Close stops it and
// waits for it. Without the option the engine starts none (it runs only the
// statistics' harvest, which Close stops too).
func TestCoarseClockGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	e := core.NewEngine()
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 10}}))
	en, err := e.Enter(bg, "r")
	require.NoError(t, err)
	en.Exit()
	assert.NotContains(t, allStacks(), "startCoarse", "no coarse clock without the option")
	require.NoError(t, e.Close())
	goleak.VerifyNone(t, before)

	e = core.NewEngine(core.WithCoarseClock(time.Millisecond))
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 10}}))
	en, err = e.Enter(bg, "r")
	require.NoError(t, err)
	en.Exit()
	assert.Contains(t, allStacks(), "startCoarse", "the option starts the coarse clock")
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "idempotent")
	goleak.VerifyNone(t, before)
}

// allStacks is every goroutine's stack, with the function that created it.
func allStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// An engine without WithClock created inside a testing/synctest bubble
// lives on the bubble's time (outside one it reads the runtime's clock
// directly): a second of the bubble's time, which passes at once, ends
// the window a QPS limit counted in, and the statistics read its passes
// as the second before.
func TestEngineInBubbleReadsBubbleTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer func() { require.NoError(t, e.Close()) }()
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 2}}))
		ctx := t.Context()
		for range 2 {
			en, err := e.Enter(ctx, "r")
			require.NoError(t, err)
			en.Exit()
		}
		_, err := e.Enter(ctx, "r")
		require.ErrorIs(t, err, core.ErrBlocked, "the third within the second")
		time.Sleep(time.Second)
		en, err := e.Enter(ctx, "r")
		require.NoError(t, err, "a second of the bubble's time ended the window")
		en.Exit()
	})
}
