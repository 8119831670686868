package authority

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChecker(t *testing.T) {
	tests := []struct {
		strategy Strategy
		limitApp string
		origin   string
		pass     bool
	}{
		{White, "a,b", "a", true},
		{White, "a,b", "b", true},
		{White, "a,b", "c", false},
		{White, "app-a,b", "app", false}, // substring, not a listed name
		{White, "a, b", "b", false},      // names are not trimmed, as in Java
		{White, "a, b", " b", true},
		{White, "a,b", "", true}, // no origin: not checked
		{Black, "a,b", "a", false},
		{Black, "a,b", "c", true},
		{Black, "app-a", "app", true},
		{Black, "a,b", "", true},
	}
	for _, tt := range tests {
		c := NewChecker(Rule{Resource: "r", LimitApp: tt.limitApp, Strategy: tt.strategy})
		assert.Equal(t, tt.pass, c.Pass(tt.origin), "%s %q origin %q", tt.strategy, tt.limitApp, tt.origin)
	}
}
