package converter

import (
	"errors"
	"math"
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

// problems returns "path: message" of every problem of err, which must be
// a *DecodeError.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	var out []string
	for _, p := range de.Problems {
		out = append(out, p.Error())
	}
	return out
}

func TestFlowDefaults(t *testing.T) {
	rules, err := FlowRules().Convert([]byte(`[{"resource":"GET:/orders","count":20}]`))
	require.NoError(t, err)
	assert.Equal(t, []flow.Rule{{Resource: "GET:/orders", LimitApp: "default", Grade: flow.GradeQPS, Count: 20,
		Strategy: flow.Direct, ControlBehavior: flow.Reject, WarmUpPeriodSec: 10, MaxQueueingTimeMs: 500}}, rules)
}

func TestFlowAllFields(t *testing.T) {
	doc := `[{
		"resource": "w", "limitApp": "app-a", "grade": 0, "count": 5.5, "strategy": 1, "refResource": "r",
		"controlBehavior": 3, "warmUpPeriodSec": 20, "maxQueueingTimeMs": 1000.0, "clusterMode": true,
		"clusterConfig": {"flowId": 9, "thresholdType": 1}
	}]`
	rules, err := FlowRules().Convert([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, []flow.Rule{{Resource: "w", LimitApp: "app-a", Grade: flow.GradeThread, Count: 5.5,
		Strategy: flow.Relate, RefResource: "r", ControlBehavior: flow.WarmUpRateLimiter, WarmUpPeriodSec: 20,
		MaxQueueingTimeMs: 1000, ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{FlowID: 9, ThresholdType: 1, FallbackToLocalWhenFail: true,
			SampleCount: 10, WindowIntervalMs: 1000, ResourceTimeout: 2000, ClientOfflineTime: 2000}}}, rules)
}

func TestEnumNames(t *testing.T) {
	rules, err := FlowRules().Convert([]byte(`[
		{"resource":"a","grade":"QPS","controlBehavior":"warmUp"},
		{"resource":"b","grade":"thread","strategy":"CHAIN","refResource":"ctx"},
		{"resource":"c","controlBehavior":"RateLimiter"}]`))
	require.NoError(t, err)
	assert.Equal(t, flow.GradeQPS, rules[0].Grade)
	assert.Equal(t, flow.WarmUp, rules[0].ControlBehavior)
	assert.Equal(t, flow.GradeThread, rules[1].Grade)
	assert.Equal(t, flow.Chain, rules[1].Strategy)
	assert.Equal(t, flow.RateLimiter, rules[2].ControlBehavior)

	cb, err := CircuitBreakerRules().Convert([]byte(`[{"resource":"a","grade":"avgRt","count":50,"timeWindow":5},
		{"resource":"b","grade":"ERRORRATIO","count":0.5,"timeWindow":5}]`))
	require.NoError(t, err)
	assert.Equal(t, circuitbreaker.AvgRT, cb[0].Grade)
	assert.Equal(t, circuitbreaker.ErrorRatio, cb[1].Grade)

	au, err := AuthorityRules().Convert([]byte(`[{"resource":"a","limitApp":"x","strategy":"Black"}]`))
	require.NoError(t, err)
	assert.Equal(t, authority.Black, au[0].Strategy)
}

func TestEveryProblemWithItsPath(t *testing.T) {
	doc := `[
		{"resource":"a","count":10},
		{"resource":"b","count":"ten","Grade":1},
		{"resource":"c","controlBehavior":7,"warmUpPeriodSec":1.5,"speed":3},
		{"resource":"d","count":-1},
		"e",
		{"resource":"f","grade":"fast","clusterConfig":{"flowId":true,"bogus":1}},
		{"resource":"g","maxQueueingTimeMs":3000000000}
	]`
	_, err := FlowRules().Convert([]byte(doc))
	require.Error(t, err)
	assert.Equal(t, []string{
		`[1] "b": count: expected a number, found a string`,
		`[1] "b": Grade: unknown field (did you mean "grade"?)`,
		`[2] "c": controlBehavior: expected 0 (reject), 1 (warmUp), 2 (rateLimiter) or 3 (warmUpRateLimiter), found 7`,
		`[2] "c": warmUpPeriodSec: expected an integer, found 1.5`,
		`[2] "c": speed: unknown field`,
		`[3] "d": count: must be >= 0`,
		`[4]: expected an object, found a string`,
		`[5] "f": grade: unknown name "fast": expected 0 (thread) or 1 (QPS)`,
		`[5] "f": clusterConfig.flowId: expected an integer, found a boolean`,
		`[5] "f": clusterConfig.bogus: unknown field`,
		`[6] "g": maxQueueingTimeMs: 3000000000 is out of the range of a Java int`,
	}, problems(t, err))
	assert.ErrorIs(t, err, ErrSyntax)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.True(t, strings.HasPrefix(err.Error(), `converter: 11 problems: [1] "b": count: expected a number`), err.Error())
}

func TestErrorKinds(t *testing.T) {
	_, err := FlowRules().Convert([]byte(`[{"resource":"a","count":-1}]`))
	assert.ErrorIs(t, err, ErrInvalid)
	assert.NotErrorIs(t, err, ErrSyntax)
	assert.Equal(t, `converter: [0] "a": count: must be >= 0`, err.Error())

	_, err = FlowRules().Convert([]byte(`[{"resource":"a","nope":1}]`))
	assert.ErrorIs(t, err, ErrSyntax)
	assert.NotErrorIs(t, err, ErrInvalid)

	for _, doc := range []string{``, `  `, `[`, `[{"resource":"a",}]`, `[1,]`, `{"resource":"a"}`, `[] x`, `[{"a":"\x"}]`, "[\"\xff\"]", `[01]`, `[{"count":1e}]`, `tru`} {
		_, err := FlowRules().Convert([]byte(doc))
		assert.ErrorIs(t, err, ErrSyntax, "%q", doc)
		assert.NotErrorIs(t, err, ErrInvalid, "%q", doc)
	}
}

func TestNullAndEmpty(t *testing.T) {
	rules, err := FlowRules().Convert([]byte(` null `))
	require.NoError(t, err)
	assert.Nil(t, rules)
	rules, err = FlowRules().Convert([]byte(`[]`))
	require.NoError(t, err)
	assert.Empty(t, rules)
	// null for a field means left out: the default.
	rules, err = FlowRules().Convert([]byte(`[{"resource":"a","grade":null,"warmUpPeriodSec":null,"limitApp":null}]`))
	require.NoError(t, err)
	assert.Equal(t, flow.GradeQPS, rules[0].Grade)
	assert.Equal(t, 10, rules[0].WarmUpPeriodSec)
	assert.Equal(t, "default", rules[0].LimitApp)
	_, err = FlowRules().Convert([]byte(`[null]`))
	assert.Equal(t, []string{"[0]: expected an object, found null"}, problems(t, err))
}

func TestDashboardFlowEntity(t *testing.T) {
	doc := `[{"id":12,"app":"order","ip":"10.0.0.1","port":8720,"limitApp":"default","resource":"/pay",
		"grade":1,"count":100,"strategy":0,"refResource":null,"controlBehavior":0,"warmUpPeriodSec":null,
		"maxQueueingTimeMs":null,"clusterMode":false,"clusterConfig":null,
		"gmtCreate":1700000000000,"gmtModified":"2024-01-01 00:00:00"}]`
	rules, err := FlowRules().Convert([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, "/pay", rules[0].Resource)
	assert.Equal(t, 100.0, rules[0].Count)
}

func TestRegexGetter(t *testing.T) {
	_, err := FlowRules().Convert([]byte(`[{"resource":"a","regex":false}]`))
	require.NoError(t, err)
	_, err = FlowRules().Convert([]byte(`[{"resource":"a.*","regex":true}]`))
	assert.Equal(t, []string{`[0] "a.*": regex: regular-expression resources are not supported; set it to false or leave it out`}, problems(t, err))
}

func TestCircuitBreaker(t *testing.T) {
	rules, err := CircuitBreakerRules().Convert([]byte(`[{"resource":"a","count":200,"timeWindow":10}]`))
	require.NoError(t, err)
	assert.Equal(t, []circuitbreaker.Rule{{Resource: "a", LimitApp: "default", Grade: circuitbreaker.SlowRequestRatio,
		Count: 200, TimeWindow: 10, MinRequestAmount: 5, SlowRatioThreshold: 1, StatIntervalMs: 1000, RTSlowRequestAmount: 5}}, rules)

	rules, err = CircuitBreakerRules().Convert([]byte(`[{"resource":"a","grade":100,"count":20,"timeWindow":3,"rtSlowRequestAmount":2}]`))
	require.NoError(t, err)
	assert.Equal(t, circuitbreaker.AvgRT, rules[0].Grade)
	assert.Equal(t, 2, rules[0].RTSlowRequestAmount)

	_, err = CircuitBreakerRules().Convert([]byte(`[{"resource":"a","grade":1,"count":2,"statIntervalMs":0},{"resource":"b","grade":3}]`))
	assert.Equal(t, []string{
		`[0] "a": statIntervalMs: must be > 0 (ms)`, // Java refuses 0; leaving it out means 1000
		`[0] "a": count: must be a ratio in [0, 1] for grade errorRatio, got 2`,
		`[0] "a": timeWindow: must be > 0 (seconds)`,
		`[1] "b": grade: expected 0 (slowRequestRatio), 1 (errorRatio), 2 (errorCount) or 100 (avgRt), found 3`,
		`[1] "b": timeWindow: must be > 0 (seconds)`,
	}, problems(t, err))
}

func TestSystem(t *testing.T) {
	rules, err := SystemRules().Convert([]byte(`[{"highestCpuUsage":0.8},{"resource":"ignored","limitApp":"default","qps":100.5,"maxThread":10.0}]`))
	require.NoError(t, err)
	assert.Equal(t, []system.Rule{
		{HighestSystemLoad: -1, HighestCPUUsage: 0.8, QPS: -1, AvgRT: -1, MaxThread: -1},
		{HighestSystemLoad: -1, HighestCPUUsage: -1, QPS: 100.5, AvgRT: -1, MaxThread: 10},
	}, rules)
	_, err = SystemRules().Convert([]byte(`[{"qps":0},{},{"highestCpuUsage":80},{"resource":1}]`))
	assert.Equal(t, []string{
		"[0].qps: must not be 0, which would block all inbound traffic; use -1 to leave it unset",
		"[1]: rule sets no threshold: set at least one of highestSystemLoad, highestCpuUsage, qps, avgRt, maxThread",
		"[2].highestCpuUsage: must be a ratio in (0, 1], or -1 to leave it unset; got 80",
		"[3].resource: expected a string, found a number",
		"[3]: rule sets no threshold: set at least one of highestSystemLoad, highestCpuUsage, qps, avgRt, maxThread",
	}, problems(t, err))
}

func TestAuthorityDashboardWrapper(t *testing.T) {
	doc := `[
		{"resource":"plain","limitApp":"a,b","strategy":1},
		{"id":3,"app":"svc","ip":"1.2.3.4","port":8719,"gmtCreate":1,"gmtModified":2,
		 "rule":{"resource":"wrapped","limitApp":"c","strategy":0},
		 "resource":"wrapped","limitApp":"c","strategy":0}
	]`
	rules, err := AuthorityRules().Convert([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, []authority.Rule{{Resource: "plain", LimitApp: "a,b", Strategy: authority.Black},
		{Resource: "wrapped", LimitApp: "c", Strategy: authority.White}}, rules)

	_, err = AuthorityRules().Convert([]byte(`[{"rule":{"resource":"r","limitApp":"c"},"limitApp":"d"},{"rule":{"resource":"r"}},{"rule":5}]`))
	assert.Equal(t, []string{
		`[0] "r": limitApp: differs from rule.limitApp: beside "rule", a field must be a copy of the rule's`,
		`[1] "r": rule.limitApp: must list at least one origin (comma-separated)`,
		"[2].rule: expected an object (the rule of a dashboard entity), found a number",
		"[2].resource: must not be empty",
		"[2].limitApp: must list at least one origin (comma-separated)",
	}, problems(t, err))
}

func TestHotspot(t *testing.T) {
	doc := `[{"id":1,"app":"svc","ip":"1.1.1.1","port":1,"gmtCreate":null,"gmtModified":null,
		"rule":{"resource":"getUser","paramIdx":0,"count":5,"grade":1,"controlBehavior":"rateLimiter","maxQueueingTimeMs":200,
			"paramFlowItemList":[{"object":"42","count":100,"classType":"int"},{"object":7,"count":1,"classType":"java.lang.Long"},
				{"object":"vip","count":50,"classType":"String"},{"object":true,"count":2,"classType":"boolean"}],
			"parsedHotItems":{"42":100,"vip":50}, "clusterMode":false, "clusterConfig":{"flowId":3}},
		"resource":"getUser","paramIdx":0,"count":5}]`
	rules, err := HotspotRules().Convert([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, []hotspot.Rule{{Resource: "getUser", LimitApp: "default", Grade: flow.GradeQPS, ParamIdx: 0, Count: 5,
		ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 200, DurationInSec: 1,
		ParamFlowItemList: []hotspot.ParamFlowItem{{Object: "42", Count: 100, ClassType: "int"}, {Object: "7", Count: 1, ClassType: "java.lang.Long"},
			{Object: "vip", Count: 50, ClassType: "String"}, {Object: "true", Count: 2, ClassType: "boolean"}},
		ClusterConfig: hotspot.ClusterConfig{FlowID: 3, SampleCount: 10, WindowIntervalMs: 1000}}}, rules)

	_, err = HotspotRules().Convert([]byte(`[{"resource":"r","count":1},
		{"resource":"r","paramIdx":1,"controlBehavior":1,"paramFlowItemList":[{"object":"x","count":1,"classType":"int"},{"count":2},{"object":"a","count":-1,"classType":"Date"}]}]`))
	assert.Equal(t, []string{
		`[0] "r": required field "paramIdx" is missing`,
		`[1] "r": controlBehavior: expected 0 (reject) or 2 (rateLimiter), found 1`,
		`[1] "r": paramFlowItemList[1]: required field "object" is missing`,
		`[1] "r": paramFlowItemList[0].object: "x" is not a 32-bit integer (int)`,
		`[1] "r": paramFlowItemList[2].object: unknown class type "Date": use int, long, double, float, byte, short, boolean, char, String or a java.lang name`,
		`[1] "r": paramFlowItemList[2].count: must be >= 0`,
	}, problems(t, err))
}

func TestRuleSet(t *testing.T) {
	doc := `{
		"flow": [{"resource":"a","count":1}],
		"degrade": [{"resource":"a","count":100,"timeWindow":5}],
		"system": null,
		"paramFlow": [{"resource":"a","paramIdx":0,"count":3}]
	}`
	rs, err := RuleSet().Convert([]byte(doc))
	require.NoError(t, err)
	assert.Len(t, rs.Flow, 1)
	assert.Len(t, rs.CircuitBreaker, 1)
	assert.Nil(t, rs.System)
	assert.Nil(t, rs.Authority)
	assert.Len(t, rs.Hotspot, 1)

	_, err = RuleSet().Convert([]byte(`{"flow":[{"resource":"a"},{"count":-1}],"authority":{},"degrades":[]}`))
	assert.Equal(t, []string{
		"flow[1].resource: must not be empty",
		"flow[1].count: must be >= 0",
		"authority: expected an array, found an object",
		"degrades: unknown kind: expected flow, degrade, system, authority or paramFlow",
	}, problems(t, err))

	_, err = RuleSet().Convert([]byte(`[]`))
	assert.ErrorIs(t, err, ErrSyntax)
	rs, err = RuleSet().Convert([]byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, Rules{}, rs)
}

func TestEncodeJavaShape(t *testing.T) {
	out, err := FlowRules().Encode([]flow.Rule{{Resource: "a<b>", LimitApp: "default", Grade: flow.GradeQPS, Count: 10,
		ControlBehavior: flow.WarmUp, WarmUpPeriodSec: 10, MaxQueueingTimeMs: 500}})
	require.NoError(t, err)
	assert.Equal(t, `[
  {"resource":"a<b>","limitApp":"default","grade":1,"count":10,"strategy":0,"refResource":"","controlBehavior":1,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null}
]
`, string(out))

	out, err = SystemRules().Encode(nil)
	require.NoError(t, err)
	assert.Equal(t, "[]\n", string(out))
}

func TestEncodeRefusesInvalidRules(t *testing.T) {
	_, err := FlowRules().Encode([]flow.Rule{{Resource: "ok", Grade: flow.GradeQPS}, {Count: -1}, {Resource: "x", Grade: flow.GradeQPS, MaxQueueingTimeMs: 1 << 40}})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Equal(t, []string{"[1].resource: must not be empty", "[1].count: must be >= 0", `[2] "x": maxQueueingTimeMs: out of the range of a Java int`}, problems(t, err))

	_, err = RuleSet().Encode(Rules{System: []system.Rule{{}}})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "system[0]: rule sets no threshold")
}

func TestStringEscapes(t *testing.T) {
	rules, err := FlowRules().Convert([]byte(`[{"resource":"a\"b\\c\/d\n\u00e9\ud83d\ude00\ud800x","count":1}]`))
	require.NoError(t, err)
	assert.Equal(t, "a\"b\\c/d\né😀\uFFFDx", rules[0].Resource)
	_, err = FlowRules().Convert([]byte("[{\"resource\":\"a\tb\"}]"))
	assert.ErrorIs(t, err, ErrSyntax)
	// Escaped keys are keys.
	rules, err = FlowRules().Convert([]byte(`[{"re\u0073ource":"a"}]`))
	require.NoError(t, err)
	assert.Equal(t, "a", rules[0].Resource)
}

func TestDeepNesting(t *testing.T) {
	doc := `[{"resource":"a","app":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}]`
	_, err := FlowRules().Convert([]byte(doc))
	assert.ErrorIs(t, err, ErrSyntax)
	assert.Contains(t, err.Error(), "nesting deeper than")
}

func TestNumbers(t *testing.T) {
	rules, err := FlowRules().Convert([]byte(`[{"resource":"a","count":1e3,"warmUpPeriodSec":2E1,"maxQueueingTimeMs":-0}]`))
	require.NoError(t, err)
	assert.Equal(t, 1000.0, rules[0].Count)
	assert.Equal(t, 20, rules[0].WarmUpPeriodSec)
	_, err = FlowRules().Convert([]byte(`[{"resource":"a","count":1e999}]`))
	assert.Equal(t, []string{`[0] "a": count: number 1e999 is out of range`}, problems(t, err))
	hs, err := HotspotRules().Convert([]byte(`[{"resource":"a","paramIdx":-1,"durationInSec":9007199254740993}]`))
	require.NoError(t, err)
	assert.Equal(t, int64(9007199254740993), hs[0].DurationInSec)
	assert.Equal(t, -1, hs[0].ParamIdx)
	hs, err = HotspotRules().Convert([]byte(`[{"resource":"a","paramIdx":0,"durationInSec":9223372036854775807}]`))
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), hs[0].DurationInSec)
	_, err = FlowRules().Convert([]byte(`[{"resource":"a","warmUpPeriodSec":2147483647,"maxQueueingTimeMs":2.147483647e9}]`))
	require.NoError(t, err)
	_, err = FlowRules().Convert([]byte(`[{"resource":"a","warmUpPeriodSec":2147483648,"maxQueueingTimeMs":-2.147483649e9}]`))
	assert.Equal(t, []string{`[0] "a": warmUpPeriodSec: 2147483648 is out of the range of a Java int`,
		`[0] "a": maxQueueingTimeMs: -2.147483649e9 is out of the range of a Java int`}, problems(t, err))
	_, err = HotspotRules().Convert([]byte(`[{"resource":"a","paramIdx":0,"durationInSec":9223372036854775808}]`))
	assert.ErrorIs(t, err, ErrInvalid)
	assert.True(t, errors.Is(err, ErrInvalid))
}

func TestZeroValuesEncodeAsJavaDefaults(t *testing.T) {
	out, err := FlowRules().Encode([]flow.Rule{{Resource: "r", Count: 2}, {Resource: "t", Grade: flow.GradeThread, Count: 3}})
	require.NoError(t, err)
	assert.Equal(t, `[
  {"resource":"r","limitApp":"default","grade":1,"count":2,"strategy":0,"refResource":"","controlBehavior":0,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null},
  {"resource":"t","limitApp":"default","grade":0,"count":3,"strategy":0,"refResource":"","controlBehavior":0,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null}
]
`, string(out), "Java's numbers: QPS is 1, thread 0")

	out, err = CircuitBreakerRules().Encode([]circuitbreaker.Rule{{Resource: "b", Grade: circuitbreaker.ErrorRatio, Count: 0.5, TimeWindow: 10}})
	require.NoError(t, err)
	assert.Equal(t, `[
  {"resource":"b","limitApp":"default","grade":1,"count":0.5,"timeWindow":10,"minRequestAmount":5,"slowRatioThreshold":1,"statIntervalMs":1000,"rtSlowRequestAmount":5}
]
`, string(out))

	out, err = SystemRules().Encode([]system.Rule{{QPS: 100}})
	require.NoError(t, err)
	assert.Equal(t, "[\n  {\"highestSystemLoad\":-1,\"highestCpuUsage\":-1,\"qps\":100,\"avgRt\":-1,\"maxThread\":-1}\n]\n", string(out))

	out, err = HotspotRules().Encode([]hotspot.Rule{{Resource: "h", Count: 5}})
	require.NoError(t, err)
	assert.Contains(t, string(out), `"limitApp":"default","grade":1,"paramIdx":0,"count":5,"controlBehavior":0,"maxQueueingTimeMs":0,"burstCount":0,"durationInSec":1,`)

	// What a document leaves out and what Go leaves at zero decode alike.
	rules, err := FlowRules().Convert([]byte(`[{"resource":"r","count":2}]`))
	require.NoError(t, err)
	assert.Equal(t, []flow.Rule{flow.Rule{Resource: "r", Count: 2}.WithDefaults()}, rules)
	rules, err = FlowRules().Convert([]byte(`[{"resource":"r","grade":"thread","count":2},{"resource":"q","grade":0,"count":2}]`))
	require.NoError(t, err)
	assert.Equal(t, flow.GradeThread, rules[0].Grade)
	assert.Equal(t, flow.GradeThread, rules[1].Grade, "Java's 0 is the thread grade")
}

func TestSlowRatioZeroIsJavas(t *testing.T) {
	doc := []byte(`[{"resource":"a","count":100,"timeWindow":10,"slowRatioThreshold":0}]`)
	rules, err := CircuitBreakerRules().Convert(doc)
	require.NoError(t, err)
	assert.Equal(t, math.SmallestNonzeroFloat64, rules[0].SlowRatioThreshold, "any slow call opens the breaker, as Java's 0")
	out, err := CircuitBreakerRules().Encode(rules)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"slowRatioThreshold":0,`, "written back as 0")

	rules, err = CircuitBreakerRules().Convert([]byte(`[{"resource":"a","count":100,"timeWindow":10}]`))
	require.NoError(t, err)
	assert.Equal(t, 1.0, rules[0].SlowRatioThreshold, "left out: Java's default")
}

func TestExplicitZeros(t *testing.T) {
	// Java refuses these whatever the rest of the rule says; so does the
	// converter, though the Go zero value means the default.
	_, err := CircuitBreakerRules().Convert([]byte(`[{"resource":"a","timeWindow":1,"minRequestAmount":0}]`))
	assert.Equal(t, []string{`[0] "a": minRequestAmount: must be > 0`}, problems(t, err))
	_, err = HotspotRules().Convert([]byte(`[{"resource":"h","paramIdx":0,"durationInSec":0}]`))
	assert.Equal(t, []string{`[0] "h": durationInSec: must be > 0 (seconds)`}, problems(t, err))
	_, err = SystemRules().Convert([]byte(`[{"maxThread":0,"qps":5}]`))
	assert.Equal(t, []string{"[0].maxThread: must not be 0, which would block all inbound traffic; use -1 to leave it unset"}, problems(t, err))

	// Elsewhere a 0 reads as Java's default.
	rules, err := FlowRules().Convert([]byte(`[{"resource":"r","count":1,"limitApp":"","controlBehavior":1,"warmUpPeriodSec":0,"maxQueueingTimeMs":0}]`))
	require.NoError(t, err)
	assert.Equal(t, "default", rules[0].LimitApp)
	assert.Equal(t, 10, rules[0].WarmUpPeriodSec)
	assert.Equal(t, 500, rules[0].MaxQueueingTimeMs)
}

// TestShadow: "shadow" is read on every kind, written when true, and left
// out when false, so a document without shadow rules stays Java's.
func TestShadow(t *testing.T) {
	rs, err := RuleSet().Convert([]byte(`{"flow":[{"resource":"a","count":1,"shadow":true}],
		"degrade":[{"resource":"a","grade":2,"count":1,"timeWindow":1,"shadow":true}],
		"system":[{"qps":10,"shadow":true}],
		"authority":[{"resource":"a","limitApp":"x","shadow":true}],
		"paramFlow":[{"resource":"a","paramIdx":0,"count":1,"shadow":true}]}`))
	require.NoError(t, err)
	assert.True(t, rs.Flow[0].Shadow)
	assert.True(t, rs.CircuitBreaker[0].Shadow)
	assert.True(t, rs.System[0].Shadow)
	assert.True(t, rs.Authority[0].Shadow)
	assert.True(t, rs.Hotspot[0].Shadow)

	on, err := RuleSet().Encode(rs)
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(string(on), `"shadow":true`), "%s", on)

	rs.Flow[0].Shadow, rs.CircuitBreaker[0].Shadow, rs.System[0].Shadow = false, false, false
	rs.Authority[0].Shadow, rs.Hotspot[0].Shadow = false, false
	off, err := RuleSet().Encode(rs)
	require.NoError(t, err)
	assert.NotContains(t, string(off), "shadow")
}
