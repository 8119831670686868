package converter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// encoder writes a document. Rules are checked first, by their Validate
// and against Java's int range, so that an encoded document always
// decodes: a rule that does not is reported as a Problem (ErrInvalid).
type encoder struct {
	buf      []byte
	problems []Problem
	tmp      bytes.Buffer
	enc      *json.Encoder
}

func (e *encoder) marshal(v any) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.tmp)
		e.enc.SetEscapeHTML(false)
	}
	e.tmp.Reset()
	if err := e.enc.Encode(v); err != nil {
		// Only NaN or infinities can fail, and Validate rejects them.
		e.problems = append(e.problems, Problem{Rule: -1, Message: err.Error(), Err: ErrInvalid})
		return
	}
	e.buf = append(e.buf, bytes.TrimSuffix(e.tmp.Bytes(), []byte("\n"))...)
}

// encodeList writes rules as a JSON array, one rule per line; with a key,
// as a member of the rule-set object.
func encodeList[T any](e *encoder, key string, k *kind[T], rules []T) {
	indent := "  "
	if key != "" {
		e.buf = append(e.buf, `  "`+key+`": `...)
		indent = "    "
	}
	encodeArray(e, key, k, rules, indent)
}

// encodeArray writes rules as a JSON array, one rule per line indented by
// indent, the closing bracket by two spaces less. Paths in problems
// start with prefix.
func encodeArray[T any](e *encoder, prefix string, k *kind[T], rules []T, indent string) {
	if len(rules) == 0 {
		e.buf = append(e.buf, "[]"...)
		return
	}
	e.buf = append(e.buf, '[')
	for i := range rules {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, '\n')
		e.buf = append(e.buf, indent...)
		encodeRule(e, prefix, k, i, &rules[i])
	}
	e.buf = append(e.buf, '\n')
	e.buf = append(e.buf, indent[2:]...)
	e.buf = append(e.buf, ']')
}

// encodeRule writes rule i of a list as a JSON object on one line, with
// its defaults applied, or records its problems.
func encodeRule[T any](e *encoder, prefix string, k *kind[T], i int, given *T) {
	base := prefix + "[" + strconv.Itoa(i) + "]"
	n := len(e.problems)
	res := k.resource(given)
	r := new(k.normalize(*given)) // Java's numbers for the defaults
	if err := k.validate(*r); err != nil {
		d := decoder{rule: i}
		d.path = []seg{{key: base}}
		d.validation(err, nil)
		for _, p := range d.problems {
			p.Line, p.Column, p.Resource = 0, 0, res
			e.problems = append(e.problems, p)
		}
	}
	v, bad := k.encode(*r)
	for _, field := range bad {
		e.problems = append(e.problems, Problem{Path: base + "." + field, Rule: i, Resource: res, Message: "out of the range of a Java int", Err: ErrInvalid})
	}
	if len(e.problems) > n {
		return
	}
	e.marshal(v)
}

func (e *encoder) result() ([]byte, error) {
	if len(e.problems) > 0 {
		return nil, &DecodeError{Problems: e.problems}
	}
	if len(e.buf) > 0 && e.buf[len(e.buf)-1] != '\n' {
		e.buf = append(e.buf, '\n')
	}
	return e.buf, nil
}

// javaInt collects the names of fields whose value does not fit a Java int.
type javaInt []string

func (j *javaInt) check(field string, v int) int {
	if v < math.MinInt32 || v > math.MaxInt32 {
		*j = append(*j, field)
	}
	return v
}

// The Java shapes: field names and order as Java's classes, enums as
// numbers, every field written.

type flowClusterJSON struct {
	FlowID                  int64 `json:"flowId"`
	ThresholdType           int   `json:"thresholdType"`
	FallbackToLocalWhenFail bool  `json:"fallbackToLocalWhenFail"`
	Strategy                int   `json:"strategy"`
	SampleCount             int   `json:"sampleCount"`
	WindowIntervalMs        int   `json:"windowIntervalMs"`
	ResourceTimeout         int   `json:"resourceTimeout"`
	ResourceTimeoutStrategy int   `json:"resourceTimeoutStrategy"`
	AcquireRefuseStrategy   int   `json:"acquireRefuseStrategy"`
	ClientOfflineTime       int   `json:"clientOfflineTime"`
}

