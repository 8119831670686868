package converter

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// dashboardFlow is a flow document as Sentinel's dashboard and a person
// left it: entity fields, nulls, a header, comments, odd spacing, a
// legacy-free but unusual rule.
const dashboardFlow = "\xef\xbb\xbf/* order-service flow rules, managed by the dashboard */\n[\n" +
	`  {"id":1,"app":"order","ip":"10.0.0.7","port":8720,"limitApp":"default","resource":"GET /orders","grade":1,"count":100.0,"strategy":0,"refResource":null,"controlBehavior":0,"warmUpPeriodSec":null,"maxQueueingTimeMs":null,"clusterMode":false,"clusterConfig":null,"gmtCreate":1700000000000,"gmtModified":1700000000000},` + "\n" +
	`  // pay is fragile` + "\n" +
	`  {"id":2,"app":"order","ip":"10.0.0.7","port":8720,"limitApp":"default","resource":"POST /pay","grade":1,"count":20.0,"strategy":0,"refResource":null,"controlBehavior":2,"warmUpPeriodSec":null,"maxQueueingTimeMs":800,"clusterMode":false,"clusterConfig":null,"gmtCreate":1700000000000,"gmtModified":1700000000500},` + "\n" +
	`  { "resource" : "GET /items",   "grade": "QPS", "count": 5 , "regex": false }` + "\n" +
	"]\n"

// ruleTexts returns the text of every rule of a list document.
func ruleTexts(t *testing.T, doc []byte) []string {
	t.Helper()
	rec := &listRec{open: -1}
	_, _, _, err := FlowRules().(list[flow.Rule]).decode(doc, rec)
	require.NoError(t, err)
	var out []string
	for _, el := range rec.elems {
		out = append(out, string(doc[el.start:el.end]))
	}
	return out
}

func TestEncodeOverChangesOneRule(t *testing.T) {
	c := FlowRules()
	prev := []byte(dashboardFlow)
	rules, err := c.Convert(prev)
	require.NoError(t, err)
	rules[1].Count = 25

	out, err := c.(canEncodeOver[[]flow.Rule]).EncodeOver(prev, rules)
	require.NoError(t, err)
	back, err := c.Convert(out)
	require.NoError(t, err)
	assert.Equal(t, rules, back)

	// Only the changed value differs, byte for byte.
	assert.Equal(t, strings.Replace(dashboardFlow, `"count":20.0`, `"count":25`, 1), string(out))
	before, after := ruleTexts(t, prev), ruleTexts(t, out)
	assert.Equal(t, before[0], after[0])
	assert.Equal(t, before[2], after[2])
	assert.Contains(t, after[1], `"id":2,"app":"order","ip":"10.0.0.7","port":8720,`)
	assert.Contains(t, after[1], `"gmtCreate":1700000000000,"gmtModified":1700000000500}`)
	assert.Contains(t, after[1], `"refResource":null`)
}

func TestEncodeOverMatching(t *testing.T) {
	c := FlowRules().(canEncodeOver[[]flow.Rule])
	prev := []byte(dashboardFlow)
	rules, err := FlowRules().Convert(prev)
	require.NoError(t, err)
	before := ruleTexts(t, prev)

	// Reordered, one removed, one added, one changed: each rule keeps its
	// text (and the comment above it); the new one is Encode's.
	changed := rules[2]
	changed.Count = 6
	added := flow.Rule{Resource: "DELETE /orders", LimitApp: "default", Grade: flow.GradeQPS, Count: 1, WarmUpPeriodSec: 10, MaxQueueingTimeMs: 500}
	out, err := c.EncodeOver(prev, []flow.Rule{rules[1], changed, added})
	require.NoError(t, err)
	after := ruleTexts(t, out)
	require.Len(t, after, 3)
	assert.Equal(t, before[1], after[0])
	assert.Equal(t, `{ "resource" : "GET /items",   "grade": "QPS", "count": 6 , "regex": false }`, after[1])
	assert.Equal(t, `{"resource":"DELETE /orders","limitApp":"default","grade":1,"count":1,"strategy":0,"refResource":"","controlBehavior":0,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null}`, after[2])
	assert.True(t, strings.HasPrefix(string(out), "\xef\xbb\xbf/* order-service flow rules, managed by the dashboard */\n[\n  // pay is fragile\n  {\"id\":2,"), string(out))

	// A changed field that the object left out is added; a field set back
	// to its default keeps its null.
	r := rules[0]
	r.WarmUpPeriodSec = 30
	r.ControlBehavior = flow.WarmUp
	out, err = c.EncodeOver(prev, []flow.Rule{r, rules[1], rules[2]})
	require.NoError(t, err)
	after = ruleTexts(t, out)
	assert.Equal(t, strings.Replace(strings.Replace(before[0], `"warmUpPeriodSec":null`, `"warmUpPeriodSec":30`, 1),
		`"controlBehavior":0`, `"controlBehavior":1`, 1), after[0])
	assert.Equal(t, before[1:], after[1:])

	r = rules[2]
	r.ClusterMode = true
	r.ClusterConfig = flow.ClusterConfig{FlowID: 7, FallbackToLocalWhenFail: true, SampleCount: 10, WindowIntervalMs: 1000}
	out, err = c.EncodeOver(prev, []flow.Rule{rules[0], rules[1], r})
	require.NoError(t, err)
	assert.Equal(t, `{ "resource" : "GET /items",   "grade": "QPS", "count": 5 , "regex": false, "clusterMode":true, "clusterConfig":{"flowId":7,"thresholdType":0,"fallbackToLocalWhenFail":true,"strategy":0,"sampleCount":10,"windowIntervalMs":1000,"resourceTimeout":2000,"resourceTimeoutStrategy":0,"acquireRefuseStrategy":0,"clientOfflineTime":2000} }`,
		ruleTexts(t, out)[2])

	// Nothing left: an empty array, the header kept.
	out, err = c.EncodeOver(prev, nil)
	require.NoError(t, err)
	assert.Equal(t, "\xef\xbb\xbf/* order-service flow rules, managed by the dashboard */\n[\n]\n", string(out))
}

