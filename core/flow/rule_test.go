package flow

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/rule"
)

func TestValidate(t *testing.T) {
	ok := Rule{Resource: "r", Grade: GradeQPS, Count: 10}
	tests := []struct {
		name string
		mod  func(*Rule)
		want []string
	}{
		{"valid", func(*Rule) {}, nil},
		{"empty resource", func(r *Rule) { r.Resource = " " }, []string{"resource: must not be empty"}},
		{"negative count", func(r *Rule) { r.Count = -1 }, []string{"count: must be >= 0"}},
		{"NaN count", func(r *Rule) { r.Count = math.NaN() }, []string{"count: must be a finite number"}},
		{"bad grade", func(r *Rule) { r.Grade = 7 }, []string{"grade: must be GradeQPS or GradeThread, got Grade(7)"}},
		{"relate without ref", func(r *Rule) { r.Strategy = Relate }, []string{"refResource: must name a resource for strategy relate"}},
		{"chain without ref", func(r *Rule) { r.Strategy = Chain }, []string{"refResource: must name a context for strategy chain"}},
		{"bad strategy", func(r *Rule) { r.Strategy = 3 }, []string{"strategy: must be 0 (direct), 1 (relate) or 2 (chain), got 3"}},
		{"warm up without period is Java's 10 s", func(r *Rule) { r.ControlBehavior = WarmUp }, nil},
		{"rate limiter without queue is Java's 500 ms", func(r *Rule) { r.ControlBehavior = RateLimiter }, nil},
		{"negative durations", func(r *Rule) { r.ControlBehavior, r.WarmUpPeriodSec, r.MaxQueueingTimeMs = WarmUpRateLimiter, -1, -1 }, []string{"warmUpPeriodSec: must be >= 0", "maxQueueingTimeMs: must be >= 0"}},
		{"thread grade ignores behavior fields", func(r *Rule) { r.Grade = GradeThread; r.ControlBehavior = WarmUp }, nil},
		{"bad behavior", func(r *Rule) { r.ControlBehavior = 9 }, []string{"controlBehavior: must be 0 (reject), 1 (warmUp), 2 (rateLimiter) or 3 (warmUpRateLimiter), got 9"}},
		{"cluster without flow id", func(r *Rule) { r.ClusterMode = true }, []string{"clusterConfig.flowId: must be > 0 in cluster mode"}},
		{"many at once", func(r *Rule) { r.Resource = ""; r.Count = -2 }, []string{"resource: must not be empty", "count: must be >= 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.mod(&r)
			err := r.Validate()
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var got []string
			for _, fe := range rule.Fields(err) {
				got = append(got, fe.Error())
				assert.NotEmpty(t, fe.Field)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEnumStrings(t *testing.T) {
	assert.Equal(t, "QPS", GradeQPS.String())
	assert.Equal(t, "thread", GradeThread.String())
	assert.Equal(t, "chain", Chain.String())
	assert.Equal(t, "warmUpRateLimiter", WarmUpRateLimiter.String())
	assert.Equal(t, "Grade(5)", Grade(5).String())
}

func TestZeroValuesAreJavaDefaults(t *testing.T) {
	r := Rule{Resource: "r", Count: 2}
	require.NoError(t, r.Validate())
	assert.Equal(t, GradeQPS, r.Grade, "the zero Grade is QPS, as a document that leaves grade out")
	assert.Equal(t, Rule{Resource: "r", LimitApp: "default", Grade: GradeQPS, Count: 2, WarmUpPeriodSec: 10, MaxQueueingTimeMs: 500}, r.WithDefaults())
	assert.Equal(t, r.WithDefaults(), r.WithDefaults().WithDefaults(), "idempotent")
	c := Rule{Resource: "r", ClusterMode: true, ClusterConfig: ClusterConfig{FlowID: 1}}.WithDefaults().ClusterConfig
	assert.Equal(t, ClusterConfig{FlowID: 1, SampleCount: 10, WindowIntervalMs: 1000, ResourceTimeout: 2000, ClientOfflineTime: 2000}, c)
	assert.Equal(t, ClusterConfig{}, Rule{Resource: "r"}.WithDefaults().ClusterConfig, "no config stays none (Java's null)")
}
