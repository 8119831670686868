package hotspot

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/rule"
)

func valid() Rule {
	return Rule{Resource: "r", LimitApp: "default", Grade: flow.GradeQPS, ParamIdx: 0, Count: 10, DurationInSec: 1,
		ParamFlowItemList: []ParamFlowItem{{Object: "42", Count: 100, ClassType: "int"}}}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Rule)
		want []string
	}{
		{"valid", func(*Rule) {}, nil},
		{"thread grade, negative index", func(r *Rule) { r.Grade, r.ParamIdx = flow.GradeThread, -1 }, nil},
		{"rate limiter", func(r *Rule) { r.ControlBehavior, r.MaxQueueingTimeMs = flow.RateLimiter, 100 }, nil},
		{"cluster", func(r *Rule) { r.ClusterMode, r.ClusterConfig.FlowID = true, 7 }, nil},
		{"blank resource", func(r *Rule) { r.Resource = "" }, []string{"resource: must not be empty"}},
		{"bad grade", func(r *Rule) { r.Grade = 2 }, []string{"grade: must be GradeQPS or GradeThread, got Grade(2)"}},
		{"negative count", func(r *Rule) { r.Count = -1 }, []string{"count: must be >= 0"}},
		{"NaN count", func(r *Rule) { r.Count = math.NaN() }, []string{"count: must be a finite number"}},
		{"warm-up behavior", func(r *Rule) { r.ControlBehavior = 1 }, []string{"controlBehavior: must be 0 (reject) or 2 (rateLimiter), got 1"}},
		{"negative queueing", func(r *Rule) { r.MaxQueueingTimeMs = -1 }, []string{"maxQueueingTimeMs: must be >= 0"}},
		{"negative burst", func(r *Rule) { r.BurstCount = -1 }, []string{"burstCount: must be >= 0"}},
		{"zero duration is Java's 1", func(r *Rule) { r.DurationInSec = 0 }, nil},
		{"negative duration", func(r *Rule) { r.DurationInSec = -1 }, []string{"durationInSec: must be > 0"}},
		{"item object not int", func(r *Rule) { r.ParamFlowItemList[0].Object = "x" }, []string{`paramFlowItemList[0].object: "x" is not a 32-bit integer (int)`}},
		{"item negative count", func(r *Rule) { r.ParamFlowItemList[0].Count = -2 }, []string{"paramFlowItemList[0].count: must be >= 0"}},
		{"item unknown class", func(r *Rule) { r.ParamFlowItemList[0].ClassType = "java.util.Date" }, []string{"unknown class type"}},
		{"cluster without flow id", func(r *Rule) { r.ClusterMode = true }, []string{"clusterConfig.flowId: must be > 0"}},
		{"zero value needs a resource", func(r *Rule) { *r = Rule{} }, []string{"resource"}},
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
			}
		})
	}
}

// TestFlowEnums: the rule takes flow's grades and behaviors, but not the
// warm-up ones, which Java's param flow does not have.
func TestFlowEnums(t *testing.T) {
	for _, b := range []flow.ControlBehavior{flow.Reject, flow.RateLimiter} {
		assert.NoError(t, Rule{Resource: "r", Count: 1, ControlBehavior: b}.Validate(), b)
	}
	for _, b := range []flow.ControlBehavior{flow.WarmUp, flow.WarmUpRateLimiter} {
		require.ErrorContains(t, Rule{Resource: "r", Count: 1, ControlBehavior: b}.Validate(), "controlBehavior", b)
	}
}

func TestWithDefaults(t *testing.T) {
	r := Rule{Resource: "r", Count: 5}
	require.NoError(t, r.Validate())
	assert.Equal(t, Rule{Resource: "r", LimitApp: "default", Grade: flow.GradeQPS, Count: 5, DurationInSec: 1}, r.WithDefaults())
	c := Rule{Resource: "r", ClusterMode: true, ClusterConfig: ClusterConfig{FlowID: 3}}.WithDefaults()
	assert.Equal(t, ClusterConfig{FlowID: 3, SampleCount: 10, WindowIntervalMs: 1000}, c.ClusterConfig, "a config's zero fields are Java's defaults")
	assert.Equal(t, c, c.WithDefaults(), "idempotent")
}

func TestItemProblemKeepsItsCause(t *testing.T) {
	r := valid()
	r.ParamFlowItemList[0].Object = "x"
	fe, ok := errors.AsType[*rule.FieldError](r.Validate())
	require.True(t, ok)
	assert.Equal(t, "paramFlowItemList[0].object", fe.Field)
	_, isNum := errors.AsType[*strconv.NumError](fe)
	assert.False(t, isNum, "Parse reports its own message")
	assert.Equal(t, `"x" is not a 32-bit integer (int)`, fe.Err.Error())
}
