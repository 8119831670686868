package hotspot

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/rule"
	"github.com/bulwark-go/bulwark/internal/paramvalue"
)

// Java's defaults of the fields whose zero value stands for them.
const (
	defaultDurationInSec    = 1
	defaultSampleCount      = 10
	defaultWindowIntervalMs = 1000
)

// Rule is a hot-parameter rule, Java Sentinel's ParamFlowRule field for
// field: it limits entries per value of one argument (see core.WithArgs).
//
// A field left at its zero value means Java's default, so a rule written in
// Go means what the same rule means in a document that leaves the field
// out: Rule{Resource: "r", Count: 5} admits 5 entries per second for each
// value of the first argument. [Rule.WithDefaults] spells the defaults
// out; the engine applies it to the rules it loads (its Rules returns them
// so), and package converter to the rules it decodes and encodes, so
// documents always carry Java's numbers.
type Rule struct {
	// Resource is the name passed to Enter. Required.
	Resource string
	// LimitApp is the caller origin the rule applies to. Zero value:
	// "default", every caller.
	LimitApp string
	// Grade selects QPS or concurrency counting: flow's grades, as Java's
	// param flow rules use its FLOW_GRADE_* constants. Zero value:
	// flow.GradeQPS.
	Grade flow.Grade
	// ParamIdx is the index of the argument in core.WithArgs; a negative
	// index counts from the end (-1 is the last argument). Zero value: the
	// first argument. (Java has no default: documents must set paramIdx.)
	ParamIdx int
	// Count is the threshold for each value without an item of its own.
	// Zero value: 0, which admits nothing (Java's default too).
	Count float64
	// ControlBehavior is the shaping of QPS rules: flow.Reject or
	// flow.RateLimiter (Java's param flow has no warm-up, so Validate
	// refuses flow.WarmUp and flow.WarmUpRateLimiter). Zero value:
	// flow.Reject.
	ControlBehavior flow.ControlBehavior
	// MaxQueueingTimeMs is how long a paced entry may wait (flow.RateLimiter).
	// Zero value: 0, no wait (Java's default too).
	MaxQueueingTimeMs int
	// BurstCount is the extra tokens a value may use in a burst (flow.Reject).
	// Zero value: none (Java's default too).
	BurstCount int
	// DurationInSec is the statistic window of QPS rules, in seconds. Zero
	// value: Java's default, 1.
	DurationInSec int64
	// ParamFlowItemList holds thresholds of their own for given values.
	// Zero value: none.
	ParamFlowItemList []ParamFlowItem
	// ClusterMode marks a rule meant for Sentinel's cluster flow control,
	// kept so documents round-trip. Zero value: false, a local rule.
	ClusterMode bool
	// ClusterConfig is Java's ParamFlowClusterConfig. Zero value: no config
	// (Java's null).
	ClusterConfig ClusterConfig
	// Shadow makes the rule watch without acting: it is checked and each
	// entry it would block is counted (core.Engine.Stats, OnShadowBlock),
	// but it never blocks nor makes an entry wait. Java ignores the field. Zero value: false, an
	// enforcing rule.
	Shadow bool
}

// ClusterConfig is Java's ParamFlowClusterConfig. In a ClusterConfig that
// is not the zero value, a zero SampleCount or WindowIntervalMs means
// Java's default; the other fields' zero values are Java's defaults.
type ClusterConfig struct {
	// FlowID is the rule's id on the token server; > 0 in cluster mode.
	FlowID int64
	// ThresholdType is Java's threshold type: 0 (average local, the
	// default) or 1 (global).
	ThresholdType int
	// FallbackToLocalWhenFail: the rule is checked locally when no token
	// can be had. Zero value: false, Java's default.
	FallbackToLocalWhenFail bool
	// SampleCount is the token server's number of buckets. Zero value:
	// Java's default, 10.
	SampleCount int
	// WindowIntervalMs is the token server's window, in ms. Zero value:
	// Java's default, 1000.
	WindowIntervalMs int
}

