package breaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// ms is the instant n milliseconds after the epoch.
func ms(n int64) mono.Time { return mono.FromMillis(n) }

// millis is n milliseconds.
func millis(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// call is one completed call of a timeline: rt ms, failed or not.
type call struct {
	rt     int64
	failed bool
}

func calls(n int, rt int64, failed bool) []call {
	out := make([]call, n)
	for i := range out {
		out[i] = call{rt, failed}
	}
	return out
}

type recorder struct {
	changes []circuitbreaker.StateChange
	at      []mono.Time
}

func (r *recorder) on(c circuitbreaker.StateChange, at mono.Time) {
	r.changes = append(r.changes, c)
	r.at = append(r.at, at)
}

func (r *recorder) transitions() []string {
	var out []string
	for _, c := range r.changes {
		out = append(out, c.From.String()+"->"+c.To.String())
	}
	return out
}

func TestBreakerOpensPerGrade(t *testing.T) {
	tests := []struct {
		name     string
		rule     circuitbreaker.Rule
		calls    []call
		wantOpen bool
		value    float64
	}{
		{"slow ratio above threshold", circuitbreaker.Rule{Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.5},
			append(calls(3, 101, false), calls(2, 10, false)...), true, 0.6},
		{"slow ratio at threshold stays closed", circuitbreaker.Rule{Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.5},
			append(calls(3, 10, false), calls(3, 101, false)...), false, 0},
		{"rt equal to count is not slow", circuitbreaker.Rule{Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.1},
			calls(10, 100, false), false, 0},
		{"slow ratio 1.0 opens at 1.0", circuitbreaker.Rule{Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 1},
			calls(5, 200, false), true, 1},
		{"below min request amount", circuitbreaker.Rule{Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.1},
			calls(4, 200, false), false, 0},
		{"min request amount reached by a fast call", circuitbreaker.Rule{Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.5},
			append(calls(4, 200, false), call{1, false}), true, 0.8},
		{"error ratio above", circuitbreaker.Rule{Grade: circuitbreaker.ErrorRatio, Count: 0.5},
			append(calls(3, 1, true), calls(2, 1, false)...), true, 0.6},
		{"error ratio at threshold", circuitbreaker.Rule{Grade: circuitbreaker.ErrorRatio, Count: 0.5},
			append(calls(3, 1, false), calls(3, 1, true)...), false, 0},
		{"slow calls are not errors", circuitbreaker.Rule{Grade: circuitbreaker.ErrorRatio, Count: 0.1},
			calls(10, 5000, false), false, 0},
		{"error count above", circuitbreaker.Rule{Grade: circuitbreaker.ErrorCount, Count: 3},
			append(calls(2, 1, false), calls(4, 1, true)...), true, 4},
		{"error count at threshold", circuitbreaker.Rule{Grade: circuitbreaker.ErrorCount, Count: 3},
			append(calls(5, 1, false), calls(3, 1, true)...), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rule
			r.Resource, r.TimeWindow, r.MinRequestAmount, r.StatIntervalMs = "r", 10, 5, 1000
			require.NoError(t, r.Validate())
			var rec recorder
			b := New(r, Options{OnStateChange: rec.on})
			now := int64(10_000)
			for _, c := range tt.calls {
				pass, probe := b.TryPass(ms(now), nil)
				if !pass {
					break
				}
				assert.False(t, probe)
				b.OnComplete(ms(now+c.rt), millis(c.rt), c.failed, false)
				now++
			}
			if !tt.wantOpen {
				assert.Equal(t, circuitbreaker.Closed, b.State())
				assert.Empty(t, rec.changes)
				return
			}
			assert.Equal(t, circuitbreaker.Open, b.State())
			require.Len(t, rec.changes, 1)
			assert.Equal(t, circuitbreaker.StateChange{From: circuitbreaker.Closed, To: circuitbreaker.Open, Value: tt.value, Rule: r}, rec.changes[0])
			assert.Equal(t, ms(now-1+tt.calls[len(tt.calls)-1].rt), rec.at[0], "the time of the completion that opened it")
			pass, _ := b.TryPass(ms(now), nil)
			assert.False(t, pass, "open breaker lets a call through")
		})
	}
}

