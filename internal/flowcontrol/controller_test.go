package flowcontrol

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// ms is the instant n milliseconds after the epoch.
func ms(n int64) mono.Time { return mono.FromMillis(n) }

// admit calls Check at time at (ms) until it blocks, recording each pass on
// n, and returns how many passed.
func admit(c Controller, n *stat.Node, at int64, limit int) int {
	passed := 0
	for passed < limit {
		d := c.Check(n, ms(at), 1, false, 0)
		if d.Blocked {
			break
		}
		n.AddPass(ms(at), 1, 0)
		n.AddCompletion(ms(at), 1, time.Millisecond, false, 0)
		passed++
	}
	return passed
}

func TestRejectQPS(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 5}, Config{})
	n := stat.NewNode(1)
	assert.Equal(t, 5, admit(c, n, 100, 100))
	assert.Equal(t, 0, admit(c, n, 900, 100), "same second window")
	assert.Equal(t, 5, admit(c, n, 1100, 100), "the window slid past the first bucket")
}

func TestRejectCountsAcquire(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 5}, Config{})
	n := stat.NewNode(1)
	n.AddPass(0, 3, 0)
	assert.False(t, c.Check(n, ms(10), 2, false, 0).Blocked)
	assert.True(t, c.Check(n, ms(10), 3, false, 0).Blocked)
}

func TestRejectThreadGrade(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeThread, Count: 2}, Config{})
	n := stat.NewNode(1)
	n.AddPass(0, 1, 0)
	n.AddPass(0, 1, 0)
	assert.True(t, c.Check(n, 0, 1, false, 0).Blocked, "two in flight")
	n.AddCompletion(ms(5), 1, 5*time.Millisecond, false, 0)
	assert.False(t, c.Check(n, ms(5), 1, false, 0).Blocked, "one left")
}

func TestWarmUpCurve(t *testing.T) {
	// count 100, 10 s warm-up, cold factor 3: Sentinel's warningToken 500,
	// maxToken 1000. A cold rule admits count/3 per second, then more each
	// second of full load, reaching count and staying there.
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 100, ControlBehavior: flow.WarmUp, WarmUpPeriodSec: 10}, Config{})
	n := stat.NewNode(1)
	n.Minute()
	var perSecond []int
	for s := int64(0); s < 20; s++ {
		perSecond = append(perSecond, admit(c, n, s*1000+1, 1000))
	}
	t.Logf("passes per second: %v", perSecond)
	assert.Equal(t, 33, perSecond[0], "starts at count/coldFactor")
	for i := 1; i < len(perSecond); i++ {
		assert.GreaterOrEqual(t, perSecond[i], perSecond[i-1], "the rate never falls under full load (second %d)", i)
	}
	assert.Greater(t, perSecond[5], perSecond[0], "climbing")
	assert.Equal(t, 100, perSecond[12], "warm after about the warm-up period")
	assert.Equal(t, 100, perSecond[19])
}

func TestWarmUpCoolsDownWhenIdle(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 100, ControlBehavior: flow.WarmUp, WarmUpPeriodSec: 10}, Config{ColdFactor: 4})
	n := stat.NewNode(1)
	n.Minute()
	var s int64
	for ; s < 15; s++ {
		admit(c, n, s*1000+1, 1000)
	}
	require.Equal(t, 100, admit(c, n, s*1000+1, 1000))
	// Idle for a minute: tokens refill, the rule is cold again.
	s += 60
	assert.Equal(t, 25, admit(c, n, s*1000+1, 1000), "cold again: count/coldFactor")
}

func TestWarmUpDegenerateBucketDoesNotBlockEverything(t *testing.T) {
	// count 1 over 1 s: Java's maxToken equals warningToken and its slope
	// divides by zero, blocking every entry. Here the rule runs at count.
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 1, ControlBehavior: flow.WarmUp, WarmUpPeriodSec: 1}, Config{})
	n := stat.NewNode(1)
	assert.Equal(t, 1, admit(c, n, 1, 10))
}

