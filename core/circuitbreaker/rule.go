package circuitbreaker

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bulwark-go/bulwark/core/rule"
)

// Grade is the strategy a breaker uses to decide that a resource is
// failing: Java's DEGRADE_GRADE_* constants, plus AvgRT.
type Grade int

// Grades. The zero value is SlowRequestRatio, as Java's constant 0 and
// Java's default.
const (
	// SlowRequestRatio opens the breaker when the ratio of calls slower
	// than Count ms exceeds SlowRatioThreshold (Java DEGRADE_GRADE_RT).
	SlowRequestRatio Grade = 0
	// ErrorRatio opens the breaker when the ratio of failed calls exceeds
	// Count, a number in [0, 1] (Java DEGRADE_GRADE_EXCEPTION_RATIO).
	ErrorRatio Grade = 1
	// ErrorCount opens the breaker when the number of failed calls in the
	// statistic interval exceeds Count (Java DEGRADE_GRADE_EXCEPTION_COUNT).
	ErrorCount Grade = 2
	// AvgRT is the average-RT strategy of Sentinel before 1.8: when the
	// average RT of the last second reaches Count ms, RTSlowRequestAmount
	// more calls pass and then the breaker opens for TimeWindow seconds.
	// Java 1.8 has no such grade; 100 is outside Java's 0–2 so that it can
	// never be mistaken for one. Documents may write 100 or "avgRt".
	AvgRT Grade = 100
)

func (g Grade) String() string {
	switch g {
	case SlowRequestRatio:
		return "slowRequestRatio"
	case ErrorRatio:
		return "errorRatio"
	case ErrorCount:
		return "errorCount"
	case AvgRT:
		return "avgRt"
	}
	return fmt.Sprintf("Grade(%d)", int(g))
}

// defaultRTSlowRequestAmount is the number of calls AvgRT lets pass while
// the average RT is too high, when RTSlowRequestAmount is 0 (Sentinel's
// DEGRADE_DEFAULT_SLOW_REQUEST_AMOUNT).
const defaultRTSlowRequestAmount = 5

// Java's defaults of the fields whose zero value stands for them.
const (
	defaultMinRequestAmount   = 5
	defaultStatIntervalMs     = 1000
	defaultSlowRatioThreshold = 1.0
)

// Rule is a circuit-breaking rule, Java Sentinel's DegradeRule field for
// field, plus RTSlowRequestAmount of the pre-1.8 average-RT strategy.
//
// A field left at its zero value means Java's default, so a rule written in
// Go means what the same rule means in a document that leaves the field
// out: Rule{Resource: "r", Grade: ErrorRatio, Count: 0.5, TimeWindow: 10}
// opens at half the calls failing, over at least 5 calls a second.
// [Rule.WithDefaults] spells the defaults out; the engine applies it to the
// rules it loads (its Rules returns them so), and package converter to the
// rules it decodes and encodes, so documents always carry Java's numbers.
type Rule struct {
	// Resource is the name passed to Enter. Required.
	Resource string
	// LimitApp is the caller origin the rule applies to; Java 1.8 ignores
	// it for degrade rules. Zero value: "default", every caller.
	LimitApp string
	// Grade selects the strategy. Zero value: SlowRequestRatio.
	Grade Grade
	// Count is the threshold: the maximum RT in ms for SlowRequestRatio
	// and AvgRT, a ratio in [0, 1] for ErrorRatio, a number of errors for
	// ErrorCount. Zero value: 0 (Java's default too).
	Count float64
	// TimeWindow is how long the breaker stays open, in seconds, before a
	// probe call is let through (AvgRT: before the check starts over).
	// Required: Java has no default, and 0 is refused.
	TimeWindow int
	// MinRequestAmount is the number of calls in the statistic interval
	// below which the breaker does not open. Zero value: Java's default, 5.
	MinRequestAmount int
	// SlowRatioThreshold is the ratio of slow calls, in [0, 1], above which
	// a SlowRequestRatio breaker opens. Zero value: Java's default, 1.0 (the
	// breaker opens when every call is slow).
	//
	// Java's slowRatioThreshold 0 (any slow call opens the breaker) is
	// math.SmallestNonzeroFloat64 here, which behaves the same, since a
	// ratio of calls is either 0 or at least 1/calls: package converter
	// decodes a document's 0 to it and encodes it as 0.
	SlowRatioThreshold float64
	// StatIntervalMs is the length of the statistic interval in ms. Zero
	// value: Java's default, 1000.
	StatIntervalMs int
	// RTSlowRequestAmount is, for AvgRT, how many calls pass while the
	// average RT is at or above Count before the breaker opens. Zero
	// value: 5. Other grades ignore it.
	RTSlowRequestAmount int
	// Shadow makes the rule watch without acting: it is checked and each
	// entry it would block is counted (core.Engine.Stats, OnShadowBlock),
	// but it never blocks; its state machine runs as usual. Java ignores the field. Zero value: false, an
	// enforcing rule.
	Shadow bool
}

