package converter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/system"
)

func TestCommentsAndBOM(t *testing.T) {
	doc := "\xef\xbb\xbf/*\n * Copyright 2024 ACME. Licensed under the Apache License, Version 2.0.\n */\n" +
		"// flow rules of order-service\n" +
		"[ // the first rule\n" +
		"  {\"resource\": \"GET /orders\" /* the route */, \"count\": 20}, /**/\n" +
		"  {\"resource\": \"a//b\", \"count\": 1 // one\n  }\n" +
		"] // end\n// really\n"
	rules, err := FlowRules().Convert([]byte(doc))
	require.NoError(t, err)
	require.Len(t, rules, 2)
	assert.Equal(t, "GET /orders", rules[0].Resource)
	assert.Equal(t, "a//b", rules[1].Resource, "// in a string is the string's")

	rs, err := RuleSet().Convert([]byte("\xef\xbb\xbf{/* c */\"flow\"/* c */:/* c */[]//\n}"))
	require.NoError(t, err)
	assert.Equal(t, Rules{}, rs)

	for _, doc := range []string{"\xef\xbb\xbf", "/* only a comment */", "// only a comment", "\xef\xbb\xbf  // x\n"} {
		_, err := FlowRules().Convert([]byte(doc))
		assert.Equal(t, []string{"empty document (write [] for no rules)"}, problems(t, err), "%q", doc)
	}
	for doc, want := range map[string]string{
		"[/ ]":                       "1:2: not valid JSON: unexpected '/': comments are /* … */ or // …",
		"[/* ]":                      "1:2: not valid JSON: unterminated /* comment",
		"[]/":                        "1:3: not valid JSON: unexpected '/': comments are /* … */ or // …",
		"[] \xef\xbb\xbf":            `1:4: not valid JSON: unexpected '\ufeff' after the top-level value`,
		"\xef\xbb\xbf\xef\xbb\xbf[]": `1:1: not valid JSON: expected a JSON value, found '\ufeff'`,
		"[{\"count\": 1 /* x */ /}]": "1:22: not valid JSON: unexpected '/': comments are /* … */ or // …",
	} {
		_, err := FlowRules().Convert([]byte(doc))
		assert.ErrorIs(t, err, ErrSyntax, "%q", doc)
		assert.Equal(t, []string{want}, problems(t, err), "%q", doc)
	}
}

func TestLineColumn(t *testing.T) {
	doc := "[\n  {\"resource\": \"é😀\", \"count\": 1},\n  {\"resource\": \"b\",}\n]"
	_, err := FlowRules().Convert([]byte(doc))
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.Len(t, de.Problems, 1)
	p := de.Problems[0]
	assert.Equal(t, 3, p.Line)
	assert.Equal(t, 20, p.Column)
	assert.Equal(t, -1, p.Rule)
	assert.False(t, de.Partial)
	assert.Equal(t, "converter: 3:20: not valid JSON: expected a string key, found '}'", err.Error())

	// Columns count characters, not bytes.
	_, err = FlowRules().Convert([]byte("[{\"resource\": \"é😀\", x}]"))
	assert.Equal(t, []string{"1:21: not valid JSON: expected a string key, found 'x'"}, problems(t, err))

	// Problems of rules have positions too: the value, or the field (its
	// key) for its Validate.
	doc = "[\n  {\"resource\": \"a\", \"count\": 1},\n  {\"count\": -1,\n   \"resource\": \"GET /orders\", \"grade\": \"fast\"}\n]"
	_, err = FlowRules().Convert([]byte(doc))
	require.ErrorAs(t, err, &de)
	require.Len(t, de.Problems, 2)
	assert.Equal(t, Problem{Path: "[1].grade", Rule: 1, Resource: "GET /orders", Line: 4, Column: 40,
		Message: `unknown name "fast": expected 0 (thread) or 1 (QPS)`, Err: ErrInvalid}, de.Problems[0])
	assert.Equal(t, Problem{Path: "[1].count", Rule: 1, Resource: "GET /orders", Line: 3, Column: 4,
		Message: "must be >= 0", Err: ErrInvalid}, de.Problems[1])
	assert.Equal(t, `[1] "GET /orders": count: must be >= 0`, de.Problems[1].Error())
}

