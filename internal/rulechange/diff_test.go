package rulechange

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines diffs two documents of one kind and returns the printed lines.
func lines(t *testing.T, kindName, from, to string) []string {
	t.Helper()
	k, err := KindNamed(kindName)
	require.NoError(t, err)
	a, err := k.Rules([]byte(from), false)
	require.NoError(t, err)
	b, err := k.Rules([]byte(to), false)
	require.NoError(t, err)
	return Lines(Diff(a, b))
}

func TestDiffRules(t *testing.T) {
	for _, c := range []struct {
		name, kind, from, to string
		want                 []string
	}{
		{"same rules, other order and text", "flow",
			`[{"resource":"a","count":1},{"resource":"b","count":2}]`,
			`[ {"resource":"b","count":2.0,"grade":1}, {"resource":"a","count":1} ]`, nil},
		{"limitApp is part of the identity", "flow",
			`[{"resource":"a","count":1},{"resource":"a","limitApp":"appA","count":5}]`,
			`[{"resource":"a","count":1},{"resource":"a","limitApp":"appA","count":7}]`,
			[]string{`~ a (limitApp "appA"): count 5 → 7`}},
		{"a changed grade is another rule", "flow",
			`[{"resource":"a","count":1}]`,
			`[{"resource":"a","grade":0,"count":1}]`,
			[]string{`+ a (grade thread): grade thread, count 1`, `- a: count 1`}},
		{"enums by name, as the rule types' String methods give them", "flow",
			`[{"resource":"a","count":1,"controlBehavior":0,"strategy":0}]`,
			`[{"resource":"a","count":1,"controlBehavior":"rateLimiter","strategy":0}]`,
			[]string{`~ a: controlBehavior reject → rateLimiter`}},
		{"breaker grades by name", "degrade",
			`[{"resource":"a","grade":2,"count":5,"timeWindow":1}]`,
			`[{"resource":"a","grade":"errorCount","count":6,"timeWindow":1},{"resource":"b","grade":1,"count":0.5,"timeWindow":1}]`,
			[]string{`~ a (grade errorCount): count 5 → 6`, `+ b (grade errorRatio): grade errorRatio, count 0.5, timeWindow 1`}},
		{"authority strategies by name", "authority",
			`[{"resource":"a","limitApp":"x","strategy":0}]`,
			`[{"resource":"a","limitApp":"x","strategy":1}]`,
			[]string{`~ a: strategy white → black`}},
		{"equal rules pair first among one identity", "flow",
			`[{"resource":"a","count":1,"controlBehavior":1},{"resource":"a","count":2}]`,
			`[{"resource":"a","count":2},{"resource":"a","count":3,"controlBehavior":1}]`,
			[]string{`~ a: count 1 → 3`}},
		{"nested fields are named by path", "flow",
			`[{"resource":"a","count":1,"clusterMode":true,"clusterConfig":{"flowId":1}}]`,
			`[{"resource":"a","count":1,"clusterMode":true,"clusterConfig":{"flowId":1,"thresholdType":1}}]`,
			[]string{`~ a: clusterConfig.thresholdType 0 → 1`}},
		{"system rules match by position", "system",
			`[{"qps":100},{"avgRt":10}]`,
			`[{"qps":200}]`,
			[]string{`~ rule #1: qps 100 → 200`, `- rule #2: avgRt 10`}},
		{"rule sets say the kind", "ruleset",
			`{"flow":[{"resource":"a","count":1}]}`,
			`{"flow":[{"resource":"a","count":1}],"degrade":[{"resource":"a","count":100,"timeWindow":5}]}`,
			[]string{`+ degrade a: count 100, timeWindow 5`}},
		{"dashboard entity fields are not rules' fields", "flow",
			`[{"id":1,"app":"x","gmtCreate":5,"resource":"a","count":1}]`,
			`[{"resource":"a","count":1}]`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, lines(t, c.kind, c.from, c.to))
		})
	}
}

func TestDetect(t *testing.T) {
	for doc, want := range map[string]string{
		`[{"resource":"a","count":1}]`:                                  "flow",
		`[{"resource":"a","count":-1}]`:                                 "flow",
		`[{"resource":"a","grade":2,"count":3,"timeWindow":10}]`:        "degrade",
		`[{"resource":"a","paramIdx":0,"count":3}]`:                     "paramFlow",
		`[{"resource":"a","limitApp":"b,c","strategy":1}]`:              "authority",
		`[{"highestSystemLoad":4}]`:                                     "system",
		"\ufeff// header\n{\"flow\":[]}":                                "ruleset",
		`[{"id":1,"rule":{"resource":"a","paramIdx":1,"count":3}}]`:     "paramFlow",
		`[{"resource":"a","grade":0,"count":3,"timeWindow":1,"cut":1}]`: "degrade",
	} {
		assert.Equal(t, want, Detect([]byte(doc), "").name, doc)
	}
	// An empty list is any kind: the key's name decides.
	assert.Equal(t, "degrade", Detect([]byte(`[]`), HintFrom("order-service-degrade-rules")).name)
	assert.Equal(t, "flow", Detect([]byte(`[]`), "").name)
}

// TestChangeJSON: a change carries what a person reads (its line, each
// field's text, enums by name), so that a page shows what the CLI prints.
func TestChangeJSON(t *testing.T) {
	k, err := KindNamed("flow")
	require.NoError(t, err)
	a, err := k.Rules([]byte(`[{"resource":"a","count":1},{"resource":"b","count":3,"controlBehavior":2}]`), false)
	require.NoError(t, err)
	b, err := k.Rules([]byte(`[{"resource":"a","count":1,"controlBehavior":"warmUp"}]`), false)
	require.NoError(t, err)
	assert.Equal(t, "count 3, controlBehavior rateLimiter", a[1].Text(), "the compact form, enums by name")
	assert.Equal(t, map[string]string{"grade": "QPS", "strategy": "direct", "controlBehavior": "rateLimiter"}, a[1].Names())
	out, err := json.Marshal(Diff(a, b))
	require.NoError(t, err)
	assert.JSONEq(t, `[
	  {"op":"changed","rule":"a","line":"~ a: controlBehavior reject → warmUp",
	   "fields":[{"field":"controlBehavior","from":0,"to":1,"text":"controlBehavior reject → warmUp","fromText":"reject","toText":"warmUp"}]},
	  {"op":"removed","rule":"b","line":"- b: count 3, controlBehavior rateLimiter","text":"count 3, controlBehavior rateLimiter",
	   "value":{"resource":"b","limitApp":"default","grade":1,"count":3,"strategy":0,"refResource":"","controlBehavior":2,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null}}
	]`, string(out))
}
