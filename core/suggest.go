package core

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/mono"
)

// Suggestion is a rule set proposed from a resource's measured baseline:
// see [Engine.Suggest].
type Suggestion struct {
	// From and To bound the span the figures cover: From is the start of
	// its oldest minute, To the end of its last whole second.
	From, To time.Time
	// Factor is the headroom applied to the observed peaks.
	Factor float64
	// Resources lists the baseline of every measured resource with
	// entries in the span, sorted by name, with the rules suggested for
	// it, or a Note saying why not.
	Resources []Baseline
	// Rules is a whole rule set, ready to load or to write as a
	// document: the rules in force of every kind, except that each
	// resource with a suggested rule of a kind has its shadow rules of
	// that kind (flow, circuit breaker) replaced by the suggestion. The
	// enforcing rules in force are kept as they are, so writing Rules to
	// the document the engine follows only adds (or replaces) shadow
	// rules.
	Rules RuleSet
}

// Baseline is what a resource did over a suggestion's span, and the rules
// suggested from it. Every suggested rule has Shadow set.
type Baseline struct {
	Resource string
	// Seconds counts the seconds of the span with entries passed.
	Seconds int
	// Passed, Blocked, Succeeded and Failed are totals over the span, as
	// in [Figures].
	Passed, Blocked, Succeeded, Failed int64
	// PeakQPS is the most entries passed in one second, and PeakAt the
	// start of the first second with that many (zero when none passed).
	PeakQPS int64
	PeakAt  time.Time
	// PeakDemand is the most entries asked for in one second: passed,
	// plus blocked by any rule but an authority rule (a caller refused
	// by origin is refused at any load). It is above PeakQPS when rules
	// in force held the resource down.
	PeakDemand int64
	// PeakErrorRatio is the highest ratio of failed to completed entries,
	// and PeakAvgRT the highest average response time, of the seconds
	// with at least 5 completed entries (a breaker's default
	// MinRequestAmount: a breaker ignores quieter seconds); 0 when no
	// second had that many.
	PeakErrorRatio float64
	PeakAvgRT      time.Duration
	// Flow holds the suggested flow rule, if any; CircuitBreaker the
	// suggested slow-call and error-ratio breakers.
	Flow           []flow.Rule
	CircuitBreaker []circuitbreaker.Rule
	// Note says why a rule was not suggested, and when the flow rule is
	// suggested from the demand rather than the passed entries; empty
	// otherwise.
	Note string
}

// Baseline bounds and the choices of Suggest.
const (
	// baselineMinutes is how many minutes of baseline a resource keeps:
	// an hour plus the current minute.
	baselineMinutes = 61
	// busyCalls is how many completed entries a second needs for its RT
	// and error ratio to count: a breaker's default MinRequestAmount.
	busyCalls = 5
	// minSeconds is how many seconds with traffic (busy seconds, for
	// breakers) a span needs before a rule is suggested from it.
	minSeconds = 30
	// defaultFactor is the headroom over the observed peaks.
	defaultFactor = 1.3
	// errorMargin is the least an error-ratio threshold lies above the
	// observed peak ratio.
	errorMargin = 0.1
	// slowRatio is the ratio of slow calls the slow-call breaker allows.
	slowRatio = 0.5
	// minSlowMs is the least slow-call threshold suggested, ms (see
	// Suggest): below it, a pause that lengthens every call at once is
	// as long as the calls, and whole-ms counting rounds by over 10 %.
	minSlowMs = 10
	// breakerWindow is how long (s) a suggested breaker stays open.
	breakerWindow = 10
)

// minuteRec is one minute of a resource's baseline, folded from its whole
// seconds. Counts saturate at 2³²-1.
type minuteRec struct {
	min                             int64 // which minute (engine s / 60); -1 when unused
	pass, block, success, exception uint32
	peak                            uint32 // most entries passed in one second
	peakSec                         uint8  // that second, in the minute
	demand                          uint32 // most entries passed or blocked (but by authority) in one second
	active                          uint8  // seconds with entries passed
	busy                            uint8  // seconds with at least busyCalls completed
	// The busy seconds with the highest error ratio and average RT, as
	// their counts: failed of calls, RT sum (ms) of calls.
	errFailed, errCalls uint32
	rtSum, rtCalls      uint32
}