// openBreaker returns a breaker opened at time 1000 ms, with a 10 s window.
func openBreaker(t *testing.T, g circuitbreaker.Grade, rec *recorder) *Breaker {
	t.Helper()
	r := circuitbreaker.Rule{Resource: "r", Grade: g, Count: 100, SlowRatioThreshold: 0.5, TimeWindow: 10, MinRequestAmount: 1, StatIntervalMs: 1000}
	switch g {
	case circuitbreaker.ErrorRatio:
		r.Count = 0.5
	case circuitbreaker.ErrorCount:
		r.Count = 0
	}
	b := New(r, Options{OnStateChange: rec.on})
	pass, _ := b.TryPass(ms(1000), nil)
	require.True(t, pass)
	b.OnComplete(ms(1000), millis(500), true, false)
	require.Equal(t, circuitbreaker.Open, b.State())
	return b
}

func TestBreakerHalfOpenProbe(t *testing.T) {
	tests := []struct {
		name   string
		grade  circuitbreaker.Grade
		rt     int64
		failed bool
		want   circuitbreaker.State
		value  float64
	}{
		{"fast probe closes", circuitbreaker.SlowRequestRatio, 10, false, circuitbreaker.Closed, 0},
		{"slow probe reopens", circuitbreaker.SlowRequestRatio, 300, false, circuitbreaker.Open, 300},
		{"failed fast probe closes a slow-ratio breaker", circuitbreaker.SlowRequestRatio, 10, true, circuitbreaker.Closed, 0},
		{"successful probe closes", circuitbreaker.ErrorRatio, 300, false, circuitbreaker.Closed, 0},
		{"failed probe reopens", circuitbreaker.ErrorRatio, 1, true, circuitbreaker.Open, 1},
		{"failed probe reopens an error-count breaker", circuitbreaker.ErrorCount, 1, true, circuitbreaker.Open, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			b := openBreaker(t, tt.grade, &rec)
			pass, _ := b.TryPass(ms(10_999), nil)
			assert.False(t, pass, "before timeWindow")

			pass, probe := b.TryPass(ms(11_000), nil)
			require.True(t, pass)
			require.True(t, probe)
			assert.Equal(t, circuitbreaker.HalfOpen, b.State())
			pass, probe = b.TryPass(ms(11_001), nil)
			assert.False(t, pass, "a second call while the probe is in flight")
			assert.False(t, probe)

			// A call admitted before the breaker opened completes now: it
			// does not decide the half-open state.
			b.OnComplete(ms(11_002), millis(1), false, false)
			assert.Equal(t, circuitbreaker.HalfOpen, b.State())

			b.OnComplete(ms(11_000+tt.rt), millis(tt.rt), tt.failed, true)
			assert.Equal(t, tt.want, b.State())
			last := rec.changes[len(rec.changes)-1]
			assert.Equal(t, tt.value, last.Value)
			if tt.want == circuitbreaker.Closed {
				assert.Equal(t, []string{"CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED"}, rec.transitions())
				// Closing started the statistics over: one more bad call
				// (min request amount 1) is needed to open again.
				pass, _ := b.TryPass(ms(12_000), nil)
				assert.True(t, pass)
				return
			}
			assert.Equal(t, []string{"CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN"}, rec.transitions())
			end := 11_000 + tt.rt
			pass, _ = b.TryPass(ms(end+9_999), nil)
			assert.False(t, pass, "reopened for a new timeWindow")
			pass, probe = b.TryPass(ms(end+10_000), nil)
			assert.True(t, pass)
			assert.True(t, probe)
		})
	}
}

func TestBreakerAbortProbe(t *testing.T) {
	var rec recorder
	b := openBreaker(t, circuitbreaker.ErrorRatio, &rec)
	pass, probe := b.TryPass(ms(11_000), nil)
	require.True(t, pass && probe)
	b.AbortProbe(ms(11_000))
	assert.Equal(t, circuitbreaker.Open, b.State())
	assert.Equal(t, []string{"CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN"}, rec.transitions())
	// The retry time did not move: the next call probes at once.
	pass, probe = b.TryPass(ms(11_001), nil)
	assert.True(t, pass && probe)
	b.AbortProbe(ms(11_001))
	b.AbortProbe(ms(11_001)) // not half-open: nothing happens
	assert.Len(t, rec.changes, 5)
}

func TestBreakerWindowSlides(t *testing.T) {
	r := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.ErrorCount, Count: 2, TimeWindow: 1, MinRequestAmount: 1, StatIntervalMs: 1000}
	b := New(r, Options{Stripes: 4})
	b.OnComplete(ms(0), millis(1), true, false)
	b.OnComplete(ms(100), millis(1), true, false)
	// 1.2 s later both errors have left the window.
	b.OnComplete(ms(1200), millis(1), true, false)
	assert.Equal(t, circuitbreaker.Closed, b.State())
	b.OnComplete(ms(1300), millis(1), true, false)
	b.OnComplete(ms(1400), millis(1), true, false)
	assert.Equal(t, circuitbreaker.Open, b.State())
}

