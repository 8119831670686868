package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/schematest"
)

// TestSchemaEqualityKnowsEveryField fails when a kind's equality (which
// decides whether a swap keeps a rule's state, and what OnChange reports)
// ignores a field of its rule type, nested ones included: a rule whose
// field changed must not be taken for the old one. (converter's schema
// tests hold its tables and encoder to the same fields.)
func TestSchemaEqualityKnowsEveryField(t *testing.T) {
	t.Run("flow", func(t *testing.T) { schemaEqual(t, flowKind) })
	t.Run("circuitbreaker", func(t *testing.T) { schemaEqual(t, breakerKind) })
	t.Run("system", func(t *testing.T) { schemaEqual(t, systemKind) })
	t.Run("authority", func(t *testing.T) { schemaEqual(t, authorityKind) })
	t.Run("hotspot", func(t *testing.T) { schemaEqual(t, hotspotKind) })
}

func schemaEqual[R any](t *testing.T, k kind[R]) {
	var a, b R
	schematest.Fill(&a)
	schematest.Fill(&b)
	require.True(t, k.equal(a, b), "two rules filled alike are equal")
	for _, l := range schematest.Leaves[R]() {
		var c R
		schematest.Fill(&c)
		schematest.Change(&c, l)
		assert.False(t, k.equal(a, c), "a rule whose %s changed is equal to the old one", l.Go)
	}
}
