package core_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
)

// resourceStats returns the stats of one resource, failing when absent.
func resourceStats(t *testing.T, st core.Stats, name string) core.ResourceStats {
	t.Helper()
	for _, r := range st.Resources {
		if r.Resource == name {
			return r
		}
	}
	require.Failf(t, "resource not in Stats", "%q", name)
	return core.ResourceStats{}
}

// call enters resource, waits rt, and exits with err; it reports whether
// the entry was admitted.
func call(e *core.Engine, resource string, rt time.Duration, err error, opts ...core.EntryOption) bool {
	en, berr := e.Enter(bg, resource, opts...)
	if berr != nil {
		return false
	}
	time.Sleep(rt)
	en.SetError(err)
	en.Exit()
	return true
}

func TestStatsSecondMinuteTotal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		require.NoError(t, e.Flow().Load([]flow.Rule{qps("r", 5)}))
		time.Sleep(100 * time.Millisecond)

		admitted := 0
		for i := range 8 {
			var err error
			if i == 0 {
				err = errors.New("boom")
			}
			if call(e, "r", time.Duration(10*(i+1))*time.Millisecond, err) {
				admitted++
			}
		}
		require.Equal(t, 5, admitted)

		r := resourceStats(t, e.Stats(), "r")
		assert.Equal(t, int64(5), r.Second.Passed)
		assert.Equal(t, int64(3), r.Second.Blocked)
		assert.Equal(t, int64(3), r.Second.BlockedBy[core.BlockFlow])
		assert.Equal(t, int64(5), r.Second.Succeeded)
		assert.Equal(t, int64(1), r.Second.Failed)
		assert.Equal(t, 10*time.Millisecond, r.Second.MinRT)
		assert.Equal(t, 30*time.Millisecond, r.Second.AvgRT(), "(10+20+30+40+50)/5")
		assert.Equal(t, int64(0), r.Second.Concurrency)
		assert.Equal(t, core.Figures{}, r.Minute, "nothing in a whole second yet")

		en, err := e.Enter(bg, "r")
		require.Error(t, err, "still the same second: the limit holds")
		assert.Nil(t, en)

		time.Sleep(2 * time.Second)
		r = resourceStats(t, e.Stats(), "r")
		assert.Equal(t, core.Figures{}, r.Second, "the second window slid past")
		assert.Equal(t, int64(5), r.Minute.Passed)
		assert.Equal(t, int64(4), r.Minute.Blocked)
		assert.Equal(t, int64(4), r.Minute.BlockedBy[core.BlockFlow])
		assert.Equal(t, int64(1), r.Minute.Failed)
		assert.Equal(t, 10*time.Millisecond, r.Minute.MinRT)
		assert.Equal(t, r.Minute.Passed, r.Total.Passed)
		assert.Equal(t, r.Minute.BlockedBy, r.Total.BlockedBy)
		assert.Equal(t, 150*time.Millisecond, r.Total.RT)

		h := e.History("r")
		require.Len(t, h, 60)
		var sum core.Figures
		for _, f := range h {
			sum.Passed += f.Passed
			sum.Blocked += f.Blocked
		}
		assert.Equal(t, int64(5), sum.Passed)
		assert.Equal(t, int64(4), sum.Blocked)
		assert.Equal(t, int64(5), h[58].Passed, "two whole seconds ago is the second-to-last entry")
		assert.Nil(t, e.History("nobody"))
	})
}

func TestStatsHistoryAndTotalsAreHarvestedInTheBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		// 90 seconds of traffic, i+1 entries in second i, without reading:
		// only the harvesting goroutine sees the buckets before they slide.
		var want int64
		for i := range 90 {
			for range i + 1 {
				require.True(t, call(e, "busy", time.Millisecond, nil))
			}
			want += int64(i + 1)
			time.Sleep(time.Second - time.Duration(i+1)*time.Millisecond)
		}
		time.Sleep(time.Second)
		r := resourceStats(t, e.Stats(), "busy")
		assert.Equal(t, want, r.Total.Passed)
		assert.Equal(t, want, r.Total.Succeeded)
		h := e.History("busy")
		// the last whole second had no traffic, the 59 before it had
		// 32..90 entries.
		assert.Equal(t, int64(0), h[59].Passed)
		for i := range 59 {
			assert.Equal(t, int64(32+i), h[i].Passed, "second %d", i)
		}
		assert.Equal(t, int64((32+90)*59/2), r.Minute.Passed)
	})
}