type flowJSON struct {
	Resource          string           `json:"resource"`
	LimitApp          string           `json:"limitApp"`
	Grade             int              `json:"grade"`
	Count             float64          `json:"count"`
	Strategy          int              `json:"strategy"`
	RefResource       string           `json:"refResource"`
	ControlBehavior   int              `json:"controlBehavior"`
	WarmUpPeriodSec   int              `json:"warmUpPeriodSec"`
	MaxQueueingTimeMs int              `json:"maxQueueingTimeMs"`
	ClusterMode       bool             `json:"clusterMode"`
	ClusterConfig     *flowClusterJSON `json:"clusterConfig"`    // null when zero
	Shadow            bool             `json:"shadow,omitempty"` // omitted when false: documents stay Java-identical
}

func encodeFlow(r flow.Rule) (any, []string) {
	var j javaInt
	c := r.ClusterConfig
	v := flowJSON{
		Resource: r.Resource, LimitApp: r.LimitApp, Grade: flowGrade.javaOf(int(r.Grade)), Count: r.Count,
		Strategy: int(r.Strategy), RefResource: r.RefResource, ControlBehavior: int(r.ControlBehavior),
		WarmUpPeriodSec:   j.check("warmUpPeriodSec", r.WarmUpPeriodSec),
		MaxQueueingTimeMs: j.check("maxQueueingTimeMs", r.MaxQueueingTimeMs),
		ClusterMode:       r.ClusterMode,
		Shadow:            r.Shadow,
		ClusterConfig: &flowClusterJSON{
			FlowID:                  c.FlowID,
			ThresholdType:           j.check("clusterConfig.thresholdType", c.ThresholdType),
			FallbackToLocalWhenFail: c.FallbackToLocalWhenFail,
			Strategy:                j.check("clusterConfig.strategy", c.Strategy),
			SampleCount:             j.check("clusterConfig.sampleCount", c.SampleCount),
			WindowIntervalMs:        j.check("clusterConfig.windowIntervalMs", c.WindowIntervalMs),
			ResourceTimeout:         c.ResourceTimeout,
			ResourceTimeoutStrategy: j.check("clusterConfig.resourceTimeoutStrategy", c.ResourceTimeoutStrategy),
			AcquireRefuseStrategy:   j.check("clusterConfig.acquireRefuseStrategy", c.AcquireRefuseStrategy),
			ClientOfflineTime:       c.ClientOfflineTime,
		},
	}
	if c == (flow.ClusterConfig{}) {
		v.ClusterConfig = nil
	}
	return v, j
}

type degradeJSON struct {
	Resource            string  `json:"resource"`
	LimitApp            string  `json:"limitApp"`
	Grade               int     `json:"grade"`
	Count               float64 `json:"count"`
	TimeWindow          int     `json:"timeWindow"`
	MinRequestAmount    int     `json:"minRequestAmount"`
	SlowRatioThreshold  float64 `json:"slowRatioThreshold"`
	StatIntervalMs      int     `json:"statIntervalMs"`
	RTSlowRequestAmount int     `json:"rtSlowRequestAmount"`
	Shadow              bool    `json:"shadow,omitempty"` // omitted when false: documents stay Java-identical
}

func encodeCircuitBreaker(r circuitbreaker.Rule) (any, []string) {
	var j javaInt
	slow := r.SlowRatioThreshold
	if slow == anySlowCall {
		slow = 0
	}
	return degradeJSON{
		Resource: r.Resource, LimitApp: r.LimitApp, Grade: int(r.Grade), Count: r.Count,
		TimeWindow:          j.check("timeWindow", r.TimeWindow),
		MinRequestAmount:    j.check("minRequestAmount", r.MinRequestAmount),
		SlowRatioThreshold:  slow,
		StatIntervalMs:      j.check("statIntervalMs", r.StatIntervalMs),
		RTSlowRequestAmount: j.check("rtSlowRequestAmount", r.RTSlowRequestAmount),
		Shadow:              r.Shadow,
	}, j
}

