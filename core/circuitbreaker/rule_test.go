package circuitbreaker

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/rule"
)

func valid() Rule {
	return Rule{Resource: "r", LimitApp: "default", Grade: SlowRequestRatio, Count: 100, TimeWindow: 10,
		MinRequestAmount: 5, SlowRatioThreshold: 0.5, StatIntervalMs: 1000}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Rule)
		want []string // substrings, one per problem; none means valid
	}{
		{"valid slow ratio", func(*Rule) {}, nil},
		{"valid error ratio", func(r *Rule) { r.Grade, r.Count = ErrorRatio, 0.3 }, nil},
		{"valid error count", func(r *Rule) { r.Grade, r.Count = ErrorCount, 30 }, nil},
		{"valid avg rt", func(r *Rule) { r.Grade, r.RTSlowRequestAmount = AvgRT, 3 }, nil},
		{"blank resource", func(r *Rule) { r.Resource = " " }, []string{"resource: must not be empty"}},
		{"negative count", func(r *Rule) { r.Count = -1 }, []string{"count: must be >= 0"}},
		{"NaN count", func(r *Rule) { r.Count = math.NaN() }, []string{"count: must be a finite number"}},
		{"inf count", func(r *Rule) { r.Count = math.Inf(1) }, []string{"count: must be a finite number"}},
		{"error ratio above 1", func(r *Rule) { r.Grade, r.Count = ErrorRatio, 1.5 }, []string{"count: must be a ratio in [0, 1]"}},
		{"zero time window", func(r *Rule) { r.TimeWindow = 0 }, []string{"timeWindow: must be > 0"}},
		{"zero min request amount is Java's 5", func(r *Rule) { r.MinRequestAmount = 0 }, nil},
		{"zero stat interval is Java's 1000", func(r *Rule) { r.StatIntervalMs = 0 }, nil},
		{"zero slow ratio is Java's 1.0", func(r *Rule) { r.SlowRatioThreshold = 0 }, nil},
		{"negative min request amount", func(r *Rule) { r.MinRequestAmount = -1 }, []string{"minRequestAmount: must be > 0"}},
		{"negative stat interval", func(r *Rule) { r.StatIntervalMs = -1 }, []string{"statIntervalMs: must be > 0"}},
		{"slow ratio below 0", func(r *Rule) { r.SlowRatioThreshold = -0.1 }, []string{"slowRatioThreshold: must be a ratio in [0, 1]"}},
		{"slow ratio above 1", func(r *Rule) { r.SlowRatioThreshold = 1.1 }, []string{"slowRatioThreshold: must be a ratio in [0, 1]"}},
		{"slow ratio NaN", func(r *Rule) { r.SlowRatioThreshold = math.NaN() }, []string{"slowRatioThreshold"}},
		{"slow ratio ignored for error count", func(r *Rule) { r.Grade, r.SlowRatioThreshold = ErrorCount, 7 }, nil},
		{"unknown grade", func(r *Rule) { r.Grade = 3 }, []string{"grade: must be 0 (slowRequestRatio), 1 (errorRatio), 2 (errorCount) or 100 (avgRt), got 3"}},
		{"negative rt slow amount", func(r *Rule) { r.RTSlowRequestAmount = -1 }, []string{"rtSlowRequestAmount: must be >= 0"}},
		{"zero value needs a resource and a time window", func(r *Rule) { *r = Rule{} }, []string{"resource", "timeWindow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid()
			tt.edit(&r)
			err := r.Validate()
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			fields := rule.Fields(err)
			require.Len(t, fields, len(tt.want), "problems: %v", err)
			for i, w := range tt.want {
				assert.Contains(t, fields[i].Error(), w)
				assert.True(t, strings.HasPrefix(w, fields[i].Field), "field %q of %q", fields[i].Field, w)
			}
		})
	}
}

func TestGradeString(t *testing.T) {
	assert.Equal(t, "slowRequestRatio", SlowRequestRatio.String())
	assert.Equal(t, "errorRatio", ErrorRatio.String())
	assert.Equal(t, "errorCount", ErrorCount.String())
	assert.Equal(t, "avgRt", AvgRT.String())
	assert.Equal(t, "Grade(7)", Grade(7).String())
}

func TestWithDefaults(t *testing.T) {
	r := Rule{Resource: "r", Grade: ErrorRatio, Count: 0.5, TimeWindow: 10}
	require.NoError(t, r.Validate(), "a Go rule that leaves Java's defaulted fields out is valid")
	assert.Equal(t, Rule{Resource: "r", LimitApp: "default", Grade: ErrorRatio, Count: 0.5, TimeWindow: 10,
		MinRequestAmount: 5, SlowRatioThreshold: 1, StatIntervalMs: 1000, RTSlowRequestAmount: 5}, r.WithDefaults())
	assert.Equal(t, r.WithDefaults(), r.WithDefaults().WithDefaults(), "idempotent")
	set := Rule{Resource: "r", LimitApp: "app", TimeWindow: 1, MinRequestAmount: 2, SlowRatioThreshold: 0.25, StatIntervalMs: 3, RTSlowRequestAmount: 4}
	assert.Equal(t, set, set.WithDefaults(), "set fields are kept")
}
