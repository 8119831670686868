package paramvalue_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/paramvalue"
)

func TestParse(t *testing.T) {
	tests := []struct {
		object, class string
		want          any
		ok            bool
	}{
		{"7", "int", int64(7), true},
		{"-7", "java.lang.Integer", int64(-7), true},
		{"3000000000", "int", nil, false},
		{"3000000000", "long", int64(3000000000), true},
		{"9", "java.lang.Long", int64(9), true},
		{"127", "byte", int64(127), true},
		{"128", "java.lang.Byte", nil, false},
		{"-32768", "short", int64(-32768), true},
		{"40000", "java.lang.Short", nil, false},
		{"1.5", "double", 1.5, true},
		{"2.5", "java.lang.Float", 2.5, true},
		{"x", "float", nil, false},
		{"TRUE", "boolean", true, true},
		{"false", "java.lang.Boolean", false, true},
		{"yes", "boolean", nil, false},
		{"a", "char", 'a', true},
		{"é", "java.lang.Character", 'é', true},
		{"ab", "char", nil, false},
		{"", "char", nil, false},
		{"any text", "String", "any text", true},
		{"x", "java.lang.String", "x", true},
		{"x", "", "x", true},
		{"x", "Date", nil, false},
	}
	for _, tt := range tests {
		got, err := paramvalue.Parse(tt.object, tt.class)
		if !tt.ok {
			assert.Error(t, err, "%q as %s", tt.object, tt.class)
			continue
		}
		require.NoError(t, err, "%q as %s", tt.object, tt.class)
		assert.Equal(t, tt.want, got, "%q as %s", tt.object, tt.class)
	}
}
