package authority

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		want []string
	}{
		{"white", Rule{Resource: "r", LimitApp: "a,b"}, nil},
		{"black", Rule{Resource: "r", LimitApp: "a", Strategy: Black}, nil},
		{"blank resource", Rule{Resource: "", LimitApp: "a"}, []string{"resource: must not be empty"}},
		{"blank limit app", Rule{Resource: "r", LimitApp: "  "}, []string{"limitApp: must list at least one origin"}},
		{"bad strategy", Rule{Resource: "r", LimitApp: "a", Strategy: 2}, []string{"strategy: must be 0 (white) or 1 (black), got 2"}},
		{"zero value", Rule{}, []string{"resource", "limitApp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rule.Validate()
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Len(t, err.(interface{ Unwrap() []error }).Unwrap(), len(tt.want), "problems: %v", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestStrategyString(t *testing.T) {
	assert.Equal(t, "white", White.String())
	assert.Equal(t, "black", Black.String())
	assert.Equal(t, "Strategy(5)", Strategy(5).String())
}
