package converter

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/internal/schematest"
)

// TestSchemaKnowsEveryField fails when a field of a rule type (or of a
// struct it nests) is not written by the encoder under its Java name, or
// not read back into the same field by the decode tables: the rule with
// every field set apart survives Encode's shape and the decoder unchanged.
func TestSchemaKnowsEveryField(t *testing.T) {
	t.Run("flow", func(t *testing.T) { schemaRoundTrip(t, flowKind) })
	t.Run("circuitbreaker", func(t *testing.T) { schemaRoundTrip(t, cbKind) })
	t.Run("system", func(t *testing.T) { schemaRoundTrip(t, sysKind) })
	t.Run("authority", func(t *testing.T) { schemaRoundTrip(t, authKind) })
	t.Run("hotspot", func(t *testing.T) {
		// Fill takes the first named behavior, flow's WarmUp, which a
		// hot-parameter rule cannot have.
		schemaRoundTrip(t, hotKind, func(r *hotspot.Rule) { r.ControlBehavior = flow.RateLimiter })
	})
}

func schemaRoundTrip[T any](t *testing.T, k *kind[T], fix ...func(*T)) {
	var r T
	schematest.Fill(&r)
	for _, f := range fix {
		f(&r)
	}
	v, bad := k.encode(r)
	require.Empty(t, bad)
	data, err := json.Marshal(v)
	require.NoError(t, err)

	// Every field is written under its Java name, and nothing else is.
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	var want []string
	for _, l := range schematest.Leaves[T]() {
		want = append(want, l.JSON)
	}
	assert.ElementsMatch(t, want, jsonLeaves("", doc), "encoded: %s", data)

	// The decoder reads every field back into the same field.
	d := &decoder{scanner: scanner{data: append(append([]byte{'['}, data...), ']')}, rule: -1}
	back := readList(d, k.object, func() T { var zero T; return zero }, nil, nil)
	d.end()
	require.NoError(t, d.err)
	require.Empty(t, d.problems, "decoding %s", data)
	require.Len(t, back, 1)
	assert.Equal(t, r, back[0], "decoded from %s", data)
}

// jsonLeaves returns the paths of the values of a decoded JSON object, in
// the notation of schematest.Leaf.JSON.
func jsonLeaves(at string, v any) []string {
	switch v := v.(type) {
	case map[string]any:
		var out []string
		for k, x := range v {
			p := k
			if at != "" {
				p = at + "." + k
			}
			out = append(out, jsonLeaves(p, x)...)
		}
		slices.Sort(out)
		return out
	case []any:
		var out []string
		for i, x := range v {
			out = append(out, jsonLeaves(at+"["+strconv.Itoa(i)+"]", x)...)
		}
		return out
	}
	return []string{at}
}

// TestSchemaEqualityKnowsEveryField fails when the converter's equality of
// a rule type (which decides what EncodeOver keeps) ignores a field.
func TestSchemaEqualityKnowsEveryField(t *testing.T) {
	t.Run("flow", func(t *testing.T) { schemaEqual(t, flowKind) })
	t.Run("circuitbreaker", func(t *testing.T) { schemaEqual(t, cbKind) })
	t.Run("system", func(t *testing.T) { schemaEqual(t, sysKind) })
	t.Run("authority", func(t *testing.T) { schemaEqual(t, authKind) })
	t.Run("hotspot", func(t *testing.T) { schemaEqual(t, hotKind) })
}

func schemaEqual[T any](t *testing.T, k *kind[T]) {
	var a, b T
	schematest.Fill(&a)
	schematest.Fill(&b)
	require.True(t, k.equal(&a, &b), "two rules filled alike are equal")
	for _, l := range schematest.Leaves[T]() {
		var c T
		schematest.Fill(&c)
		schematest.Change(&c, l)
		assert.False(t, k.equal(&a, &c), "a rule whose %s changed is equal to the old one", l.Go)
	}
}