// WithDefaults returns r with Java's default in place of every field whose
// zero value stands for it: LimitApp "default", MinRequestAmount 5,
// SlowRatioThreshold 1.0, StatIntervalMs 1000 and RTSlowRequestAmount
// 5. It is idempotent.
func (r Rule) WithDefaults() Rule {
	if r.LimitApp == "" {
		r.LimitApp = rule.LimitAppDefault
	}
	if r.MinRequestAmount == 0 {
		r.MinRequestAmount = defaultMinRequestAmount
	}
	if r.SlowRatioThreshold == 0 {
		r.SlowRatioThreshold = defaultSlowRatioThreshold
	}
	if r.StatIntervalMs == 0 {
		r.StatIntervalMs = defaultStatIntervalMs
	}
	if r.RTSlowRequestAmount == 0 {
		r.RTSlowRequestAmount = defaultRTSlowRequestAmount
	}
	return r
}

// Validate reports every problem of the rule as it runs, with its defaults
// (see [Rule.WithDefaults]): one *rule.FieldError per problem, joined. It
// checks what Java's DegradeRuleManager.isValidRule checks, and also what
// Java lets through: unknown grades, NaN or infinite numbers, a negative
// RTSlowRequestAmount.
func (r Rule) Validate() error {
	r = r.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &rule.FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if strings.TrimSpace(r.Resource) == "" {
		bad("resource", "must not be empty")
	}
	switch {
	case math.IsNaN(r.Count) || math.IsInf(r.Count, 0):
		bad("count", "must be a finite number")
	case r.Count < 0:
		bad("count", "must be >= 0")
	case r.Grade == ErrorRatio && r.Count > 1:
		bad("count", "must be a ratio in [0, 1] for grade %s, got %g", r.Grade, r.Count)
	}
	if r.TimeWindow <= 0 {
		bad("timeWindow", "must be > 0 (seconds)")
	}
	if r.MinRequestAmount <= 0 {
		bad("minRequestAmount", "must be > 0")
	}
	if r.StatIntervalMs <= 0 {
		bad("statIntervalMs", "must be > 0 (ms)")
	}
	switch r.Grade {
	case SlowRequestRatio:
		if math.IsNaN(r.SlowRatioThreshold) || r.SlowRatioThreshold < 0 || r.SlowRatioThreshold > 1 {
			bad("slowRatioThreshold", "must be a ratio in [0, 1] for grade %s, got %g", r.Grade, r.SlowRatioThreshold)
		}
	case ErrorRatio, ErrorCount, AvgRT:
		if math.IsNaN(r.SlowRatioThreshold) || math.IsInf(r.SlowRatioThreshold, 0) {
			bad("slowRatioThreshold", "must be a finite number")
		}
	default:
		bad("grade", "must be 0 (slowRequestRatio), 1 (errorRatio), 2 (errorCount) or 100 (avgRt), got %d", int(r.Grade))
	}
	if r.RTSlowRequestAmount < 0 {
		bad("rtSlowRequestAmount", "must be >= 0 (0 means %d)", defaultRTSlowRequestAmount)
	}
	return errors.Join(errs...)
}
