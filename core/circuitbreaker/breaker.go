package circuitbreaker

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/bulwark-go/bulwark/internal/stat"
)

// State is the state of a [Breaker].
type State int32

// States. A breaker starts Closed.
const (
	// Closed lets every call through and watches their outcome.
	Closed State = iota
	// Open blocks every call until the rule's TimeWindow has passed.
	Open
	// HalfOpen has let one probe call through and blocks the others until
	// the probe completes.
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// StateChange is one transition of a breaker, delivered to the listener
// given in [Options]: Java's CircuitBreakerStateChangeObserver arguments.
type StateChange struct {
	From, To State
	// Value is what triggered the transition:
	//   - CLOSED → OPEN: the slow ratio, error ratio or error count of the
	//     statistic interval (AvgRT: the average RT, ms);
	//   - HALF_OPEN → OPEN: the probe's RT in ms for SlowRequestRatio, 1 for
	//     a failed probe or a probe that a later check blocked;
	//   - OPEN → HALF_OPEN, HALF_OPEN → CLOSED, OPEN → CLOSED (AvgRT): 0.
	Value float64
	// Rule is the breaker's rule.
	Rule Rule
	// Time is the breaker's clock reading (ms) at the transition.
	Time int64
}

// Options configures a [Breaker].
type Options struct {
	// Stripes splits each bucket of the breaker's window into this many
	// cache lines, so that completions on many cores do not contend (see
	// [stat.Window]); 0 means 1.
	Stripes int
	// OnStateChange, if not nil, is called synchronously by the goroutine
	// that makes a transition, after it is made. It must be quick and must
	// not enter the breaker's resource.
	OnStateChange func(StateChange)
}

// Breaker is the circuit breaker of one [Rule]: Java's
// AbstractCircuitBreaker and its subclasses, plus the pre-1.8 average-RT
// strategy. It is safe for concurrent use and takes no lock: the state is
// one atomic word changed by compare-and-swap, and the statistics are a
// lock-free [stat.Window] of StatIntervalMs.
//
// Time is passed in by the caller as milliseconds on any monotonic scale.
// Create one with [New]; the zero value is not usable.
type Breaker struct {
	rule      Rule
	threshold float64 // Count, or the slow ratio for SlowRequestRatio
	maxRT     float64 // SlowRequestRatio: a call slower than this is slow
	timeWinMs int64
	minReq    int64
	slowAmt   int64 // AvgRT: RTSlowRequestAmount with its default applied
	samples   int
	stripes   int
	notify    func(StateChange)

	state     atomic.Int32
	nextRetry atomic.Int64 // ms; read only while Open
	window    atomic.Pointer[stat.Window]
	passCount atomic.Int64 // AvgRT: calls seen while the average RT was too high
	// lastBad is when the last slow or failed call completed (ms): while
	// it is a whole interval ago, no measure can exceed its threshold and
	// the healthy path reads no window.
	lastBad atomic.Int64
}

// New returns a closed breaker for a valid rule.
func New(r Rule, opts Options) *Breaker {
	b := &Breaker{
		rule:      r,
		threshold: r.Count,
		timeWinMs: int64(r.TimeWindow) * 1000,
		minReq:    int64(r.MinRequestAmount),
		slowAmt:   int64(r.RTSlowRequestAmount),
		stripes:   max(opts.Stripes, 1),
		notify:    opts.OnStateChange,
	}
	if r.Grade == SlowRequestRatio {
		b.maxRT, b.threshold = r.Count, r.SlowRatioThreshold
	}
	if b.slowAmt <= 0 {
		b.slowAmt = DefaultRTSlowRequestAmount
	}
	b.lastBad.Store(math.MinInt64 / 2)
	if r.Grade != AvgRT {
		interval := int64(max(r.StatIntervalMs, 1))
		b.samples = SampleCount(interval)
		b.window.Store(stat.NewWindow(b.samples, interval, b.stripes))
	}
	return b
}

// SampleCount is the number of buckets of a breaker's window of intervalMs:
// 2 when the interval is even, so that the window slides by half an
// interval, else 1. (Java uses one bucket: its window jumps; ours slides,
// and old calls leave it half an interval at a time.)
func SampleCount(intervalMs int64) int {
	if intervalMs%2 == 0 {
		return 2
	}
	return 1
}

// Rule returns the breaker's rule.
func (b *Breaker) Rule() Rule { return b.rule }

// State returns the breaker's current state.
func (b *Breaker) State() State { return State(b.state.Load()) }

// TryPass decides whether a call may enter at now (ms). node is the
// resource's statistics; only the AvgRT grade reads it (its average RT over
// the second window) and may be nil otherwise.
//
// probe is true when this call is the half-open probe: the breaker moved
// from OPEN to HALF_OPEN to let it through. The caller must then report the
// call's outcome with probe set in [Breaker.OnComplete], or call
// [Breaker.AbortProbe] if a later check blocks the call.
func (b *Breaker) TryPass(now int64, node *stat.Node) (pass, probe bool) {
	if b.rule.Grade == AvgRT {
		return b.tryPassAvgRT(now, node), false
	}
	switch State(b.state.Load()) {
	case Closed:
		return true, false
	case Open:
		if now >= b.nextRetry.Load() && b.state.CompareAndSwap(int32(Open), int32(HalfOpen)) {
			b.changed(Open, HalfOpen, 0, now)
			return true, true
		}
	}
	return false, false
}

// tryPassAvgRT is the DegradeRule.passCheck of Sentinel before 1.8.
func (b *Breaker) tryPassAvgRT(now int64, node *stat.Node) bool {
	if State(b.state.Load()) == Open {
		if now < b.nextRetry.Load() || !b.state.CompareAndSwap(int32(Open), int32(Closed)) {
			return false
		}
		b.passCount.Store(0)
		b.changed(Open, Closed, 0, now)
	}
	if node == nil {
		return true
	}
	rt := node.AvgRT(now)
	if rt < b.threshold {
		if b.passCount.Load() != 0 {
			b.passCount.Store(0)
		}
		return true
	}
	if b.passCount.Add(1) < b.slowAmt {
		return true
	}
	b.nextRetry.Store(now + b.timeWinMs)
	if b.state.CompareAndSwap(int32(Closed), int32(Open)) {
		b.changed(Closed, Open, rt, now)
	}
	return false
}

// AbortProbe returns a HALF_OPEN breaker to OPEN when its probe call was
// blocked by a check made after the breaker's (Java's whenTerminate hook of
// fromOpenToHalfOpen). The retry time is not moved, so the next call may
// probe at once: the aborted probe told nothing about the resource.
func (b *Breaker) AbortProbe(now int64) {
	if b.state.CompareAndSwap(int32(HalfOpen), int32(Open)) {
		b.changed(HalfOpen, Open, 1, now)
	}
}

// OnComplete records a call that passed and completed at now (ms), after rt
// ms, failed or not. probe says whether the call was the half-open probe
// (TryPass returned probe = true for it); only the probe's outcome decides
// a HALF_OPEN breaker.
//
// In the CLOSED state, the breaker opens when the interval has seen at
// least MinRequestAmount calls and the grade's measure exceeds its
// threshold (a slow ratio of exactly 1.0 also opens when the threshold is
// 1.0, as in Java).
func (b *Breaker) OnComplete(now, rt int64, failed, probe bool) {
	if b.rule.Grade == AvgRT {
		return
	}
	bad := failed
	if b.rule.Grade == SlowRequestRatio {
		bad = float64(rt) > b.maxRT
	}
	w := b.window.Load()
	w.Add(now, stat.Success, 1)
	if bad {
		w.Add(now, stat.Exception, 1)
		if b.lastBad.Load() < now {
			b.lastBad.Store(now)
		}
	}
	switch State(b.state.Load()) {
	case HalfOpen:
		if !probe {
			return
		}
		if bad {
			v := 1.0
			if b.rule.Grade == SlowRequestRatio {
				v = float64(rt)
			}
			b.nextRetry.Store(now + b.timeWinMs)
			if b.state.CompareAndSwap(int32(HalfOpen), int32(Open)) {
				b.changed(HalfOpen, Open, v, now)
			}
			return
		}
		// Closing starts the statistics over (Java resets its only bucket).
		b.window.Store(stat.NewWindow(b.samples, w.IntervalMs(), b.stripes))
		if b.state.CompareAndSwap(int32(HalfOpen), int32(Closed)) {
			b.changed(HalfOpen, Closed, 0, now)
		}
		return
	case Open:
		return
	}
	// Closed: with no bad call in the interval no measure can exceed its
	// threshold, so the healthy path reads one atomic word.
	if now-b.lastBad.Load() >= w.IntervalMs() {
		return
	}
	nBad := w.Sum(now, stat.Exception)
	if nBad == 0 {
		return
	}
	total := w.Sum(now, stat.Success)
	if total < b.minReq {
		return
	}
	v := float64(nBad)
	if b.rule.Grade != ErrorCount {
		v /= float64(total)
	}
	if v > b.threshold || (b.rule.Grade == SlowRequestRatio && v == b.threshold && b.threshold == 1) {
		b.nextRetry.Store(now + b.timeWinMs)
		if b.state.CompareAndSwap(int32(Closed), int32(Open)) {
			b.changed(Closed, Open, v, now)
		}
	}
}

func (b *Breaker) changed(from, to State, v float64, now int64) {
	if b.notify != nil {
		b.notify(StateChange{From: from, To: to, Value: v, Rule: b.rule, Time: now})
	}
}