func TestRateLimiterPacingAndQueueTimeout(t *testing.T) {
	// 10 per second: one every 100 ms; waiting at most 500 ms.
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 10, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 500}, Config{})
	n := stat.NewNode(1)
	now := ms(1000)
	var waits []time.Duration
	for {
		d := c.Check(n, now, 1, false, 0)
		if d.Blocked {
			break
		}
		waits = append(waits, d.Wait)
	}
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond,
		400 * time.Millisecond, 500 * time.Millisecond}, waits)
	// The queue drains with time: 250 ms later the next slot is 350 ms away.
	d := c.Check(n, now.Add(250*time.Millisecond), 1, false, 0)
	assert.False(t, d.Blocked)
	assert.Equal(t, 350*time.Millisecond, d.Wait)
}

func TestRateLimiterConcurrentEntriesNeverShareATurn(t *testing.T) {
	// 10 per second, 500 ms of queue, 64 goroutines asking at the same
	// instant: six turns (0, 100, ..., 500 ms), each given once.
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 10, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 500}, Config{})
	n := stat.NewNode(1)
	var mu sync.Mutex
	var waits []time.Duration
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 4 {
				if d := c.Check(n, ms(1000), 1, false, 0); !d.Blocked {
					mu.Lock()
					waits = append(waits, d.Wait)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(waits)
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond,
		400 * time.Millisecond, 500 * time.Millisecond}, waits)
}

func TestRateLimiterNanosecondPrecision(t *testing.T) {
	// 3000 per second: 333,333 ns apart (Java rounds to whole ms below 1000 QPS).
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 3000, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 1}, Config{})
	n := stat.NewNode(1)
	assert.Equal(t, time.Duration(0), c.Check(n, 0, 1, false, 0).Wait)
	assert.Equal(t, 333333*time.Nanosecond, c.Check(n, 0, 1, false, 0).Wait)
	assert.Equal(t, 666666*time.Nanosecond, c.Check(n, 0, 1, false, 0).Wait)
}

func TestRateLimiterZeroCountBlocks(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 0, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 500}, Config{})
	assert.True(t, c.Check(stat.NewNode(1), 0, 1, false, 0).Blocked)
}

func TestWarmUpRateLimiterPacesAtWarmRate(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 30, ControlBehavior: flow.WarmUpRateLimiter, WarmUpPeriodSec: 10, MaxQueueingTimeMs: 1000}, Config{})
	n := stat.NewNode(1)
	n.Minute()
	assert.Equal(t, time.Duration(0), c.Check(n, ms(1000), 1, false, 0).Wait)
	// Cold: 30/3 = 10 per second, so 100 ms apart.
	assert.Equal(t, 100*time.Millisecond, c.Check(n, ms(1000), 1, false, 0).Wait)
}

func TestOccupyNextWindow(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 10}, Config{})
	n := stat.NewNode(1)
	n.AddPass(ms(100), 10, 0) // the bucket [0,500) is full
	assert.True(t, c.Check(n, ms(120), 1, true, 0).Blocked, "no room before the occupy timeout: [0,500) leaves at 1000")
	assert.True(t, c.Check(n, ms(600), 1, false, 0).Blocked, "not prioritized")
	d := c.Check(n, ms(600), 1, true, 0)
	require.False(t, d.Blocked)
	assert.True(t, d.Occupied)
	assert.Equal(t, 400*time.Millisecond, d.Wait, "until [1000,1500) begins")
	assert.Equal(t, int64(1), n.Second().Borrowed(ms(600)))
	// The occupied pass is charged to the window it runs in.
	assert.InDelta(t, 1.0, n.PassQPS(ms(1000)), 1e-9)
}

func TestOccupyTimeoutIsConfigurable(t *testing.T) {
	c := NewController(flow.Rule{Grade: flow.GradeQPS, Count: 10}, Config{OccupyTimeout: 300 * time.Millisecond})
	n := stat.NewNode(1)
	n.AddPass(ms(100), 10, 0)
	assert.True(t, c.Check(n, ms(600), 1, true, 0).Blocked, "400 ms wait exceeds 300 ms")
}