// foldSeconds folds every whole second harvested since the last call
// into the minute ring: a second is whole once the harvest is past it.
// It runs under o.mu, in the harvest.
func (s *series) foldSeconds() {
	if s.secs == nil {
		return
	}
	done := s.next / 1000
	for sec := max(s.folded, done-historySeconds); sec < done; sec++ {
		if d := &s.secs[sec%historySeconds]; d.sec == sec {
			s.fold(d)
		}
	}
	s.folded = max(s.folded, done)
}

func (s *series) fold(d *second) {
	if s.mins == nil {
		s.mins = make([]minuteRec, baselineMinutes)
		for i := range s.mins {
			s.mins[i].min = -1
		}
	}
	m := d.sec / 60
	r := &s.mins[m%baselineMinutes]
	if r.min != m {
		*r = minuteRec{min: m}
	}
	r.pass = sat32(int64(r.pass) + int64(d.pass))
	r.block = sat32(int64(r.block) + int64(d.block))
	r.success = sat32(int64(r.success) + int64(d.success))
	r.exception = sat32(int64(r.exception) + int64(d.exception))
	if d.pass > 0 {
		r.active++
	}
	if d.pass > r.peak {
		r.peak, r.peakSec = d.pass, uint8(d.sec%60)
	}
	demand := int64(d.pass) + int64(d.block)
	if s.kinds != nil {
		demand -= int64(s.kinds[d.sec%historySeconds][BlockAuthority-1])
	}
	r.demand = max(r.demand, sat32(demand))
	if d.success < busyCalls {
		return
	}
	r.busy++
	if r.errCalls == 0 || higher(d.exception, d.success, r.errFailed, r.errCalls) {
		r.errFailed, r.errCalls = d.exception, d.success
	}
	if r.rtCalls == 0 || higher(d.rt, d.success, r.rtSum, r.rtCalls) {
		r.rtSum, r.rtCalls = d.rt, d.success
	}
}

// higher reports whether a/b > c/d, for b, d > 0.
func higher(a, b, c, d uint32) bool { return uint64(a)*uint64(d) > uint64(c)*uint64(b) }

