package converter_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/codec"
)

// compactOf decodes doc with c and encodes it compactly; the compact
// document must decode to the same value.
func compactOf[T any](t *testing.T, c converter.Codec[T], doc string) string {
	t.Helper()
	v, err := c.Convert([]byte(doc))
	require.NoError(t, err)
	out, err := codec.EncodeCompact(c, v)
	require.NoError(t, err)
	again, err := c.Convert(out)
	require.NoError(t, err, string(out))
	assert.Equal(t, v, again, "the compact document decodes to the same rules")
	return string(out)
}

func TestEncodeCompact(t *testing.T) {
	quickstart := `[
  {"resource": "GET /orders", "grade": 1, "count": 20, "limitApp": "default", "strategy": 0, "controlBehavior": 0},
  {"resource": "POST /orders", "grade": 1, "count": 5, "controlBehavior": 2, "maxQueueingTimeMs": 100},
  {"resource": "GET /inventory", "grade": 0, "count": 2}
]`
	assert.Equal(t, `[
  {"resource":"GET /orders","count":20},
  {"resource":"POST /orders","count":5,"controlBehavior":2,"maxQueueingTimeMs":100},
  {"resource":"GET /inventory","grade":0,"count":2}
]
`, compactOf(t, converter.FlowRules(), quickstart))

	// Nested objects keep only what differs from their own defaults; a
	// field a rule must have stays.
	assert.Equal(t, "[\n  {\"resource\":\"a\",\"count\":1,\"clusterMode\":true,\"clusterConfig\":{\"flowId\":7,\"thresholdType\":1}}\n]\n",
		compactOf(t, converter.FlowRules(), `[{"resource":"a","count":1,"clusterMode":true,"clusterConfig":{"flowId":7,"thresholdType":1,"sampleCount":10}}]`))
	assert.Equal(t, "[\n  {\"resource\":\"a\",\"paramIdx\":0,\"count\":3}\n]\n",
		compactOf(t, converter.HotspotRules(), `[{"resource":"a","paramIdx":0,"count":3,"durationInSec":1}]`))
	assert.Equal(t, "[\n  {\"qps\":100}\n]\n", compactOf(t, converter.SystemRules(), `[{"qps":100,"avgRt":-1}]`))
	assert.Equal(t, "[\n  {\"resource\":\"a\",\"count\":5,\"timeWindow\":10}\n]\n",
		compactOf(t, converter.CircuitBreakerRules(), `[{"resource":"a","grade":0,"count":5,"timeWindow":10,"minRequestAmount":5}]`))
	assert.Equal(t, "[]\n", compactOf(t, converter.FlowRules(), `[]`))

	// A rule set leaves out the kinds without rules.
	assert.Equal(t, "{\n  \"degrade\": [\n    {\"resource\":\"a\",\"grade\":2,\"count\":3,\"timeWindow\":1}\n  ]\n}\n",
		compactOf(t, converter.RuleSet(), `{"flow":[],"degrade":[{"resource":"a","grade":2,"count":3,"timeWindow":1}]}`))
	assert.Equal(t, "{}\n", compactOf(t, converter.RuleSet(), `{"flow":[]}`))

	// Values from Go: zero fields are the defaults.
	out, err := codec.EncodeCompact(converter.FlowRules(), []flow.Rule{{Resource: "r", Count: 2, Shadow: true}})
	require.NoError(t, err)
	assert.Equal(t, "[\n  {\"resource\":\"r\",\"count\":2,\"shadow\":true}\n]\n", string(out))
}
