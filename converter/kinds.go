package converter

import (
	"math"
	"strconv"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// Field constructors: each reads one JSON type and stores it with set.

func strField[T any](name string, set func(*T, string)) field[T] {
	return field[T]{name, func(d *decoder, t *T) {
		if v, ok := d.readString(); ok {
			set(t, v)
		}
	}}
}

func floatField[T any](name string, set func(*T, float64)) field[T] {
	return field[T]{name, func(d *decoder, t *T) {
		if v, ok := d.readFloat(); ok {
			set(t, v)
		}
	}}
}

// intField reads a Java int (bits 32) or long (bits 64).
func intField[T any](name string, bits int, set func(*T, int64)) field[T] {
	return field[T]{name, func(d *decoder, t *T) {
		if v, ok := d.readInt(bits); ok {
			set(t, v)
		}
	}}
}

// positiveField reads a Java int (bits 32) or long (64) that Java refuses
// to be 0 or less: a zero field means Java's default, so a document's 0 is
// refused here, with Validate's message (why) for 0 and below.
func positiveField[T any](name string, bits int, why string, set func(*T, int64)) field[T] {
	return field[T]{name, func(d *decoder, t *T) {
		if v, ok := d.readInt(bits); ok {
			if v == 0 {
				d.problem(ErrInvalid, "%s", why)
				return
			}
			set(t, v)
		}
	}}
}

func boolField[T any](name string, set func(*T, bool)) field[T] {
	return field[T]{name, func(d *decoder, t *T) {
		if v, ok := d.readBool(); ok {
			set(t, v)
		}
	}}
}

func enumField[T any](name string, e *enum, set func(*T, int)) field[T] {
	return field[T]{name, func(d *decoder, t *T) {
		if v, ok := d.readEnum(e); ok {
			set(t, v)
		}
	}}
}

// Keys accepted and discarded.

func skipValue(d *decoder) { d.skip() }

func skipString(d *decoder) { d.readString() }

// regexField accepts Java 1.8's AbstractRule.regex when false: bulwark
// matches resource names exactly.
func regexField(d *decoder) {
	if v, ok := d.readBool(); ok && v {
		d.problem(ErrInvalid, "regular-expression resources are not supported; set it to false or leave it out")
	}
}

// entityFields are the fields of Sentinel dashboard's rule entities
// (and of Java's AbstractRule: id, regex), accepted everywhere.
func entityFields(extra ...ignored) []ignored {
	return append([]ignored{
		{"id", skipValue, ""},
		{"app", skipValue, ""},
		{"ip", skipValue, ""},
		{"port", skipValue, ""},
		{"gmtCreate", skipValue, ""},
		{"gmtModified", skipValue, ""},
		{"regex", regexField, ""},
	}, extra...)
}

// isEntityField tells the dashboard's entity fields, which a changed rule
// keeps when it is written over its document (see EncodeOver).
func isEntityField(key string) bool {
	switch key {
	case "id", "app", "ip", "port", "gmtCreate", "gmtModified":
		return true
	}
	return false
}

// Legacy fields: fields that released Sentinel versions wrote (FastJSON
// serializes every public getter) and that today's Java ignores. They are
// accepted and ignored with a warning. Found in Sentinel's history of
// the rule classes and dashboard entities (every release tag, 0.1.0 to
// 1.8.9); fields that never reached a release stay unknown.
var (
	// DegradeRule.isCut(), public in 0.1.0 to 1.4.2: the breaker's state.
	legacyCut = ignored{"cut", skipValue, "DegradeRule.cut, the breaker state that Sentinel 0.1 to 1.4 wrote; Java ignores it since 1.5"}
	// DegradeRule.getPassCount(), public in 0.1.0 to 1.6.3: a counter.
	legacyPassCount = ignored{"passCount", skipValue, "DegradeRule.passCount, the counter that Sentinel 0.1 to 1.6 wrote; Java ignores it since 1.7"}
	// ParamFlowRule.getBlockGrade() in 0.2.0, renamed getGrade() in 1.3.0.
	legacyBlockGrade = ignored{"blockGrade", skipValue, "ParamFlowRule.blockGrade of Sentinel 0.2, renamed grade in 1.3; Java ignores it: use grade"}
	// SystemRuleEntity.getAvgLoad(), the dashboard's name for
	// highestSystemLoad up to 1.6.2.
	legacyAvgLoad = ignored{"avgLoad", skipValue, "the dashboard's name for highestSystemLoad up to Sentinel 1.6.2; Java's SystemRule ignores it: use highestSystemLoad"}
)

// Flow: Java FlowRule.

var (
	// Go's zero Grade is Java's default, QPS; Java's numbers are 0 thread,
	// 1 QPS.
	flowGrade    = newEnum(flow.GradeThread, flow.GradeQPS).withJava(0, 1)
	flowStrategy = newEnum(flow.Direct, flow.Relate, flow.Chain)
	flowBehavior = newEnum(flow.Reject, flow.WarmUp, flow.RateLimiter, flow.WarmUpRateLimiter)
)

var flowClusterObject = newObject([]field[flow.ClusterConfig]{
	intField("flowId", 64, func(c *flow.ClusterConfig, v int64) { c.FlowID = v }),
	intField("thresholdType", 32, func(c *flow.ClusterConfig, v int64) { c.ThresholdType = int(v) }),
	boolField("fallbackToLocalWhenFail", func(c *flow.ClusterConfig, v bool) { c.FallbackToLocalWhenFail = v }),
	intField("strategy", 32, func(c *flow.ClusterConfig, v int64) { c.Strategy = int(v) }),
	intField("sampleCount", 32, func(c *flow.ClusterConfig, v int64) { c.SampleCount = int(v) }),
	intField("windowIntervalMs", 32, func(c *flow.ClusterConfig, v int64) { c.WindowIntervalMs = int(v) }),
	intField("resourceTimeout", 64, func(c *flow.ClusterConfig, v int64) { c.ResourceTimeout = int(v) }),
	intField("resourceTimeoutStrategy", 32, func(c *flow.ClusterConfig, v int64) { c.ResourceTimeoutStrategy = int(v) }),
	intField("acquireRefuseStrategy", 32, func(c *flow.ClusterConfig, v int64) { c.AcquireRefuseStrategy = int(v) }),
	intField("clientOfflineTime", 64, func(c *flow.ClusterConfig, v int64) { c.ClientOfflineTime = int(v) }),
})

// flowClusterDefaults are Java's ClusterFlowConfig defaults, used when a
// rule has a clusterConfig object.
func flowClusterDefaults() flow.ClusterConfig {
	return flow.ClusterConfig{FallbackToLocalWhenFail: true, SampleCount: 10, WindowIntervalMs: 1000,
		ResourceTimeout: 2000, ClientOfflineTime: 2000}
}

var flowObject = func() *object[flow.Rule] {
	o := newObject([]field[flow.Rule]{
		strField("resource", func(r *flow.Rule, v string) { r.Resource = v }),
		strField("limitApp", func(r *flow.Rule, v string) { r.LimitApp = v }),
		enumField("grade", flowGrade, func(r *flow.Rule, v int) { r.Grade = flow.Grade(v) }),
		floatField("count", func(r *flow.Rule, v float64) { r.Count = v }),
		enumField("strategy", flowStrategy, func(r *flow.Rule, v int) { r.Strategy = flow.Strategy(v) }),
		strField("refResource", func(r *flow.Rule, v string) { r.RefResource = v }),
		enumField("controlBehavior", flowBehavior, func(r *flow.Rule, v int) { r.ControlBehavior = flow.ControlBehavior(v) }),
		intField("warmUpPeriodSec", 32, func(r *flow.Rule, v int64) { r.WarmUpPeriodSec = int(v) }),
		intField("maxQueueingTimeMs", 32, func(r *flow.Rule, v int64) { r.MaxQueueingTimeMs = int(v) }),
		boolField("clusterMode", func(r *flow.Rule, v bool) { r.ClusterMode = v }),
		boolField("shadow", func(r *flow.Rule, v bool) { r.Shadow = v }),
		{"clusterConfig", func(d *decoder, r *flow.Rule) {
			// Decoded in place (r is in the result slice): no allocation.
			saved := r.ClusterConfig
			r.ClusterConfig = flowClusterDefaults()
			if ok, _ := decodeInto(d, flowClusterObject, &r.ClusterConfig); !ok {
				r.ClusterConfig = saved
			}
		}},
	})
	o.ignored = entityFields()
	return o
}()

// Circuit breaker: Java DegradeRule, plus rtSlowRequestAmount of the
// pre-1.8 average-RT strategy.

// anySlowCall is Java's slowRatioThreshold 0 (any slow call opens the
// breaker): a zero SlowRatioThreshold means Java's default, 1.0, so a
// document's 0 reads as the smallest ratio above 0, which behaves the same
// (a ratio of calls is 0 or at least 1/calls), and is written back as 0.
const anySlowCall = math.SmallestNonzeroFloat64

var cbGrade = newEnum(circuitbreaker.SlowRequestRatio, circuitbreaker.ErrorRatio, circuitbreaker.ErrorCount, circuitbreaker.AvgRT)

var cbObject = func() *object[circuitbreaker.Rule] {
	type R = circuitbreaker.Rule
	o := newObject([]field[R]{
		strField("resource", func(r *R, v string) { r.Resource = v }),
		strField("limitApp", func(r *R, v string) { r.LimitApp = v }),
		enumField("grade", cbGrade, func(r *R, v int) { r.Grade = circuitbreaker.Grade(v) }),
		floatField("count", func(r *R, v float64) { r.Count = v }),
		intField("timeWindow", 32, func(r *R, v int64) { r.TimeWindow = int(v) }),
		positiveField("minRequestAmount", 32, "must be > 0", func(r *R, v int64) { r.MinRequestAmount = int(v) }),
		floatField("slowRatioThreshold", func(r *R, v float64) {
			if v == 0 {
				v = anySlowCall // Java's 0; a zero field means Java's default, 1.0
			}
			r.SlowRatioThreshold = v
		}),
		positiveField("statIntervalMs", 32, "must be > 0 (ms)", func(r *R, v int64) { r.StatIntervalMs = int(v) }),
		intField("rtSlowRequestAmount", 32, func(r *R, v int64) { r.RTSlowRequestAmount = int(v) }),
		boolField("shadow", func(r *R, v bool) { r.Shadow = v }),
	})
	o.ignored = entityFields(legacyCut, legacyPassCount)
	return o
}()

// System: Java SystemRule. Its inherited resource and limitApp mean
// nothing to Java and are accepted and ignored.

// System thresholds: a document's 0 is refused. Java takes it as a
// threshold that blocks all inbound traffic, and a zero field means unset
// (Java's default, -1).

const zeroThreshold = "must not be 0, which would block all inbound traffic; use -1 to leave it unset"

func systemFloat(name string, set func(*system.Rule, float64)) field[system.Rule] {
	return field[system.Rule]{name, func(d *decoder, r *system.Rule) {
		if v, ok := d.readFloat(); ok {
			if v == 0 {
				d.problem(ErrInvalid, zeroThreshold)
				return
			}
			set(r, v)
		}
	}}
}

func systemInt(name string, set func(*system.Rule, int64)) field[system.Rule] {
	return field[system.Rule]{name, func(d *decoder, r *system.Rule) {
		if v, ok := d.readInt(64); ok {
			if v == 0 {
				d.problem(ErrInvalid, zeroThreshold)
				return
			}
			set(r, v)
		}
	}}
}

var systemObject = func() *object[system.Rule] {
	type R = system.Rule
	o := newObject([]field[R]{
		systemFloat("highestSystemLoad", func(r *R, v float64) { r.HighestSystemLoad = v }),
		systemFloat("highestCpuUsage", func(r *R, v float64) { r.HighestCPUUsage = v }),
		systemFloat("qps", func(r *R, v float64) { r.QPS = v }),
		systemInt("avgRt", func(r *R, v int64) { r.AvgRT = v }),
		systemInt("maxThread", func(r *R, v int64) { r.MaxThread = v }),
		boolField("shadow", func(r *R, v bool) { r.Shadow = v }),
	})
	o.ignored = entityFields(ignored{"resource", skipString, ""}, ignored{"limitApp", skipString, ""}, legacyAvgLoad)
	return o
}()

// Authority: Java AuthorityRule; the dashboard wraps it in an entity.

var authorityStrategy = newEnum(authority.White, authority.Black)

var authorityObject = func() *object[authority.Rule] {
	type R = authority.Rule
	o := newObject([]field[R]{
		strField("resource", func(r *R, v string) { r.Resource = v }),
		strField("limitApp", func(r *R, v string) { r.LimitApp = v }),
		enumField("strategy", authorityStrategy, func(r *R, v int) { r.Strategy = authority.Strategy(v) }),
		boolField("shadow", func(r *R, v bool) { r.Shadow = v }),
	})
	o.ignored = entityFields()
	o.wrapped = true
	return o
}()

// Hotspot: Java ParamFlowRule; the dashboard wraps it in an entity.

var (
	hotspotGrade    = newEnum(flow.GradeThread, flow.GradeQPS).withJava(0, 1)
	hotspotBehavior = newEnum(flow.Reject, flow.RateLimiter)
)

var hotspotClusterObject = newObject([]field[hotspot.ClusterConfig]{
	intField("flowId", 64, func(c *hotspot.ClusterConfig, v int64) { c.FlowID = v }),
	intField("thresholdType", 32, func(c *hotspot.ClusterConfig, v int64) { c.ThresholdType = int(v) }),
	boolField("fallbackToLocalWhenFail", func(c *hotspot.ClusterConfig, v bool) { c.FallbackToLocalWhenFail = v }),
	intField("sampleCount", 32, func(c *hotspot.ClusterConfig, v int64) { c.SampleCount = int(v) }),
	intField("windowIntervalMs", 32, func(c *hotspot.ClusterConfig, v int64) { c.WindowIntervalMs = int(v) }),
})

// hotspotClusterDefaults are Java's ParamFlowClusterConfig defaults
// (fallbackToLocalWhenFail is false there, unlike ClusterFlowConfig).
func hotspotClusterDefaults() hotspot.ClusterConfig {
	return hotspot.ClusterConfig{SampleCount: 10, WindowIntervalMs: 1000}
}

// classTypes are the class names of ParamFlowItem, shared instead of
// allocated for every item.
var classTypes = []string{"int", "long", "double", "float", "byte", "short", "boolean", "char", "String",
	"java.lang.Integer", "java.lang.Long", "java.lang.Double", "java.lang.Float", "java.lang.Byte",
	"java.lang.Short", "java.lang.Boolean", "java.lang.Character", "java.lang.String"}

var hotspotItemObject = newObject([]field[hotspot.ParamFlowItem]{
	// Java's object is a String, and FastJSON turns a number or a
	// boolean into its text; so does this field.
	{"object", func(d *decoder, it *hotspot.ParamFlowItem) {
		switch c := d.peek(); {
		case c == 't' || c == 'f':
			if v, ok := d.readBool(); ok {
				it.Object = strconv.FormatBool(v)
			}
		case isNumberStart(c):
			if raw, _, ok := d.number(); ok {
				it.Object = string(raw)
			}
		default:
			if v, ok := d.readString(); ok {
				it.Object = v
			}
		}
	}},
	intField("count", 32, func(it *hotspot.ParamFlowItem, v int64) { it.Count = int(v) }),
	{"classType", func(d *decoder, it *hotspot.ParamFlowItem) {
		if v, ok := d.readStringFrom(classTypes); ok {
			it.ClassType = v
		}
	}},
}, "object", "count")

var hotspotObject = func() *object[hotspot.Rule] {
	type R = hotspot.Rule
	o := newObject([]field[R]{
		strField("resource", func(r *R, v string) { r.Resource = v }),
		strField("limitApp", func(r *R, v string) { r.LimitApp = v }),
		enumField("grade", hotspotGrade, func(r *R, v int) { r.Grade = flow.Grade(v) }),
		intField("paramIdx", 32, func(r *R, v int64) { r.ParamIdx = int(v) }),
		floatField("count", func(r *R, v float64) { r.Count = v }),
		enumField("controlBehavior", hotspotBehavior, func(r *R, v int) { r.ControlBehavior = flow.ControlBehavior(v) }),
		intField("maxQueueingTimeMs", 32, func(r *R, v int64) { r.MaxQueueingTimeMs = int(v) }),
		intField("burstCount", 32, func(r *R, v int64) { r.BurstCount = int(v) }),
		positiveField("durationInSec", 64, "must be > 0 (seconds)", func(r *R, v int64) { r.DurationInSec = v }),
		{"paramFlowItemList", func(d *decoder, r *R) {
			r.ParamFlowItemList = readList(d, hotspotItemObject, func() hotspot.ParamFlowItem { return hotspot.ParamFlowItem{} }, nil, nil)
		}},
		boolField("clusterMode", func(r *R, v bool) { r.ClusterMode = v }),
		boolField("shadow", func(r *R, v bool) { r.Shadow = v }),
		{"clusterConfig", func(d *decoder, r *R) {
			saved := r.ClusterConfig
			r.ClusterConfig = hotspotClusterDefaults()
			if ok, _ := decodeInto(d, hotspotClusterObject, &r.ClusterConfig); !ok {
				r.ClusterConfig = saved
			}
		}},
	}, "paramIdx")
	// parsedHotItems: FastJSON writes ParamFlowRule.getParsedHotItems(),
	// the items parsed by Java; they are derived from paramFlowItemList.
	o.ignored = entityFields(ignored{"parsedHotItems", skipValue, ""}, legacyBlockGrade)
	o.wrapped = true
	return o
}()
