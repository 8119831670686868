package flow

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bulwark-go/bulwark/core/rule"
)

// Grade is what a rule counts: Java's FLOW_GRADE_* constants.
type Grade int

// Grades. The zero value is GradeQPS, Java's default, so that a rule that
// leaves Grade out limits QPS whether it is written in Go or in a document.
// The Go numbers are therefore not Java's: documents write Java's numbers
// (0 thread, 1 QPS) or the names, and package converter maps them.
const (
	GradeQPS    Grade = 0 // admitted entries per second; Java's FLOW_GRADE_QPS, 1
	GradeThread Grade = 1 // concurrent entries; Java's FLOW_GRADE_THREAD, 0
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

// Strategies. The zero value is Direct, Java's constant 0 and default.
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

// Control behaviors. The zero value is Reject, Java's constant 0 and
// default.
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

// Java's defaults of the fields whose zero value stands for them.
const (
	defaultWarmUpPeriodSec   = 10
	defaultMaxQueueingTimeMs = 500
	defaultSampleCount       = 10
	defaultWindowIntervalMs  = 1000
	defaultResourceTimeout   = 2000
	defaultClientOfflineTime = 2000
)

// Rule is a flow rule, Java Sentinel's FlowRule field for field.
//
// A field left at its zero value means Java's default, so a rule written in
// Go means what the same rule means in a document that leaves the field
// out: Rule{Resource: "r", Count: 2} admits 2 entries per second from
// every caller, rejecting the rest. [Rule.WithDefaults] spells the
// defaults out; the engine applies it to the rules it loads (its Rules
// returns them so), and package converter to the rules it decodes and
// encodes, so documents always carry Java's numbers.
type Rule struct {
	// Resource is the name passed to Enter. Required.
	Resource string
	// LimitApp is the caller origin the rule applies to: "default" for
	// everyone, "other" for origins no other rule of this resource names,
	// or one origin's name (see core.WithOrigin). Zero value: "default".
	LimitApp string
	// Grade selects QPS or concurrency counting. Zero value: GradeQPS.
	Grade Grade
	// Count is the threshold: entries per second or concurrent entries.
	// Zero value: 0, which admits nothing (Java's default too).
	Count float64
	// Strategy selects whose statistics are checked. Zero value: Direct.
	Strategy Strategy
	// RefResource is the related resource (Relate) or the entrance
	// context name (Chain). Zero value: none, which only Direct allows.
	RefResource string
	// ControlBehavior is the shaping of QPS rules; thread rules always
	// reject. Zero value: Reject.
	ControlBehavior ControlBehavior
	// WarmUpPeriodSec is the warm-up time of the WarmUp behaviors, in
	// seconds. Zero value: Java's default, 10.
	WarmUpPeriodSec int
	// MaxQueueingTimeMs is how long a paced entry may wait (the
	// RateLimiter behaviors), in ms. Zero value: Java's default, 500.
	MaxQueueingTimeMs int
	// ClusterMode marks a cluster rule: instances share its budget through
	// the engine's token service (core.WithTokenService, package cluster).
	// When the service cannot answer, or the engine has none, the rule is
	// checked locally when ClusterConfig.FallbackToLocalWhenFail is set,
	// and passes otherwise, as in Java. Zero value: false, a local rule.
	ClusterMode bool
	// ClusterConfig is Java's ClusterFlowConfig: which budget a cluster
	// rule shares and how (package cluster says which fields a token
	// service uses). Zero value: no config (Java's null).
	ClusterConfig ClusterConfig
	// Shadow makes the rule watch without acting: it is checked and each
	// entry it would block is counted (core.Engine.Stats, OnShadowBlock),
	// but it never blocks nor makes an entry wait. Java ignores the field. Zero value: false, an
	// enforcing rule.
	Shadow bool
}

// ClusterConfig is Java's ClusterFlowConfig. In a ClusterConfig that is
// not the zero value, a zero SampleCount, WindowIntervalMs,
// ResourceTimeout or ClientOfflineTime means Java's default; the other
// fields' zero values are Java's defaults, except FallbackToLocalWhenFail:
// Java defaults it to true (and so does package converter when a
// document's clusterConfig leaves it out), Go's zero value is false.
type ClusterConfig struct {
	// FlowID names the budget: cluster rules with the same FlowID share it
	// across instances, whatever their resources; > 0 in cluster mode.
	FlowID int64
	// ThresholdType is Java's threshold type: 0 (average local, the
	// default) or 1 (global).
	ThresholdType int
	// FallbackToLocalWhenFail: the rule is checked locally, with its
	// count, when the token service cannot answer; otherwise entries pass
	// then. Zero value: false; Java's default: true.
	FallbackToLocalWhenFail bool
	// Strategy is Java's cluster strategy, 0 (normal) by default.
	Strategy int
	// SampleCount is the token server's number of buckets. Zero value:
	// Java's default, 10.
	SampleCount int
	// WindowIntervalMs is the token server's window, in ms, a multiple of
	// SampleCount. Zero value: Java's default, 1000.
	WindowIntervalMs int
	// ResourceTimeout is Java's resource timeout, in ms. Zero value: Java's
	// default, 2000.
	ResourceTimeout int
	// ResourceTimeoutStrategy is Java's, 0 by default.
	ResourceTimeoutStrategy int
	// AcquireRefuseStrategy is Java's, 0 by default.
	AcquireRefuseStrategy int
	// ClientOfflineTime is Java's client offline time, in ms. Zero value:
	// Java's default, 2000.
	ClientOfflineTime int
}

// WithDefaults returns r with Java's default in place of every field whose
// zero value stands for it: LimitApp "default", WarmUpPeriodSec 10,
// MaxQueueingTimeMs 500, and in a ClusterConfig that is not the zero value
// SampleCount 10, WindowIntervalMs 1000, ResourceTimeout 2000 and
// ClientOfflineTime 2000. It is idempotent.
func (r Rule) WithDefaults() Rule {
	if r.LimitApp == "" {
		r.LimitApp = rule.LimitAppDefault
	}
	setDefault(&r.WarmUpPeriodSec, defaultWarmUpPeriodSec)
	setDefault(&r.MaxQueueingTimeMs, defaultMaxQueueingTimeMs)
	if c := &r.ClusterConfig; *c != (ClusterConfig{}) {
		setDefault(&c.SampleCount, defaultSampleCount)
		setDefault(&c.WindowIntervalMs, defaultWindowIntervalMs)
		setDefault(&c.ResourceTimeout, defaultResourceTimeout)
		setDefault(&c.ClientOfflineTime, defaultClientOfflineTime)
	}
	return r
}

func setDefault(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// Validate reports every problem of the rule as it runs, with its defaults
// (see [Rule.WithDefaults]): one *rule.FieldError per problem, joined. It
// checks what Java's FlowRuleUtil.isValidRule checks, and also what Java
// lets through: unknown enum values, NaN or infinite counts, negative
// durations.
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
	}
	if r.Grade != GradeQPS && r.Grade != GradeThread {
		bad("grade", "must be GradeQPS or GradeThread, got %s", r.Grade)
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
	case Reject, WarmUp, RateLimiter, WarmUpRateLimiter:
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
