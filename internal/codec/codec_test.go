package codec

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core/flow"
)

// implementsAll checks that c has the three capabilities.
func implementsAll[T any](t *testing.T, c converter.Codec[T]) {
	t.Helper()
	assert.Implements(t, (*inspector[T])(nil), c)
	assert.Implements(t, (*patcher[T])(nil), c)
	assert.Implements(t, (*compacter[T])(nil), c)
}

func TestEveryConverterCodecHasThem(t *testing.T) {
	implementsAll(t, converter.FlowRules())
	implementsAll(t, converter.CircuitBreakerRules())
	implementsAll(t, converter.SystemRules())
	implementsAll(t, converter.AuthorityRules())
	implementsAll(t, converter.HotspotRules())
	implementsAll(t, converter.RuleSet())
}

// plain is a codec with none of the capabilities.
type plain struct{}

func (plain) Convert(data []byte) ([]flow.Rule, error) {
	var rules []flow.Rule
	err := json.Unmarshal(data, &rules)
	return rules, err
}

func (plain) Encode(rules []flow.Rule) ([]byte, error) { return json.Marshal(rules) }

func TestFallBack(t *testing.T) {
	rules, warnings, err := Inspect[[]flow.Rule](plain{}, []byte(`[{"Resource":"r","Count":1}]`))
	require.NoError(t, err)
	assert.Nil(t, warnings)
	assert.Equal(t, []flow.Rule{{Resource: "r", Count: 1}}, rules)

	want, err := plain{}.Encode(rules)
	require.NoError(t, err)
	out, err := EncodeOver[[]flow.Rule](plain{}, []byte(`[{"Resource":"r","Count":9,"x":1}]`), rules)
	require.NoError(t, err)
	assert.Equal(t, want, out, "Encode")
	out, err = EncodeCompact[[]flow.Rule](plain{}, rules)
	require.NoError(t, err)
	assert.Equal(t, want, out, "Encode")
}