type systemJSON struct {
	HighestSystemLoad float64 `json:"highestSystemLoad"`
	HighestCPUUsage   float64 `json:"highestCpuUsage"`
	QPS               float64 `json:"qps"`
	AvgRT             int64   `json:"avgRt"`
	MaxThread         int64   `json:"maxThread"`
	Shadow            bool    `json:"shadow,omitempty"` // omitted when false: documents stay Java-identical
}

func encodeSystem(r system.Rule) (any, []string) {
	return systemJSON(r), nil
}

type authorityJSON struct {
	Resource string `json:"resource"`
	LimitApp string `json:"limitApp"`
	Strategy int    `json:"strategy"`
	Shadow   bool   `json:"shadow,omitempty"` // omitted when false: documents stay Java-identical
}

func encodeAuthority(r authority.Rule) (any, []string) {
	return authorityJSON{Resource: r.Resource, LimitApp: r.LimitApp, Strategy: int(r.Strategy), Shadow: r.Shadow}, nil
}

type paramItemJSON struct {
	Object    string `json:"object"`
	Count     int    `json:"count"`
	ClassType string `json:"classType"`
}

type paramClusterJSON struct {
	FlowID                  int64 `json:"flowId"`
	ThresholdType           int   `json:"thresholdType"`
	FallbackToLocalWhenFail bool  `json:"fallbackToLocalWhenFail"`
	SampleCount             int   `json:"sampleCount"`
	WindowIntervalMs        int   `json:"windowIntervalMs"`
}

type paramFlowJSON struct {
	Resource          string            `json:"resource"`
	LimitApp          string            `json:"limitApp"`
	Grade             int               `json:"grade"`
	ParamIdx          int               `json:"paramIdx"`
	Count             float64           `json:"count"`
	ControlBehavior   int               `json:"controlBehavior"`
	MaxQueueingTimeMs int               `json:"maxQueueingTimeMs"`
	BurstCount        int               `json:"burstCount"`
	DurationInSec     int64             `json:"durationInSec"`
	ParamFlowItemList []paramItemJSON   `json:"paramFlowItemList"`
	ClusterMode       bool              `json:"clusterMode"`
	ClusterConfig     *paramClusterJSON `json:"clusterConfig"`    // null when zero
	Shadow            bool              `json:"shadow,omitempty"` // omitted when false: documents stay Java-identical
}

func encodeHotspot(r hotspot.Rule) (any, []string) {
	var j javaInt
	items := make([]paramItemJSON, len(r.ParamFlowItemList))
	for i, it := range r.ParamFlowItemList {
		items[i] = paramItemJSON{Object: it.Object, Count: j.check(fmt.Sprintf("paramFlowItemList[%d].count", i), it.Count), ClassType: it.ClassType}
	}
	c := r.ClusterConfig
	v := paramFlowJSON{
		Resource: r.Resource, LimitApp: r.LimitApp, Grade: hotspotGrade.javaOf(int(r.Grade)),
		ParamIdx:          j.check("paramIdx", r.ParamIdx),
		Count:             r.Count,
		ControlBehavior:   int(r.ControlBehavior),
		MaxQueueingTimeMs: j.check("maxQueueingTimeMs", r.MaxQueueingTimeMs),
		BurstCount:        j.check("burstCount", r.BurstCount),
		DurationInSec:     r.DurationInSec,
		ParamFlowItemList: items,
		ClusterMode:       r.ClusterMode,
		Shadow:            r.Shadow,
		ClusterConfig: &paramClusterJSON{
			FlowID:                  c.FlowID,
			ThresholdType:           j.check("clusterConfig.thresholdType", c.ThresholdType),
			FallbackToLocalWhenFail: c.FallbackToLocalWhenFail,
			SampleCount:             j.check("clusterConfig.sampleCount", c.SampleCount),
			WindowIntervalMs:        j.check("clusterConfig.windowIntervalMs", c.WindowIntervalMs),
		},
	}
	if c == (hotspot.ClusterConfig{}) {
		v.ClusterConfig = nil
	}
	return v, j
}