func TestEncodeOverIdentity(t *testing.T) {
	c := FlowRules().(canEncodeOver[[]flow.Rule])
	prev := []byte(`[
{"id":1,"resource":"r","limitApp":"default","count":10},
{"id":2,"resource":"r","limitApp":"app-a","count":5},
{"id":3,"resource":"r","limitApp":"app-a","count":6}
]`)
	rules, err := FlowRules().Convert(prev)
	require.NoError(t, err)

	// The default rule removed, app-a's second threshold changed: the
	// changed rule is matched by its identity (resource, limitApp, …),
	// not by its position.
	r := rules[2]
	r.Count = 7
	out, err := c.EncodeOver(prev, []flow.Rule{rules[1], r})
	require.NoError(t, err)
	assert.Equal(t, "[\n{\"id\":2,\"resource\":\"r\",\"limitApp\":\"app-a\",\"count\":5},\n{\"id\":3,\"resource\":\"r\",\"limitApp\":\"app-a\",\"count\":7}\n]", string(out))

	// Two rules of one identity both changed: matched in order.
	a, b := rules[1], rules[2]
	a.Count, b.Count = 50, 60
	out, err = c.EncodeOver(prev, []flow.Rule{rules[0], a, b})
	require.NoError(t, err)
	assert.Contains(t, string(out), `{"id":2,"resource":"r","limitApp":"app-a","count":50}`)
	assert.Contains(t, string(out), `{"id":3,"resource":"r","limitApp":"app-a","count":60}`)

	// A changed limitApp is another identity: a new rule, without the
	// entity fields.
	r = rules[0]
	r.LimitApp = "app-b"
	out, err = c.EncodeOver(prev, []flow.Rule{r, rules[1], rules[2]})
	require.NoError(t, err)
	assert.NotContains(t, string(out), `"id":1`)
	assert.Contains(t, string(out), `{"resource":"r","limitApp":"app-b","grade":1,"count":10,`)
}