// WithDefaults returns r with Java's default in place of every field whose
// zero value stands for it: LimitApp "default", DurationInSec 1, and in a
// ClusterConfig that is not the zero value SampleCount 10 and
// WindowIntervalMs 1000. ParamFlowItemList is shared, not copied. It is
// idempotent.
func (r Rule) WithDefaults() Rule {
	if r.LimitApp == "" {
		r.LimitApp = rule.LimitAppDefault
	}
	if r.DurationInSec == 0 {
		r.DurationInSec = defaultDurationInSec
	}
	if c := &r.ClusterConfig; *c != (ClusterConfig{}) {
		if c.SampleCount == 0 {
			c.SampleCount = defaultSampleCount
		}
		if c.WindowIntervalMs == 0 {
			c.WindowIntervalMs = defaultWindowIntervalMs
		}
	}
	return r
}

// ParamFlowItem is a threshold for one parameter value: Java's
// ParamFlowItem. Object is the value written as a string; ClassType (a
// Java type name) says how to read it.
type ParamFlowItem struct {
	// Object is the value, as text. Documents must set it.
	Object string
	// Count is the value's threshold. Documents must set it; 0 admits
	// nothing.
	Count int
	// ClassType is the Java type of Object, which says how it is read and
	// which Go values it matches (see the package documentation, Values):
	//
	//	int, long, short, byte (and java.lang.Integer, Long, Short, Byte)  an integer within the Java type's range
	//	double, float (and java.lang.Double, Float)                       a number
	//	boolean (and java.lang.Boolean)                                    "true" or "false" in any case
	//	char (and java.lang.Character)                                     one character
	//	String, java.lang.String, or empty                                 Object as is
	//
	// Java reads an unknown class type as a string and takes the first
	// character of a longer char; Validate rejects both. Zero value:
	// String.
	ClassType string
}

// Validate reports every problem of the rule as it runs, with its defaults
// (see [Rule.WithDefaults]): one *rule.FieldError per problem, joined. It
// checks what Java's ParamFlowRuleUtil.isValidRule checks and also what
// Java lets through: unknown grades and behaviors, NaN or infinite counts,
// a negative DurationInSec, items whose object does not parse as their
// class type or whose count is negative.
func (r Rule) Validate() error {
	r = r.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &rule.FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if strings.TrimSpace(r.Resource) == "" {
		bad("resource", "must not be empty")
	}
	if r.Grade != flow.GradeQPS && r.Grade != flow.GradeThread {
		bad("grade", "must be GradeQPS or GradeThread, got %s", r.Grade)
	}
	switch {
	case math.IsNaN(r.Count) || math.IsInf(r.Count, 0):
		bad("count", "must be a finite number")
	case r.Count < 0:
		bad("count", "must be >= 0")
	}
	if r.ControlBehavior != flow.Reject && r.ControlBehavior != flow.RateLimiter {
		bad("controlBehavior", "must be 0 (reject) or 2 (rateLimiter), got %d", int(r.ControlBehavior))
	}
	if r.MaxQueueingTimeMs < 0 {
		bad("maxQueueingTimeMs", "must be >= 0")
	}
	if r.BurstCount < 0 {
		bad("burstCount", "must be >= 0")
	}
	if r.DurationInSec <= 0 {
		bad("durationInSec", "must be > 0 (seconds)")
	}
	for i, it := range r.ParamFlowItemList {
		if _, err := paramvalue.Parse(it.Object, it.ClassType); err != nil {
			bad(fmt.Sprintf("paramFlowItemList[%d].object", i), "%w", err)
		}
		if it.Count < 0 {
			bad(fmt.Sprintf("paramFlowItemList[%d].count", i), "must be >= 0")
		}
	}
	if r.ClusterMode && r.ClusterConfig.FlowID <= 0 {
		bad("clusterConfig.flowId", "must be > 0 in cluster mode")
	}
	return errors.Join(errs...)
}
