package authcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/bulwark-go/bulwark/core/authority"
)

func TestChecker(t *testing.T) {
	tests := []struct {
		strategy authority.Strategy
		limitApp string
		origin   string
		pass     bool
	}{
		{authority.White, "a,b", "a", true},
		{authority.White, "a,b", "b", true},
		{authority.White, "a,b", "c", false},
		{authority.White, "app-a,b", "app", false}, // substring, not a listed name
		{authority.White, "a, b", "b", false},      // names are not trimmed, as in Java
		{authority.White, "a, b", " b", true},
		{authority.White, "a,b", "", true}, // no origin: not checked
		{authority.Black, "a,b", "a", false},
		{authority.Black, "a,b", "c", true},
		{authority.Black, "app-a", "app", true},
		{authority.Black, "a,b", "", true},
	}
	for _, tt := range tests {
		c := NewChecker(authority.Rule{Resource: "r", LimitApp: tt.limitApp, Strategy: tt.strategy})
		assert.Equal(t, tt.pass, c.Pass(tt.origin), "%s %q origin %q", tt.strategy, tt.limitApp, tt.origin)
	}
}