func TestEncodeOverWrappedEntities(t *testing.T) {
	// A param-flow entity as dashboards before 1.7 wrote it: the rule
	// inside, copies of its fields beside it, parsedHotItems.
	prev := []byte(`[{"id":5,"app":"demo","ip":"10.0.0.9","port":8719,"gmtCreate":1,"gmtModified":2,
 "rule":{"resource":"hot","limitApp":"default","grade":1,"paramIdx":0,"count":3,"controlBehavior":0,"maxQueueingTimeMs":0,"burstCount":0,"durationInSec":1,
   "paramFlowItemList":[{"object":"7","count":9,"classType":"int"}],"parsedHotItems":{"7":9},"clusterMode":false,
   "clusterConfig":{"flowId":null,"thresholdType":0,"fallbackToLocalWhenFail":false,"sampleCount":10,"windowIntervalMs":1000}},
 "resource":"hot","paramIdx":0,"count":3,"grade":1,"limitApp":"default","clusterMode":false},
 {"id":6,"rule":{"resource":"cold","paramIdx":1,"count":1}}]`)
	c := HotspotRules()
	rules, err := c.Convert(prev)
	require.NoError(t, err)
	rules[0].Count = 4
	rules[0].ParamFlowItemList = append(rules[0].ParamFlowItemList, hotspot.ParamFlowItem{Object: "8", Count: 1, ClassType: "int"})
	out, err := c.(canEncodeOver[[]hotspot.Rule]).EncodeOver(prev, rules)
	require.NoError(t, err)
	back, err := c.Convert(out)
	require.NoError(t, err)
	assert.Equal(t, rules, back)
	assert.Equal(t, `[{"id":5,"app":"demo","ip":"10.0.0.9","port":8719,"gmtCreate":1,"gmtModified":2,
 "rule":{"resource":"hot","limitApp":"default","grade":1,"paramIdx":0,"count":4,"controlBehavior":0,"maxQueueingTimeMs":0,"burstCount":0,"durationInSec":1,
   "paramFlowItemList":[{"object":"7","count":9,"classType":"int"},{"object":"8","count":1,"classType":"int"}],"clusterMode":false,
   "clusterConfig":{"flowId":null,"thresholdType":0,"fallbackToLocalWhenFail":false,"sampleCount":10,"windowIntervalMs":1000}},
 "resource":"hot","paramIdx":0,"count":4,"grade":1,"limitApp":"default","clusterMode":false},
 {"id":6,"rule":{"resource":"cold","paramIdx":1,"count":1}}]`, string(out))

	// Authority entities as 1.7+ dashboards write them.
	ap := []byte(`[{"id":4,"app":"demo","ip":"10.1.1.1","port":8719,"rule":{"resource":"r","limitApp":"a","strategy":1},"gmtCreate":1,"gmtModified":1}]`)
	ar, err := AuthorityRules().Convert(ap)
	require.NoError(t, err)
	ar[0].LimitApp = "a,b"
	out, err = AuthorityRules().(canEncodeOver[[]authority.Rule]).EncodeOver(ap, ar)
	require.NoError(t, err)
	assert.Equal(t, `[{"id":4,"app":"demo","ip":"10.1.1.1","port":8719,"rule":{"resource":"r","limitApp":"a,b","strategy":1},"gmtCreate":1,"gmtModified":1}]`, string(out))
}

func TestEncodeOverLegacyFields(t *testing.T) {
	prev := []byte(`[{"id":1,"resource":"a","grade":2,"count":10,"timeWindow":5,"cut":false,"passCount":0},{"resource":"b","count":1,"timeWindow":1,"passCount":3}]`)
	c := CircuitBreakerRules()
	rules, err := c.Convert(prev)
	require.NoError(t, err)
	rules[0].Count = 11
	out, err := c.(canEncodeOver[[]circuitbreaker.Rule]).EncodeOver(prev, rules)
	require.NoError(t, err)
	// The changed rule drops the fields that described the old rule; the
	// unchanged one keeps everything.
	assert.Equal(t, `[{"id":1,"resource":"a","grade":2,"count":11,"timeWindow":5},{"resource":"b","count":1,"timeWindow":1,"passCount":3}]`, string(out))
}

func TestEncodeOverSystemRulesByPosition(t *testing.T) {
	prev := []byte("[\n  {\"id\":1,\"qps\":100},\n  {\"id\":2,\"highestCpuUsage\":0.8}\n]")
	c := SystemRules()
	rules, err := c.Convert(prev)
	require.NoError(t, err)
	rules[1].HighestCPUUsage = 0.9
	rules = append(rules, system.Rule{HighestSystemLoad: -1, HighestCPUUsage: -1, QPS: -1, AvgRT: 50, MaxThread: -1})
	out, err := c.(canEncodeOver[[]system.Rule]).EncodeOver(prev, rules)
	require.NoError(t, err)
	assert.Equal(t, "[\n  {\"id\":1,\"qps\":100},\n  {\"id\":2,\"highestCpuUsage\":0.9},\n  {\"highestSystemLoad\":-1,\"highestCpuUsage\":-1,\"qps\":-1,\"avgRt\":50,\"maxThread\":-1}\n]", string(out))
}

