package flow

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Grade is what a rule counts: Java's FLOW_GRADE_* constants.
type Grade int

// Grades. The zero value is GradeThread, as Java's constant 0; Java's
// FlowRule constructor defaults to GradeQPS, and so does the converter when
// a document leaves "grade" out.
const (
	GradeThread Grade = 0 // concurrent entries
	GradeQPS    Grade = 1 // admitted entries per second
)

func (g Grade) String() string {
	switch g {
	case GradeThread:
		return "thread"
	case GradeQPS:
		return "QPS"
	}
	return fmt.Sprintf("Grade(%d)", int(g))
}

// Strategy says whose statistics decide: Java's STRATEGY_* constants.
type Strategy int

// Strategies.
const (
	// Direct: the resource's own statistics (or the origin's, see LimitApp).
	Direct Strategy = 0
	// Relate: the statistics of RefResource, another resource; a write
	// path is throttled when the related read path is busy.
	Relate Strategy = 1
	// Chain: only entries that came in through the context named
	// RefResource (see core.WithContextName) are counted and limited.
	Chain Strategy = 2
)

func (s Strategy) String() string {
	switch s {
	case Direct:
		return "direct"
	case Relate:
		return "relate"
	case Chain:
		return "chain"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// ControlBehavior is what happens to traffic above the threshold: Java's
// CONTROL_BEHAVIOR_* constants.
type ControlBehavior int

// Control behaviors.
const (
	// Reject blocks entries above the threshold at once.
	Reject ControlBehavior = 0
	// WarmUp lets the allowed rate climb from Count/coldFactor to Count over
	// WarmUpPeriodSec after a cold period (Guava's SmoothWarmingUp).
	WarmUp ControlBehavior = 1
	// RateLimiter paces entries evenly, 1/Count apart, queueing each for up
	// to MaxQueueingTimeMs (a leaky bucket).
	RateLimiter ControlBehavior = 2
	// WarmUpRateLimiter paces entries at the warm-up rate.
	WarmUpRateLimiter ControlBehavior = 3
)

func (c ControlBehavior) String() string {
	switch c {
	case Reject:
		return "reject"
	case WarmUp:
		return "warmUp"
	case RateLimiter:
		return "rateLimiter"
	case WarmUpRateLimiter:
		return "warmUpRateLimiter"
	}
	return fmt.Sprintf("ControlBehavior(%d)", int(c))
}

// Origins with a meaning of their own in LimitApp.
const (
	LimitAppDefault = "default" // every caller; "" means the same
	LimitAppOther   = "other"   // callers that no other rule of the resource names
)

// Rule is a flow rule, Java Sentinel's FlowRule field for field.
//
// The zero value of every field is Java's zero value, not Java's default:
// Grade 0 is GradeThread, LimitApp "" means "default", and WarmUpPeriodSec /
// MaxQueueingTimeMs 0 are invalid for the behaviors that need them. The
// converter applies Java's defaults (QPS, "default", 10 s, 500 ms) to
// fields a document leaves out.
type Rule struct {
	// Resource is the name passed to Enter.
	Resource string
	// LimitApp is the caller origin the rule applies to: "default" (or "")
	// for everyone, "other" for origins no other rule of this resource
	// names, or one origin's name (see core.WithOrigin).
	LimitApp string
	// Grade selects QPS or concurrency counting.
	Grade Grade
	// Count is the threshold: entries per second or concurrent entries.
	Count float64
	// Strategy selects whose statistics are checked.
	Strategy Strategy
	// RefResource is the related resource (Relate) or the entrance
	// context name (Chain).
	RefResource string
	// ControlBehavior is the shaping of QPS rules; thread rules always reject.
	ControlBehavior ControlBehavior
	// WarmUpPeriodSec is the warm-up time for WarmUp behaviors, seconds.
	WarmUpPeriodSec int
	// MaxQueueingTimeMs is how long a paced entry may wait, ms.
	MaxQueueingTimeMs int
	// ClusterMode marks a rule meant for Sentinel's cluster flow control.
	// bulwark has no token server: such a rule is checked locally when
	// ClusterConfig.FallbackToLocalWhenFail is set, and passes otherwise,
	// which is what Java does when no token server can be reached.
	ClusterMode bool
	// ClusterConfig is Java's ClusterFlowConfig, kept so documents
	// round-trip.
	ClusterConfig ClusterConfig
}

// ClusterConfig is Java's ClusterFlowConfig.
type ClusterConfig struct {
	FlowID                  int64
	ThresholdType           int
	FallbackToLocalWhenFail bool
	Strategy                int
	SampleCount             int
	WindowIntervalMs        int
	ResourceTimeout         int
	ResourceTimeoutStrategy int
	AcquireRefuseStrategy   int
	ClientOfflineTime       int
}

// Validate reports every problem of the rule, each as "field: problem",
// joined. It checks what Java's FlowRuleUtil.isValidRule checks, and also
// what Java lets through: unknown enum values, NaN or infinite counts,
// negative durations.
func (r Rule) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{field}, args...)...))
	}
	if strings.TrimSpace(r.Resource) == "" {
		bad("resource", "must not be empty")
	}
	switch {
	case math.IsNaN(r.Count) || math.IsInf(r.Count, 0):
		bad("count", "must be a finite number")
	case r.Count < 0:
		bad("count", "must be >= 0")
	}
	if r.Grade != GradeThread && r.Grade != GradeQPS {
		bad("grade", "must be 0 (thread) or 1 (QPS), got %d", int(r.Grade))
	}
	switch r.Strategy {
	case Direct:
	case Relate, Chain:
		if strings.TrimSpace(r.RefResource) == "" {
			bad("refResource", "must name a %s for strategy %s", map[Strategy]string{Relate: "resource", Chain: "context"}[r.Strategy], r.Strategy)
		}
	default:
		bad("strategy", "must be 0 (direct), 1 (relate) or 2 (chain), got %d", int(r.Strategy))
	}
	if r.WarmUpPeriodSec < 0 {
		bad("warmUpPeriodSec", "must be >= 0")
	}
	if r.MaxQueueingTimeMs < 0 {
		bad("maxQueueingTimeMs", "must be >= 0")
	}
	switch r.ControlBehavior {
	case Reject:
	case WarmUp, RateLimiter, WarmUpRateLimiter:
		if r.Grade == GradeQPS {
			if (r.ControlBehavior == WarmUp || r.ControlBehavior == WarmUpRateLimiter) && r.WarmUpPeriodSec <= 0 {
				bad("warmUpPeriodSec", "must be > 0 for %s", r.ControlBehavior)
			}
			if (r.ControlBehavior == RateLimiter || r.ControlBehavior == WarmUpRateLimiter) && r.MaxQueueingTimeMs <= 0 {
				bad("maxQueueingTimeMs", "must be > 0 for %s", r.ControlBehavior)
			}
		}
	default:
		bad("controlBehavior", "must be 0 (reject), 1 (warmUp), 2 (rateLimiter) or 3 (warmUpRateLimiter), got %d", int(r.ControlBehavior))
	}
	if r.ClusterMode {
		c := r.ClusterConfig
		if c.FlowID <= 0 {
			bad("clusterConfig.flowId", "must be > 0 in cluster mode")
		}
		if c.SampleCount < 0 || c.WindowIntervalMs < 0 || (c.SampleCount > 0 && c.WindowIntervalMs%c.SampleCount != 0) {
			bad("clusterConfig.windowIntervalMs", "must be a non-negative multiple of sampleCount")
		}
	}
	return errors.Join(errs...)
}

// AppliesLocally reports whether the rule is enforced by this process:
// always, except a cluster-mode rule without local fallback.
func (r Rule) AppliesLocally() bool {
	return !r.ClusterMode || r.ClusterConfig.FallbackToLocalWhenFail
}