// Suggest proposes rules from what the engine measured over the last
// period (rounded out to whole minutes; at most an hour, which 0 means
// too), with factor as headroom (values below 1, NaN and infinities mean
// 1.3). For every resource with traffic in the span it reports the
// baseline — peak pass QPS, peak demand, peak error ratio and peak average
// RT per second — and suggests, every rule with Shadow set:
//
//   - a QPS flow rule with Count ceil(factor × peak demand): the most
//     entries passed and blocked (by any rule but authority) in one
//     second, so that a resource a rule already holds down is suggested
//     what its callers asked for, not the limit it has (Baseline.Note
//     says so when the demand is above the peak pass QPS);
//   - a slow-call breaker (SlowRequestRatio) with Count (the RT above
//     which a call is slow, ms) max(ceil(factor × peak average RT), 10),
//     opening when more than half of at least 5 calls in a second are
//     slow. The 10 ms floor: RTs are counted in whole ms, and below
//     10 ms a pause that lengthens every call at once (a GC cycle, a
//     scheduling delay, a throttled CPU quota) is as long as the calls
//     themselves: 2 ms from a 1.4 ms peak would trip on any pause. The
//     engine keeps no RT percentiles; RT distributions lean right (a
//     second's median is typically below its mean), so in the slowest
//     second observed fewer than half the calls were typically slower
//     than its average, let alone factor × that average: the breaker
//     trips when most calls are markedly slower than anything in the
//     baseline;
//   - an error-ratio breaker with Count factor × peak error ratio, but at
//     least 0.1 above it (rounded up to 0.01), none when that reaches 1;
//
// both breakers with a 10 s TimeWindow and Java's default
// MinRequestAmount (5) and StatIntervalMs (1 s). A resource needs 30
// seconds of the span with entries passed for a flow rule, and 30 with at
// least 5 completed entries for the breakers; Baseline.Note says what was
// left out.
//
// The baseline is kept per resource from the engine's making on: one
// record per minute for the last 61 minutes (about 3 KB per measured
// resource, made at its first whole second of traffic), folded by the harvesting goroutine from the
// per-second history; entries never touch it. Suggest takes the same lock
// as Stats and never blocks an entry.
func (e *Engine) Suggest(period time.Duration, factor float64) Suggestion {
	if !(factor >= 1) || math.IsInf(factor, 0) {
		factor = defaultFactor
	}
	if period <= 0 || period > time.Hour {
		period = time.Hour
	}
	o := &e.obs
	o.mu.Lock()
	now := e.now()
	e.harvest(now)
	nowSec := now.Millis() / 1000
	firstMin := max(0, nowSec-int64((period+time.Second-1)/time.Second)) / 60
	sg := Suggestion{Factor: factor, From: e.wallTime(mono.FromMillis(firstMin * 60_000)),
		To: e.wallTime(mono.FromMillis(nowSec * 1000))}
	for name, s := range o.series {
		if s.gone {
			continue
		}
		if b, busy, ok := s.baseline(name, firstMin, nowSec/60, e.wallTime); ok {
			b.suggest(factor, busy)
			sg.Resources = append(sg.Resources, b)
		}
	}
	o.mu.Unlock()
	slices.SortFunc(sg.Resources, func(a, b Baseline) int { return strings.Compare(a.Resource, b.Resource) })
	sg.Rules = e.withSuggested(sg.Resources)
	return sg
}

// baseline sums the minute records from firstMin to lastMin, and counts
// their busy seconds; ok is false when the resource had no entries then.
// wall converts engine time.
func (s *series) baseline(name string, firstMin, lastMin int64, wall func(mono.Time) time.Time) (b Baseline, busy int, ok bool) {
	if s.mins == nil {
		return b, 0, false
	}
	var errFailed, errCalls, rtSum, rtCalls uint32
	var peakSec int64
	for m := firstMin; m <= lastMin; m++ {
		r := &s.mins[m%baselineMinutes]
		if r.min != m {
			continue
		}
		b.Seconds += int(r.active)
		b.Passed += int64(r.pass)
		b.Blocked += int64(r.block)
		b.Succeeded += int64(r.success)
		b.Failed += int64(r.exception)
		if int64(r.peak) > b.PeakQPS {
			b.PeakQPS, peakSec = int64(r.peak), m*60+int64(r.peakSec)
		}
		b.PeakDemand = max(b.PeakDemand, int64(r.demand))
		if r.errCalls > 0 && (errCalls == 0 || higher(r.errFailed, r.errCalls, errFailed, errCalls)) {
			errFailed, errCalls = r.errFailed, r.errCalls
		}
		if r.rtCalls > 0 && (rtCalls == 0 || higher(r.rtSum, r.rtCalls, rtSum, rtCalls)) {
			rtSum, rtCalls = r.rtSum, r.rtCalls
		}
		busy += int(r.busy)
	}
	if b.Passed == 0 && b.Blocked == 0 {
		return b, 0, false
	}
	b.Resource = name
	if b.PeakQPS > 0 {
		b.PeakAt = wall(mono.FromMillis(peakSec * 1000))
	}
	if errCalls > 0 {
		b.PeakErrorRatio = float64(errFailed) / float64(errCalls)
		b.PeakAvgRT = time.Duration(rtSum) * time.Millisecond / time.Duration(rtCalls)
	}
	return b, busy, true
}

