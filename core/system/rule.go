package system

import (
	"errors"
	"fmt"
	"math"
)

// Unset is the value of a threshold that a rule leaves unset: Java's -1.
// Any negative value means the same, except for HighestCPUUsage, which
// must be exactly Unset or a ratio.
const Unset = -1

// Rule is an adaptive system-protection rule, Java Sentinel's SystemRule.
// It applies to inbound traffic only (see core.Inbound). Each field is one
// threshold; a negative value (Unset, Java's -1) leaves it unset, and one
// rule may set several. When several rules set the same field, the
// smallest value wins.
//
// The zero value is a trap: a threshold of 0 would block all inbound
// traffic, so Validate rejects 0 for every field and asks for -1 instead.
// Start from a rule with every field Unset and set what you need:
//
//	r := system.Rule{HighestSystemLoad: system.Unset, HighestCPUUsage: 0.8,
//		QPS: system.Unset, AvgRT: system.Unset, MaxThread: system.Unset}
//
// The converter does this for fields a document leaves out (Java's
// defaults are all -1).
type Rule struct {
	// HighestSystemLoad is the load1 threshold, checked BBR-style: above
	// it, an entry is blocked only when the concurrency also exceeds what
	// the resource can serve (maxSuccessQps × minRt).
	HighestSystemLoad float64
	// HighestCPUUsage is the CPU usage threshold, a ratio in (0, 1].
	HighestCPUUsage float64
	// QPS is the threshold of inbound entries per second, all resources
	// together.
	QPS float64
	// AvgRT is the threshold of the average response time of inbound
	// entries, in ms.
	AvgRT int64
	// MaxThread is the threshold of concurrent inbound entries.
	MaxThread int64
}

// Validate reports every problem of the rule, each as "field: problem",
// joined. Java's SystemRuleManager takes any value and skips the negative
// ones; Validate also rejects 0 (it would block everything and is almost
// always a forgotten field), NaN and infinities, a CPU usage above 1, and
// a rule that sets nothing.
func (r Rule) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{field}, args...)...))
	}
	set := 0
	float := func(field string, v float64) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			bad(field, "must be a finite number, or -1 to leave it unset")
		case v == 0:
			bad(field, "must not be 0, which would block all inbound traffic; use -1 to leave it unset")
		case v > 0:
			set++
		}
	}
	integer := func(field string, v int64) {
		switch {
		case v == 0:
			bad(field, "must not be 0, which would block all inbound traffic; use -1 to leave it unset")
		case v > 0:
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
	integer("avgRt", r.AvgRT)
	integer("maxThread", r.MaxThread)
	if set == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("rule sets no threshold: set at least one of highestSystemLoad, highestCpuUsage, qps, avgRt, maxThread"))
	}
	return errors.Join(errs...)
}