// The average-RT strategy of Sentinel before 1.8, over a timeline of calls
// that each take 200 ms against a count of 100 ms.
func TestBreakerAvgRTTimeline(t *testing.T) {
	r := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.AvgRT, Count: 100, TimeWindow: 2, MinRequestAmount: 5, StatIntervalMs: 1000, RTSlowRequestAmount: 3}
	require.NoError(t, r.Validate())
	var rec recorder
	b := New(r, Options{OnStateChange: rec.on})
	node := stat.NewNode(1)
	now := int64(5_000)
	enter := func() bool {
		pass, probe := b.TryPass(ms(now), node)
		assert.False(t, probe)
		return pass
	}
	complete := func(rt int64) { node.AddPass(ms(now), 1, 0); node.AddCompletion(ms(now), 1, millis(rt), false, 0) }

	assert.True(t, enter(), "nothing completed: average 0")
	complete(200)
	now += 10
	// Average 200 ≥ 100: the counter counts 1, 2 and passes; at 3 it cuts.
	assert.True(t, enter())
	assert.True(t, enter())
	assert.False(t, enter())
	assert.Equal(t, circuitbreaker.Open, b.State())
	require.Len(t, rec.changes, 1)
	assert.Equal(t, 200.0, rec.changes[0].Value)
	now += 1_999
	assert.False(t, enter(), "still within timeWindow")
	now++
	// timeWindow over: the counter resets and the check starts over; the
	// slow completion has left the second window, so the average is 0.
	assert.True(t, enter())
	assert.Equal(t, []string{"CLOSED->OPEN", "OPEN->CLOSED"}, rec.transitions())
	complete(200)
	assert.True(t, enter())
	assert.True(t, enter())
	assert.False(t, enter(), "cut again after rtSlowRequestAmount slow calls")

	// A fast second resets the counter.
	now += 2_000
	complete(10)
	complete(10)
	complete(10)
	assert.True(t, enter())
	complete(300) // average now (10+10+10+300)/4 = 82.5 < 100
	assert.True(t, enter())
	assert.True(t, enter())
	assert.True(t, enter())
	assert.Equal(t, circuitbreaker.Closed, b.State())
}

func TestBreakerAvgRTDefaultAmount(t *testing.T) {
	r := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.AvgRT, Count: 1, TimeWindow: 1, MinRequestAmount: 1, StatIntervalMs: 1000}
	b := New(r, Options{})
	node := stat.NewNode(1)
	node.AddPass(0, 1, 0)
	node.AddCompletion(0, 1, millis(50), false, 0)
	n := 0
	for {
		if pass, _ := b.TryPass(ms(1), node); !pass {
			break
		}
		n++
	}
	assert.Equal(t, 5-1, n, "Sentinel lets 5 slow calls pass by default")
}

func TestSampleCount(t *testing.T) {
	assert.Equal(t, 2, SampleCount(1000))
	assert.Equal(t, 1, SampleCount(999))
	for _, n := range []int64{1, 2, 3, 1000, 1001, 60_000} {
		assert.Zero(t, n%int64(SampleCount(n)))
	}
}

func TestClassify(t *testing.T) {
	slowRatio := New(circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.5,
		TimeWindow: 1, MinRequestAmount: 1, StatIntervalMs: 1000}, Options{})
	errorRatio := New(circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.ErrorRatio, Count: 0.5,
		TimeWindow: 1, MinRequestAmount: 1, StatIntervalMs: 1000}, Options{})
	tests := []struct {
		name   string
		b      *Breaker
		rtMs   int64
		failed bool
		want   outcome
	}{
		{"slow ratio: fast", slowRatio, 100, false, callFine},
		{"slow ratio: slow", slowRatio, 101, false, callSlow},
		{"slow ratio: a fast failure is fine", slowRatio, 1, true, callFine},
		{"slow ratio: a slow failure is slow", slowRatio, 500, true, callSlow},
		{"error ratio: ok", errorRatio, 1, false, callFine},
		{"error ratio: failed", errorRatio, 1, true, callFailed},
		{"error ratio: a slow call is not an error", errorRatio, 60_000, false, callFine},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.b.classify(tt.rtMs, tt.failed), tt.name)
	}
}