func TestEncodeOverRuleSet(t *testing.T) {
	prev := []byte(`// rules of checkout
{
  "flow": [{"id":1,"resource":"a","count":1}, {"id":2,"resource":"b","count":2}],
  "system": null,
  "degrade": []
}
`)
	c := RuleSet()
	rs, err := c.Convert(prev)
	require.NoError(t, err)
	rs.Flow[1].Count = 3
	rs.Authority = []authority.Rule{{Resource: "admin", LimitApp: "ops"}}
	out, err := c.(canEncodeOver[Rules]).EncodeOver(prev, rs)
	require.NoError(t, err)
	assert.Equal(t, `// rules of checkout
{
  "flow": [{"id":1,"resource":"a","count":1}, {"id":2,"resource":"b","count":3}],
  "system": null,
  "degrade": [],
  "authority": [
    {"resource":"admin","limitApp":"ops","strategy":0}
  ]
}
`, string(out))
	back, err := c.Convert(out)
	require.NoError(t, err)
	assert.Equal(t, rs, back)

	// A kind emptied keeps its (empty) array; a null kind given rules
	// gets an array.
	rs.Flow = nil
	rs.System = []system.Rule{{HighestSystemLoad: -1, HighestCPUUsage: -1, QPS: 10, AvgRT: -1, MaxThread: -1}}
	out, err = c.(canEncodeOver[Rules]).EncodeOver(prev, rs)
	require.NoError(t, err)
	assert.Equal(t, `// rules of checkout
{
  "flow": [],
  "system": [
    {"highestSystemLoad":-1,"highestCpuUsage":-1,"qps":10,"avgRt":-1,"maxThread":-1}
  ],
  "degrade": [],
  "authority": [
    {"resource":"admin","limitApp":"ops","strategy":0}
  ]
}
`, string(out))

	// An empty object gets members.
	out, err = c.(canEncodeOver[Rules]).EncodeOver([]byte(`{}`), Rules{Authority: rs.Authority})
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"authority\": [\n    {\"resource\":\"admin\",\"limitApp\":\"ops\",\"strategy\":0}\n  ]\n}", string(out))
}

func TestEncodeOverFallsBack(t *testing.T) {
	rules := []flow.Rule{{Resource: "a", LimitApp: "default", Grade: flow.GradeQPS, Count: 1}}
	want, err := FlowRules().Encode(rules)
	require.NoError(t, err)
	for _, prev := range []string{``, `not json`, `null`, `{"resource":"a"}`, `[{"resource":"a","count":1}`, `{"flow":[]}`} {
		out, err := FlowRules().(canEncodeOver[[]flow.Rule]).EncodeOver([]byte(prev), rules)
		require.NoError(t, err, prev)
		assert.Equal(t, string(want), string(out), prev)
	}
	want, err = RuleSet().Encode(Rules{Flow: rules})
	require.NoError(t, err)
	for _, prev := range []string{``, `null`, `[]`, `{"flow":[],"x":1}`} {
		out, err := RuleSet().(canEncodeOver[Rules]).EncodeOver([]byte(prev), Rules{Flow: rules})
		require.NoError(t, err, prev)
		assert.Equal(t, string(want), string(out), prev)
	}

	// Invalid rules are refused as Encode refuses them.
	_, err = FlowRules().(canEncodeOver[[]flow.Rule]).EncodeOver([]byte(`[]`), []flow.Rule{{Resource: "x", Count: -1}})
	assert.Equal(t, []string{`[0] "x": count: must be >= 0`}, problems(t, err))

	// A previous document with a bad rule: its good rules are kept, the
	// bad one, which no value holds, is gone.
	prev := []byte(`[{"id":1,"resource":"a","count":1},{"id":2,"resource":"b","count":-1}]`)
	old, err := FlowRules().Convert(prev)
	require.Error(t, err)
	out, err := FlowRules().(canEncodeOver[[]flow.Rule]).EncodeOver(prev, old)
	require.NoError(t, err)
	assert.Equal(t, `[{"id":1,"resource":"a","count":1}]`, string(out))
}

// TestEncodeOverShadow: turning a shadow rule on removes its "shadow"
// member and keeps the rest of the text; turning it off adds one.
func TestEncodeOverShadow(t *testing.T) {
	c := FlowRules().(canEncodeOver[[]flow.Rule])
	prev := []byte(`[
  // the tighter threshold, tried in shadow
  {"resource":"GET /orders","count":50,"shadow":true,"controlBehavior":0}
]`)
	rules, err := FlowRules().Convert(prev)
	require.NoError(t, err)
	require.True(t, rules[0].Shadow)

	rules[0].Shadow = false
	on, err := c.EncodeOver(prev, rules)
	require.NoError(t, err)
	assert.Equal(t, `[
  // the tighter threshold, tried in shadow
  {"resource":"GET /orders","count":50,"controlBehavior":0}
]`, string(on))

	rules[0].Shadow = true
	off, err := c.EncodeOver(on, rules)
	require.NoError(t, err)
	back, err := FlowRules().Convert(off)
	require.NoError(t, err)
	assert.Equal(t, rules, back)
	assert.Contains(t, string(off), "// the tighter threshold, tried in shadow")
	assert.Contains(t, string(off), `"shadow":true`)
}
