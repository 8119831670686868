// Package breaker holds the circuit breakers that enforce circuit-breaking
// rules: Java's AbstractCircuitBreaker and its subclasses, plus the
// pre-1.8 average-RT strategy. The engine (package core) builds one per
// rule with [New]. What a breaker does, state by state, is documented in
// package core/circuitbreaker.
package breaker

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// Options configures a [Breaker].
type Options struct {
	// Stripes splits each bucket of the breaker's window into this many
	// cache lines, so that completions on many cores do not contend (see
	// [stat.Window]); 0 means 1.
	Stripes int
	// OnStateChange, if not nil, is called synchronously by the goroutine
	// that makes a transition, after it is made, with the time of the
	// transition (the change's Time is left for the caller to set from it).
	// It must be quick and must not enter the breaker's resource.
	OnStateChange func(c circuitbreaker.StateChange, at mono.Time)
}

// Breaker is the circuit breaker of one [circuitbreaker.Rule]: Java's
// AbstractCircuitBreaker and its subclasses, plus the pre-1.8 average-RT
// strategy. It is safe for concurrent use and takes no lock: the state is
// one atomic word changed by compare-and-swap, and the statistics are a
// lock-free [stat.Window] of StatIntervalMs.
//
// Time is passed in by the caller as a [mono.Time]; the breaker counts in
// whole milliseconds, as its window does. Create one with [New]; the zero
// value is not usable.
type Breaker struct {
	rule      circuitbreaker.Rule
	threshold float64 // Count, or the slow ratio for SlowRequestRatio
	maxRT     float64 // SlowRequestRatio: a call slower than this is slow
	timeWinMs int64
	minReq    int64
	slowAmt   int64 // AvgRT: RTSlowRequestAmount with its default applied
	samples   int
	stripes   int
	notify    func(circuitbreaker.StateChange, mono.Time)

	state     atomic.Int32
	nextRetry atomic.Int64                // ms; read only while Open
	window    atomic.Pointer[stat.Window] // Success: calls; Exception: slow or failed calls
	passCount atomic.Int64                // AvgRT: calls seen while the average RT was too high
	// lastBad is when the last slow or failed call completed (ms): while
	// it is a whole interval ago, no measure can exceed its threshold and
	// the healthy path reads no window.
	lastBad atomic.Int64
}