func TestProblemNamesRule(t *testing.T) {
	// The resource comes after the failing field.
	_, err := FlowRules().Convert([]byte(`[{"resource":"a","count":1},{"resource":"b","count":1},{"resource":"c","count":1},
		{"count":-1,"resource":"GET /orders"}]`))
	assert.Equal(t, `converter: [3] "GET /orders": count: must be >= 0`, err.Error())

	_, err = RuleSet().Convert([]byte(`{"flow":[{"resource":"a","count":1},
		{"clusterMode":true,"clusterConfig":{"flowId":"x"},"resource":"GET /orders","count":1}]}`))
	assert.Equal(t, []string{
		`flow[1] "GET /orders": clusterConfig.flowId: expected an integer, found a string`,
	}, problems(t, err))

	// A wrapped entity's resource is the rule's.
	_, err = HotspotRules().Convert([]byte(`[{"id":1,"rule":{"resource":"getUser","paramIdx":0,"count":-1}}]`))
	assert.Equal(t, []string{`[0] "getUser": rule.count: must be >= 0`}, problems(t, err))

	// No resource (system rules, or a resource that does not decode):
	// the path alone.
	_, err = FlowRules().Convert([]byte(`[{"resource":5,"count":-1}]`))
	assert.Equal(t, []string{"[0].resource: expected a string, found a number", "[0].count: must be >= 0"}, problems(t, err))
	// Problems built by hand print as before.
	assert.Equal(t, "[0].count: must be >= 0", Problem{Path: "[0].count", Message: "must be >= 0"}.Error())
}

func TestLegacyFields(t *testing.T) {
	// DegradeRule 0.1 to 1.4 wrote cut, 0.1 to 1.6 passCount.
	doc := `[{"resource":"a","grade":2,"count":10,"timeWindow":5,"cut":false,"passCount":0},
		{"resource":"b","grade":0,"count":100,"timeWindow":5,"passCount":{"value":3}}]`
	rules, warnings, err := CircuitBreakerRules().(canInspect[[]circuitbreaker.Rule]).Inspect([]byte(doc))
	require.NoError(t, err)
	assert.Len(t, rules, 2)
	require.Len(t, warnings, 3)
	for _, w := range warnings {
		assert.ErrorIs(t, w, errIgnored)
		assert.NotErrorIs(t, w, ErrInvalid)
	}
	assert.Equal(t, Problem{Path: "[0].cut", Rule: 0, Resource: "a", Line: 1, Column: 60,
		Message: "ignored: DegradeRule.cut, the breaker state that Sentinel 0.1 to 1.4 wrote; Java ignores it since 1.5", Err: errIgnored}, warnings[0])
	assert.Equal(t, `[1] "b": passCount: ignored: DegradeRule.passCount, the counter that Sentinel 0.1 to 1.6 wrote; Java ignores it since 1.7`, warnings[2].Error())

	// Convert takes them silently.
	_, err = CircuitBreakerRules().Convert([]byte(doc))
	require.NoError(t, err)

	// The dashboard's SystemRuleEntity up to 1.6.2: avgLoad.
	sys, warnings, err := SystemRules().(canInspect[[]system.Rule]).Inspect([]byte(
		`[{"id":3,"app":"demo","ip":"1.1.1.1","port":8719,"avgLoad":8.0,"avgRt":-1,"maxThread":-1,"qps":100.0,"gmtCreate":null,"gmtModified":null}]`))
	require.NoError(t, err)
	assert.Equal(t, -1.0, sys[0].HighestSystemLoad, "Java ignores avgLoad")
	require.Len(t, warnings, 1)
	assert.Equal(t, "[0].avgLoad", warnings[0].Path)

	// ParamFlowRule 0.2: blockGrade, also inside a dashboard entity and in a rule set.
	rs, warnings, err := RuleSet().(canInspect[Rules]).Inspect([]byte(`{"paramFlow":[
		{"resource":"x","paramIdx":0,"count":1},
		{"id":1,"rule":{"resource":"getUser","paramIdx":0,"count":5,"blockGrade":1}}]}`))
	require.NoError(t, err)
	assert.Equal(t, flow.GradeQPS, rs.Hotspot[1].Grade)
	require.Len(t, warnings, 1)
	assert.Equal(t, "paramFlow[1].rule.blockGrade", warnings[0].Path)
	assert.Equal(t, 1, warnings[0].Rule)
	assert.Equal(t, "getUser", warnings[0].Resource)

	// Warnings come with problems too, and a document that is not JSON
	// has none.
	_, warnings, err = CircuitBreakerRules().(canInspect[[]circuitbreaker.Rule]).Inspect([]byte(`[{"resource":"a","cut":true,"count":-1,"timeWindow":1}]`))
	assert.Error(t, err)
	assert.Len(t, warnings, 1)
	_, warnings, err = CircuitBreakerRules().(canInspect[[]circuitbreaker.Rule]).Inspect([]byte(`[{"resource":"a","cut":true},`))
	assert.ErrorIs(t, err, ErrSyntax)
	assert.Empty(t, warnings)

	// Fields that never reached a Sentinel release stay unknown: they were
	// on development branches only.
	for doc, want := range map[string]string{
		`[{"resource":"a","count":1,"clusterLocalCountWhenError":1}]`:           "[0] \"a\": clusterLocalCountWhenError: unknown field",
		`[{"resource":"a","count":1,"clusterConfig":{"prefetchCntRatio":0.1}}]`: "[0] \"a\": clusterConfig.prefetchCntRatio: unknown field",
		`[{"resource":"a","count":1,"adapterType":1}]`:                          "[0] \"a\": adapterType: unknown field",
		`[{"resource":"a","count":1,"cut":false}]`:                              "[0] \"a\": cut: unknown field",
		`[{"resource":"a","count":1,"clusterConfig":{"refFlowId":1}}]`:          "[0] \"a\": clusterConfig.refFlowId: unknown field",
	} {
		_, err := FlowRules().Convert([]byte(doc))
		assert.Equal(t, []string{want}, problems(t, err), doc)
		assert.ErrorIs(t, err, ErrSyntax)
	}
	_, err = HotspotRules().Convert([]byte(`[{"resource":"a","paramIdx":0,"paramKey":"k"}]`))
	assert.Equal(t, []string{`[0] "a": paramKey: unknown field`}, problems(t, err))
	_, err = SystemRules().Convert([]byte(`[{"qps":1,"triggerCount":1}]`))
	assert.Equal(t, []string{`[0].triggerCount: unknown field`}, problems(t, err))
}