// suggest fills the rules suggested from the baseline, and the note; busy
// is its count of busy seconds.
func (b *Baseline) suggest(factor float64, busy int) {
	var notes []string
	if b.Seconds < minSeconds {
		notes = append(notes, fmt.Sprintf("no flow rule: %d s with entries passed, %d needed", b.Seconds, minSeconds))
	} else {
		peak := max(b.PeakQPS, b.PeakDemand)
		b.Flow = []flow.Rule{flow.Rule{Resource: b.Resource, Grade: flow.GradeQPS,
			Count: ceil(factor * float64(peak)), Shadow: true}.WithDefaults()}
		if peak > b.PeakQPS {
			notes = append(notes, fmt.Sprintf("flow count from the peak demand %d/s (passed and blocked), not the %d/s passed: rules in force blocked the rest",
				peak, b.PeakQPS))
		}
	}
	breaker := func(g circuitbreaker.Grade, count float64, ratio float64) {
		b.CircuitBreaker = append(b.CircuitBreaker, circuitbreaker.Rule{Resource: b.Resource, Grade: g, Count: count,
			SlowRatioThreshold: ratio, TimeWindow: breakerWindow, MinRequestAmount: busyCalls,
			StatIntervalMs: 1000, Shadow: true}.WithDefaults())
	}
	rtMs := float64(b.PeakAvgRT) / float64(time.Millisecond)
	switch {
	case busy < minSeconds:
		notes = append(notes, fmt.Sprintf("no breaker: %d s with at least %d completed entries, %d needed", busy, busyCalls, minSeconds))
	default:
		breaker(circuitbreaker.SlowRequestRatio, max(ceil(factor*rtMs), minSlowMs), slowRatio)
		if t := math.Ceil(max(factor*b.PeakErrorRatio, b.PeakErrorRatio+errorMargin)*100-1e-6) / 100; t < 1 {
			breaker(circuitbreaker.ErrorRatio, t, 0)
		} else {
			notes = append(notes, fmt.Sprintf("no error-ratio breaker: the peak error ratio %.2f leaves no room below 1", b.PeakErrorRatio))
		}
	}
	b.Note = strings.Join(notes, "; ")
}

// ceil rounds x up to a whole number, forgiving the floating-point error
// of a product (1.3 × 150 is 195.00000000000003).
func ceil(x float64) float64 { return math.Ceil(x - 1e-9*max(1, math.Abs(x))) }

// withSuggested returns the rules in force with the suggestions in place
// of the suggested resources' shadow rules of the same kind.
func (e *Engine) withSuggested(bs []Baseline) RuleSet {
	rs := RuleSet{System: e.system.Rules(), Authority: e.authority.Rules(), Hotspot: e.hotspot.Rules()}
	var flows []flow.Rule
	var breakers []circuitbreaker.Rule
	flowed, broken := map[string]bool{}, map[string]bool{}
	for _, b := range bs {
		flows = append(flows, b.Flow...)
		breakers = append(breakers, b.CircuitBreaker...)
		flowed[b.Resource] = len(b.Flow) > 0
		broken[b.Resource] = len(b.CircuitBreaker) > 0
	}
	rs.Flow = replaceShadows(e.flow.Rules(), flows, flowed, func(r flow.Rule) (string, bool) { return r.Resource, r.Shadow })
	rs.CircuitBreaker = replaceShadows(e.breakers.Rules(), breakers, broken,
		func(r circuitbreaker.Rule) (string, bool) { return r.Resource, r.Shadow })
	return rs
}

// replaceShadows returns the rules in force without the shadow rules of
// the resources in covered, followed by the suggested ones.
func replaceShadows[R any](inForce, suggested []R, covered map[string]bool, key func(R) (string, bool)) []R {
	out := make([]R, 0, len(inForce)+len(suggested))
	for _, r := range inForce {
		if res, shadow := key(r); !shadow || !covered[res] {
			out = append(out, r)
		}
	}
	return append(out, suggested...)
}
