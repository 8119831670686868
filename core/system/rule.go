package system

import (
	"errors"
	"fmt"
	"math"

	"github.com/bulwark-go/bulwark/core/rule"
)

// Unset is the value of a threshold that a rule leaves unset: Java's -1.
// Any negative value means the same, except for HighestCPUUsage, which
// must be exactly Unset or a ratio. A threshold left at 0 in Go is unset
// too (see [Rule.WithDefaults]).
const Unset = -1

// Rule is an adaptive system-protection rule, Java Sentinel's SystemRule.
// It applies to inbound traffic only (see core.Inbound). Each field is one
// threshold, and one rule may set several; when several rules set the same
// field, the smallest value wins.
//
// A threshold left at its zero value is unset, Java's default (-1,
// [Unset]), as in a document that leaves the field out, so a rule sets
// only what it names:
//
//	r := system.Rule{HighestCPUUsage: 0.8}
//
// [Rule.WithDefaults] writes the unset thresholds as -1; the engine applies
// it to the rules it loads (its Rules returns them so), and package
// converter to the rules it decodes and encodes. A negative threshold is
// unset too. A document's explicit 0, which Java takes as a threshold that
// blocks all inbound traffic, is refused by the converter.
type Rule struct {
	// HighestSystemLoad is the load1 threshold, checked BBR-style: above
	// it, an entry is blocked only when the concurrency also exceeds what
	// the resource can serve (maxSuccessQps × minRt). Zero value: unset.
	HighestSystemLoad float64
	// HighestCPUUsage is the CPU usage threshold, a ratio in (0, 1]. Zero
	// value: unset.
	HighestCPUUsage float64
	// QPS is the threshold of inbound entries per second, all resources
	// together. Zero value: unset.
	QPS float64
	// AvgRT is the threshold of the average response time of inbound
	// entries, in ms. Zero value: unset.
	AvgRT int64
	// MaxThread is the threshold of concurrent inbound entries. Zero value:
	// unset.
	MaxThread int64
	// Shadow makes the rule watch without acting: it is checked and each
	// entry it would block is counted (core.Engine.Stats, OnShadowBlock),
	// but it never blocks. Java ignores the field. Zero value: false, an
	// enforcing rule.
	Shadow bool
}

// WithDefaults returns r with Unset (-1, Java's default) in every
// threshold left at 0. It is idempotent.
func (r Rule) WithDefaults() Rule {
	defaultUnset(&r.HighestSystemLoad)
	defaultUnset(&r.HighestCPUUsage)
	defaultUnset(&r.QPS)
	defaultUnset(&r.AvgRT)
	defaultUnset(&r.MaxThread)
	return r
}

func defaultUnset[T float64 | int64](v *T) {
	if *v == 0 {
		*v = Unset
	}
}

// Validate reports every problem of the rule as it runs, with its defaults
// (see [Rule.WithDefaults]): one *rule.FieldError per problem, joined.
// Java's SystemRuleManager takes any value and skips the negative ones;
// Validate also rejects NaN and infinities, a CPU usage above 1 or other
// than -1 below 0, and a rule that sets nothing (a *rule.FieldError
// without a field).
func (r Rule) Validate() error {
	r = r.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &rule.FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	set := 0
	float := func(field string, v float64) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			bad(field, "must be a finite number, or -1 to leave it unset")
		case v > 0:
			set++
		}
	}
	integer := func(v int64) {
		if v > 0 {
			set++
		}
	}
	float("highestSystemLoad", r.HighestSystemLoad)
	switch c := r.HighestCPUUsage; {
	case c == Unset:
	case math.IsNaN(c) || c <= 0 || c > 1:
		bad("highestCpuUsage", "must be a ratio in (0, 1], or -1 to leave it unset; got %g", c)
	default:
		set++
	}
	float("qps", r.QPS)
	integer(r.AvgRT)
	integer(r.MaxThread)
	if set == 0 && len(errs) == 0 {
		bad("", "rule sets no threshold: set at least one of highestSystemLoad, highestCpuUsage, qps, avgRt, maxThread")
	}
	return errors.Join(errs...)
}