func TestStatsTotalsOnlyGrow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		require.NoError(t, e.Flow().Load([]flow.Rule{qps("r", 3)}))
		var last core.Figures
		for i := range 30 {
			for range 5 {
				call(e, "r", 0, nil)
			}
			time.Sleep(time.Duration(100+37*i) * time.Millisecond)
			tot := resourceStats(t, e.Stats(), "r").Total
			assert.GreaterOrEqual(t, tot.Passed, last.Passed)
			assert.GreaterOrEqual(t, tot.Blocked, last.Blocked)
			last = tot
		}
		assert.Positive(t, last.Blocked)
		assert.Equal(t, last.Blocked, last.BlockedBy[core.BlockFlow])
	})
}

func TestStatsBreakers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		rule := circuitbreaker.Rule{Resource: "db", Grade: circuitbreaker.ErrorCount, Count: 2,
			TimeWindow: 5, MinRequestAmount: 1, StatIntervalMs: 1000}.WithDefaults()
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{rule}))
		loaded := time.Now()

		st := e.Stats()
		require.Len(t, st.Breakers, 1)
		assert.Equal(t, circuitbreaker.Closed, st.Breakers[0].State)
		assert.Equal(t, rule, st.Breakers[0].Rule)
		assert.WithinDuration(t, loaded, st.Breakers[0].Since, 0)

		time.Sleep(time.Second)
		for range 3 {
			call(e, "db", time.Millisecond, errors.New("down"))
		}
		opened := time.Now()
		assert.False(t, call(e, "db", 0, nil))
		st = e.Stats()
		b := st.Breakers[0]
		assert.Equal(t, circuitbreaker.Open, b.State)
		assert.WithinDuration(t, opened, b.Since, 0)
		assert.Equal(t, int64(1), b.Transitions[circuitbreaker.Closed][circuitbreaker.Open])
		assert.Equal(t, int64(1), resourceStats(t, st, "db").Second.BlockedBy[core.BlockCircuitBreaker])

		time.Sleep(6 * time.Second)
		require.True(t, call(e, "db", time.Millisecond, nil), "the probe")
		b = e.Stats().Breakers[0]
		assert.Equal(t, circuitbreaker.Closed, b.State)
		assert.Equal(t, int64(1), b.Transitions[circuitbreaker.Open][circuitbreaker.HalfOpen])
		assert.Equal(t, int64(1), b.Transitions[circuitbreaker.HalfOpen][circuitbreaker.Closed])

		// A changed rule is a new breaker: closed since it was loaded.
		time.Sleep(time.Second)
		rule.Count = 5
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{rule}))
		b = e.Stats().Breakers[0]
		assert.Equal(t, rule, b.Rule)
		assert.WithinDuration(t, time.Now(), b.Since, 0)
		assert.Zero(t, b.Transitions)
	})
}

func TestStatsSystem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		for range 4 {
			call(e, "in", 5*time.Millisecond, nil, core.Inbound())
		}
		call(e, "out", 5*time.Millisecond, nil)
		st := e.Stats()
		assert.True(t, math.IsNaN(st.System.Load1), "no system rule: no collector")
		assert.True(t, math.IsNaN(st.System.CPUUsage))
		assert.Equal(t, int64(4), st.System.Inbound.Second.Passed)
		assert.Equal(t, 5*time.Millisecond, st.System.Inbound.Second.AvgRT())
	})
}

// TestStatsReadersDoNotDisturbEntries reads while entries run on every
// core; with -race it checks that reading shares nothing unsafely, and the
// counts come out whole.
func TestStatsReadersDoNotDisturbEntries(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	require.NoError(t, e.Flow().Load([]flow.Rule{qps("hot", 1e12)}))
	const workers, per = 4, 2000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
				e.Stats()
				e.History("hot")
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				en, err := e.Enter(bg, "hot")
				if err == nil {
					en.Exit()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	r := resourceStats(t, e.Stats(), "hot")
	assert.Equal(t, int64(0), r.Second.Concurrency)
	// Whatever is not in the second window any more is in the totals.
	assert.LessOrEqual(t, r.Total.Passed, int64(workers*per))
}

func TestStatsAfterClose(t *testing.T) {
	e := core.NewEngine()
	require.NoError(t, e.Close())
	call(e, "r", 0, nil)
	assert.Equal(t, int64(1), resourceStats(t, e.Stats(), "r").Second.Passed)
}

func ExampleEngine_Stats() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 2}})
	for range 3 {
		if en, err := e.Enter(context.Background(), "GET /orders"); err == nil {
			en.Exit()
		}
	}
	for _, r := range e.Stats().Resources {
		s := r.Second
		fmt.Printf("%s: %d passed, %d blocked (%d by flow rules), %d in flight\n",
			r.Resource, s.Passed, s.Blocked, s.BlockedBy[core.BlockFlow], s.Concurrency)
	}
	// Output: GET /orders: 2 passed, 1 blocked (1 by flow rules), 0 in flight
}
