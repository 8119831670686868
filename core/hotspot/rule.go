package hotspot

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Grade is what a rule counts per parameter value: Java's FLOW_GRADE_*.
type Grade int

// Grades. The zero value is GradeThread, as Java's constant 0; Java's
// ParamFlowRule defaults to GradeQPS, and so does the converter when a
// document leaves "grade" out.
const (
	GradeThread Grade = 0 // concurrent entries per value
	GradeQPS    Grade = 1 // admitted entries per value per DurationInSec
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

// ControlBehavior is what happens to a value's traffic above its threshold
// (QPS grade only): Java's CONTROL_BEHAVIOR_* numbers. Java's param flow
// has no warm-up, so 1 and 3 are not valid here.
type ControlBehavior int

// Control behaviors.
const (
	// Reject blocks at once (a token bucket of Count + BurstCount tokens
	// per DurationInSec).
	Reject ControlBehavior = 0
	// RateLimiter paces each value's entries evenly, queueing each for up
	// to MaxQueueingTimeMs.
	RateLimiter ControlBehavior = 2
)

func (c ControlBehavior) String() string {
	switch c {
	case Reject:
		return "reject"
	case RateLimiter:
		return "rateLimiter"
	}
	return fmt.Sprintf("ControlBehavior(%d)", int(c))
}

// Origins with a meaning of their own in LimitApp.
const (
	LimitAppDefault = "default" // every caller; "" means the same
)

// Rule is a hot-parameter rule, Java Sentinel's ParamFlowRule field for
// field: it limits entries per value of one argument (see core.WithArgs).
//
// The zero value of every field is Java's zero value, not Java's default:
// Grade 0 is GradeThread and DurationInSec 0 is invalid. The converter
// applies Java's defaults (QPS, durationInSec 1, limitApp "default") to
// fields a document leaves out.
type Rule struct {
	// Resource is the name passed to Enter.
	Resource string
	// LimitApp is the caller origin the rule applies to; "default" (or "")
	// means every caller.
	LimitApp string
	// Grade selects QPS or concurrency counting.
	Grade Grade
	// ParamIdx is the index of the argument in core.WithArgs; a negative
	// index counts from the end (-1 is the last argument).
	ParamIdx int
	// Count is the threshold for each value without an item of its own.
	Count float64
	// ControlBehavior is the shaping of QPS rules.
	ControlBehavior ControlBehavior
	// MaxQueueingTimeMs is how long a paced entry may wait (RateLimiter).
	MaxQueueingTimeMs int
	// BurstCount is the extra tokens a value may use in a burst (Reject).
	BurstCount int
	// DurationInSec is the statistic window of QPS rules, seconds.
	DurationInSec int64
	// ParamFlowItemList holds thresholds of their own for given values.
	ParamFlowItemList []ParamFlowItem
	// ClusterMode marks a rule meant for Sentinel's cluster flow control,
	// kept so documents round-trip.
	ClusterMode bool
	// ClusterConfig is Java's ParamFlowClusterConfig.
	ClusterConfig ClusterConfig
}

// ClusterConfig is Java's ParamFlowClusterConfig.
type ClusterConfig struct {
	FlowID                  int64
	ThresholdType           int
	FallbackToLocalWhenFail bool
	SampleCount             int
	WindowIntervalMs        int
}

// ParamFlowItem is a threshold for one parameter value: Java's
// ParamFlowItem. Object is the value written as a string; ClassType (a
// Java type name) says how to read it.
type ParamFlowItem struct {
	Object    string
	Count     int
	ClassType string
}

// Parse returns the item's value as a Go value according to ClassType:
//
//	int, long, short, byte (and java.lang.Integer, Long, Short, Byte)  int64, within the Java type's range
//	double, float (and java.lang.Double, Float)                       float64
//	boolean (and java.lang.Boolean)                                    bool, from "true" or "false" in any case
//	char (and java.lang.Character)                                     rune, Object must be one character
//	String, java.lang.String, or empty                                 string, Object as is
//
// Java reads an unknown class type as a string and takes the first
// character of a longer char; Parse rejects both.
func (it ParamFlowItem) Parse() (any, error) {
	s := it.Object
	integer := func(bits int) (any, error) {
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a %d-bit integer (%s)", s, bits, it.ClassType)
		}
		return v, nil
	}
	switch it.ClassType {
	case "", "String", "java.lang.String":
		return s, nil
	case "int", "java.lang.Integer":
		return integer(32)
	case "long", "java.lang.Long":
		return integer(64)
	case "short", "java.lang.Short":
		return integer(16)
	case "byte", "java.lang.Byte":
		return integer(8)
	case "double", "java.lang.Double", "float", "java.lang.Float":
		bits := 64
		if it.ClassType == "float" || it.ClassType == "java.lang.Float" {
			bits = 32
		}
		v, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number (%s)", s, it.ClassType)
		}
		return v, nil
	case "boolean", "java.lang.Boolean":
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false (%s)", s, it.ClassType)
	case "char", "java.lang.Character":
		if r, n := utf8.DecodeRuneInString(s); n == len(s) && n > 0 && r != utf8.RuneError {
			return r, nil
		}
		return nil, fmt.Errorf("%q is not one character (%s)", s, it.ClassType)
	}
	return nil, fmt.Errorf("unknown class type %q: use int, long, double, float, byte, short, boolean, char, String or a java.lang name", it.ClassType)
}

// Validate reports every problem of the rule, each as "field: problem",
// joined. It checks what Java's ParamFlowRuleUtil.isValidRule checks and
// also what Java lets through: unknown grades and behaviors, NaN or
// infinite counts, a non-positive DurationInSec, items whose object does
// not parse as their class type or whose count is negative.
func (r Rule) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{field}, args...)...))
	}
	if strings.TrimSpace(r.Resource) == "" {
		bad("resource", "must not be empty")
	}
	if r.Grade != GradeThread && r.Grade != GradeQPS {
		bad("grade", "must be 0 (thread) or 1 (QPS), got %d", int(r.Grade))
	}
	switch {
	case math.IsNaN(r.Count) || math.IsInf(r.Count, 0):
		bad("count", "must be a finite number")
	case r.Count < 0:
		bad("count", "must be >= 0")
	}
	if r.ControlBehavior != Reject && r.ControlBehavior != RateLimiter {
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
		if _, err := it.Parse(); err != nil {
			bad(fmt.Sprintf("paramFlowItemList[%d].object", i), "%v", err)
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