func TestPartial(t *testing.T) {
	doc := `[
		{"resource":"a","count":1},
		{"resource":"b","count":-1},
		{"resource":"c","grade":"fast"},
		"d",
		null,
		{"resource":"e","count":2,"speed":1},
		{"resource":"f","count":3}
	]`
	rules, err := FlowRules().Convert([]byte(doc))
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.True(t, de.Partial)
	var names []string
	for _, r := range rules {
		names = append(names, r.Resource)
	}
	assert.Equal(t, []string{"a", "f"}, names)
	var refused []int
	for _, p := range de.Problems {
		refused = append(refused, p.Rule)
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5}, refused)

	// Nothing left is still partial.
	rules, err = FlowRules().Convert([]byte(`[{"resource":"b","count":-1}]`))
	require.ErrorAs(t, err, &de)
	assert.True(t, de.Partial)
	assert.Empty(t, rules)

	// A problem inside a rule's list of items refuses the rule.
	hs, err := HotspotRules().Convert([]byte(`[{"resource":"a","paramIdx":0,"paramFlowItemList":[{"count":1}]},{"resource":"b","paramIdx":1}]`))
	require.ErrorAs(t, err, &de)
	assert.True(t, de.Partial)
	require.Len(t, hs, 1)
	assert.Equal(t, "b", hs[0].Resource)

	// Rule sets: each kind keeps its rules without a problem.
	rs, err := RuleSet().Convert([]byte(`{"flow":[{"resource":"a","count":1},{"resource":"b","count":-1}],
		"degrade":[{"resource":"c","count":1,"timeWindow":1}],"system":[{"qps":0},{"qps":5}]}`))
	require.ErrorAs(t, err, &de)
	assert.True(t, de.Partial)
	assert.Len(t, rs.Flow, 1)
	assert.Len(t, rs.CircuitBreaker, 1)
	assert.Equal(t, []system.Rule{{HighestSystemLoad: -1, HighestCPUUsage: -1, QPS: 5, AvgRT: -1, MaxThread: -1}}, rs.System)

	// Problems of the document as a whole: the zero value, not partial.
	for _, doc := range []string{
		`{"flow":[{"resource":"a","count":1}],"flows":[]}`,
		`{"flow":[{"resource":"a","count":1}],"degrade":{}}`,
		`{"flow":[{"resource":"a","count":1},{"resource":"b","count":-1}],"x":1}`,
		`[]`,
		`{"flow":[{"resource":"a","count":1}]`,
	} {
		rs, err := RuleSet().Convert([]byte(doc))
		require.ErrorAs(t, err, &de, doc)
		assert.False(t, de.Partial, doc)
		assert.Equal(t, Rules{}, rs, doc)
	}
	for _, doc := range []string{`{}`, `[{"resource":"a","count":1},`, `[{"resource":"a","count":1}] [`, ``, `"x"`} {
		rules, err := FlowRules().Convert([]byte(doc))
		require.ErrorAs(t, err, &de, doc)
		assert.False(t, de.Partial, doc)
		assert.Nil(t, rules, doc)
	}
}
