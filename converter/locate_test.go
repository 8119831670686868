package converter

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProblemsPointAtTheField: a value Validate refuses is located at its
// field's key, nested fields and a dashboard entity's rule included; a
// field the rule leaves out at the rule's start.
func TestProblemsPointAtTheField(t *testing.T) {
	at := func(t *testing.T, doc string, codec func([]byte) error) []string {
		t.Helper()
		return problemsOf(t, codec([]byte(doc)))
	}
	flowConv := func(b []byte) error { _, err := FlowRules().Convert(b); return err }
	cbConv := func(b []byte) error { _, err := CircuitBreakerRules().Convert(b); return err }
	hotConv := func(b []byte) error { _, err := HotspotRules().Convert(b); return err }

	assert.Equal(t, []string{`2:33: [0] "a": count: must be >= 0`},
		at(t, "[\n  {\"resource\": \"a\", \"grade\": 1, \"count\": -1}\n]", flowConv))
	assert.Equal(t, []string{`1:2: [0] "a": timeWindow: must be > 0 (seconds)`},
		at(t, `[{"resource":"a","count":1}]`, cbConv), "a field left out: the rule")
	assert.Equal(t, []string{`1:87: [0] "a": paramFlowItemList[0].count: must be >= 0`},
		at(t, `[{"resource":"a","paramIdx":0,"paramFlowItemList":[{"object":"x","classType":"String","count":-1}],"count":1}]`, hotConv)[:1])
	assert.Equal(t, []string{`1:46: [0] "a": rule.count: must be >= 0`},
		at(t, `[{"id":1,"rule":{"resource":"a","paramIdx":0,"count":-1}}]`, hotConv), "inside a dashboard entity's rule")

	// Unknown fields name the field they likely misspell.
	assert.Equal(t, []string{`1:28: [0] "a": cuont: unknown field (did you mean "count"?)`,
		`1:38: [0] "a": controlBehaviour: unknown field (did you mean "controlBehavior"?)`,
		`1:59: [0] "a": zzz: unknown field`},
		at(t, `[{"resource":"a","count":1,"cuont":2,"controlBehaviour":1,"zzz":1}]`, flowConv))
}

// problemsOf is the problems of err, with their positions, as validate
// prints them.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	de, ok := err.(*DecodeError)
	require.True(t, ok, "%v", err)
	var out []string
	for _, p := range de.Problems {
		out = append(out, fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Error()))
	}
	return out
}
