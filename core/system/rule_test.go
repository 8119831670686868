package system

import (
	"math"
	"strings"
	"testing"

	"github.com/bulwark-go/bulwark/core/rule"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unset is a rule with every threshold written as Java's -1.
func unset() Rule {
	return Rule{HighestSystemLoad: Unset, HighestCPUUsage: Unset, QPS: Unset, AvgRT: Unset, MaxThread: Unset}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Rule)
		want []string
	}{
		{"load", func(r *Rule) { r.HighestSystemLoad = 8 }, nil},
		{"cpu", func(r *Rule) { r.HighestCPUUsage = 0.8 }, nil},
		{"cpu one", func(r *Rule) { r.HighestCPUUsage = 1 }, nil},
		{"qps", func(r *Rule) { r.QPS = 1000 }, nil},
		{"avg rt", func(r *Rule) { r.AvgRT = 20 }, nil},
		{"max thread", func(r *Rule) { r.MaxThread = 100 }, nil},
		{"several", func(r *Rule) { r.QPS, r.MaxThread = 10, 5 }, nil},
		{"any negative is unset", func(r *Rule) { r.QPS, r.AvgRT, r.MaxThread = -3, -2, 9 }, nil},
		{"nothing set", func(*Rule) {}, []string{"rule sets no threshold"}},
		{"all -1 sets nothing", func(r *Rule) { *r = unset() }, []string{"rule sets no threshold"}},
		{"cpu above 1", func(r *Rule) { r.HighestCPUUsage = 80 }, []string{"highestCpuUsage: must be a ratio in (0, 1]"}},
		{"cpu other negative", func(r *Rule) { r.HighestCPUUsage = -0.5 }, []string{"highestCpuUsage"}},
		{"cpu NaN", func(r *Rule) { r.HighestCPUUsage = math.NaN() }, []string{"highestCpuUsage"}},
		{"load NaN", func(r *Rule) { r.HighestSystemLoad = math.NaN() }, []string{"highestSystemLoad: must be a finite number"}},
		{"qps inf", func(r *Rule) { r.QPS = math.Inf(1) }, []string{"qps: must be a finite number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Rule // every threshold unset
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

func TestWithDefaults(t *testing.T) {
	assert.Equal(t, Rule{HighestSystemLoad: Unset, HighestCPUUsage: 0.8, QPS: Unset, AvgRT: Unset, MaxThread: Unset},
		Rule{HighestCPUUsage: 0.8}.WithDefaults(), "a threshold left at 0 is unset, as Java's -1")
	r := Rule{HighestSystemLoad: 4, HighestCPUUsage: -1, QPS: -2, AvgRT: 3, MaxThread: 7}
	assert.Equal(t, r, r.WithDefaults(), "set and negative thresholds are kept")
}

func TestWholeRuleProblemHasNoField(t *testing.T) {
	fields := rule.Fields(Rule{}.Validate())
	require.Len(t, fields, 1)
	assert.Empty(t, fields[0].Field)
	assert.Equal(t, "rule sets no threshold: set at least one of highestSystemLoad, highestCpuUsage, qps, avgRt, maxThread", fields[0].Error())
}