// New returns a closed breaker for a valid rule.
func New(r circuitbreaker.Rule, opts Options) *Breaker {
	b := &Breaker{
		rule:      r,
		threshold: r.Count,
		timeWinMs: int64(r.TimeWindow) * 1000,
		minReq:    int64(r.MinRequestAmount),
		slowAmt:   int64(r.WithDefaults().RTSlowRequestAmount),
		stripes:   max(opts.Stripes, 1),
		notify:    opts.OnStateChange,
	}
	if r.Grade == circuitbreaker.SlowRequestRatio {
		b.maxRT, b.threshold = r.Count, r.SlowRatioThreshold
	}
	b.lastBad.Store(math.MinInt64 / 2)
	if r.Grade != circuitbreaker.AvgRT {
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
func (b *Breaker) Rule() circuitbreaker.Rule { return b.rule }

// State returns the breaker's current state.
func (b *Breaker) State() circuitbreaker.State { return circuitbreaker.State(b.state.Load()) }

// TryPass decides whether a call may enter at now. node is the
// resource's statistics; only the AvgRT grade reads it (its average RT over
// the second window) and may be nil otherwise.
//
// probe is true when this call is the half-open probe: the breaker moved
// from OPEN to HALF_OPEN to let it through. The caller must then report the
// call's outcome with probe set in [Breaker.OnComplete], or call
// [Breaker.AbortProbe] if a later check blocks the call.
func (b *Breaker) TryPass(now mono.Time, node *stat.Node) (pass, probe bool) {
	if b.rule.Grade == circuitbreaker.AvgRT {
		return b.tryPassAvgRT(now, node), false
	}
	switch circuitbreaker.State(b.state.Load()) {
	case circuitbreaker.Closed:
		return true, false
	case circuitbreaker.Open:
		if now.Millis() >= b.nextRetry.Load() && b.transition(circuitbreaker.Open, circuitbreaker.HalfOpen, 0, now) {
			return true, true
		}
	}
	return false, false
}

// tryPassAvgRT is the DegradeRule.passCheck of Sentinel before 1.8.
func (b *Breaker) tryPassAvgRT(now mono.Time, node *stat.Node) bool {
	if circuitbreaker.State(b.state.Load()) == circuitbreaker.Open {
		if now.Millis() < b.nextRetry.Load() || !b.state.CompareAndSwap(int32(circuitbreaker.Open), int32(circuitbreaker.Closed)) {
			return false
		}
		b.passCount.Store(0)
		b.changed(circuitbreaker.Open, circuitbreaker.Closed, 0, now)
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
	b.open(circuitbreaker.Closed, rt, now)
	return false
}

// AbortProbe returns a HALF_OPEN breaker to OPEN when its probe call was
// blocked by a check made after the breaker's (Java's whenTerminate hook of
// fromOpenToHalfOpen). The retry time is not moved, so the next call may
// probe at once: the aborted probe told nothing about the resource.
func (b *Breaker) AbortProbe(now mono.Time) {
	b.transition(circuitbreaker.HalfOpen, circuitbreaker.Open, 1, now)
}

// outcome is how a completed call counts for the breaker's rule. A
// slow-ratio rule looks only at how long a call took, an error rule only
// at whether it failed: a slow call is not an error, and a failed call that
// was fast is fine for a slow-ratio rule.
type outcome uint8

const (
	callFine   outcome = iota // neither slow nor failed, as far as the rule looks
	callSlow                  // SlowRequestRatio: took longer than Count ms
	callFailed                // ErrorRatio, ErrorCount: ended with an error
)

// classify grades a call that took rtMs and failed or not.
func (b *Breaker) classify(rtMs int64, failed bool) outcome {
	switch {
	case b.rule.Grade == circuitbreaker.SlowRequestRatio:
		if float64(rtMs) > b.maxRT {
			return callSlow
		}
	case failed:
		return callFailed
	}
	return callFine
}

// OnComplete records a call that passed and completed at now, after rt
// (counted in whole milliseconds, truncated, as Java does), failed or not.
// probe says whether the call was the half-open probe (TryPass returned
// probe = true for it); only the probe's outcome decides a HALF_OPEN
// breaker (settleProbe), and a CLOSED breaker opens when its interval
// crosses the threshold (openIfOver).
func (b *Breaker) OnComplete(now mono.Time, rt time.Duration, failed, probe bool) {
	if b.rule.Grade == circuitbreaker.AvgRT {
		return // it reads the resource's average RT when calls enter
	}
	rtMs := rt.Milliseconds()
	o := b.classify(rtMs, failed)
	w := b.window.Load()
	w.Add(now, stat.Success, 1)
	if o != callFine {
		b.recordBad(now, w)
	}
	switch circuitbreaker.State(b.state.Load()) {
	case circuitbreaker.HalfOpen:
		if probe {
			b.settleProbe(now, o, rtMs)
		}
	case circuitbreaker.Closed:
		// With no bad call in the interval no measure can exceed its
		// threshold, so the healthy path reads one atomic word.
		if now.Millis()-b.lastBad.Load() < w.IntervalMs() {
			b.openIfOver(now, w)
		}
	}
}

// recordBad counts a slow or failed call in window w, as an Exception
// (every call is a Success), and notes when the last one completed.
func (b *Breaker) recordBad(now mono.Time, w *stat.Window) {
	w.Add(now, stat.Exception, 1)
	if ms := now.Millis(); b.lastBad.Load() < ms {
		b.lastBad.Store(ms)
	}
}

// settleProbe decides a HALF_OPEN breaker from its probe: a slow probe
// reopens it (the value is the probe's RT in ms), a failed probe too (value
// 1), and a fine one closes it, with the statistics started over (Java
// resets its only bucket).
func (b *Breaker) settleProbe(now mono.Time, o outcome, rtMs int64) {
	switch o {
	case callSlow:
		b.open(circuitbreaker.HalfOpen, float64(rtMs), now)
	case callFailed:
		b.open(circuitbreaker.HalfOpen, 1, now)
	default:
		interval := b.window.Load().IntervalMs()
		b.window.Store(stat.NewWindow(b.samples, interval, b.stripes))
		b.transition(circuitbreaker.HalfOpen, circuitbreaker.Closed, 0, now)
	}
}

// openIfOver opens a CLOSED breaker when the interval of window w has seen
// at least MinRequestAmount calls and the rule's measure exceeds its
// threshold.
func (b *Breaker) openIfOver(now mono.Time, w *stat.Window) {
	nBad := w.Sum(now, stat.Exception)
	if nBad == 0 {
		return
	}
	total := w.Sum(now, stat.Success)
	if total < b.minReq {
		return
	}
	if v := b.measure(nBad, total); b.exceeds(v) {
		b.open(circuitbreaker.Closed, v, now)
	}
}

// measure is the rule's measure of an interval of total calls, nBad of them
// slow or failed: the error count for ErrorCount, else the share of bad
// calls (the slow ratio or the error ratio).
func (b *Breaker) measure(nBad, total int64) float64 {
	if b.rule.Grade == circuitbreaker.ErrorCount {
		return float64(nBad)
	}
	return float64(nBad) / float64(total)
}

// exceeds reports whether measure v opens the breaker: above the threshold,
// or, as in Java, a slow ratio of exactly 1.0 when the threshold is 1.0.
func (b *Breaker) exceeds(v float64) bool {
	return v > b.threshold || (b.rule.Grade == circuitbreaker.SlowRequestRatio && v == b.threshold && b.threshold == 1)
}

// open moves the breaker from state from to OPEN until TimeWindow has
// passed, v being the value that triggered it.
func (b *Breaker) open(from circuitbreaker.State, v float64, now mono.Time) {
	b.nextRetry.Store(now.Millis() + b.timeWinMs)
	b.transition(from, circuitbreaker.Open, v, now)
}

// transition moves the breaker from state from to state to, when it is
// still in from, and tells the listener. It reports whether it did.
func (b *Breaker) transition(from, to circuitbreaker.State, v float64, now mono.Time) bool {
	if !b.state.CompareAndSwap(int32(from), int32(to)) {
		return false
	}
	b.changed(from, to, v, now)
	return true
}

func (b *Breaker) changed(from, to circuitbreaker.State, v float64, now mono.Time) {
	if b.notify != nil {
		b.notify(circuitbreaker.StateChange{From: from, To: to, Value: v, Rule: b.rule}, now)
	}
}
