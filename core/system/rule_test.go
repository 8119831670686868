package system

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		{"zero value", func(r *Rule) { *r = Rule{} }, []string{
			"highestSystemLoad: must not be 0", "highestCpuUsage: must be a ratio in (0, 1], or -1",
			"qps: must not be 0", "avgRt: must not be 0", "maxThread: must not be 0"}},
		{"zero says use -1", func(r *Rule) { r.QPS = 0 }, []string{"qps: must not be 0, which would block all inbound traffic; use -1 to leave it unset"}},
		{"cpu above 1", func(r *Rule) { r.HighestCPUUsage = 80 }, []string{"highestCpuUsage: must be a ratio in (0, 1]"}},
		{"cpu other negative", func(r *Rule) { r.HighestCPUUsage = -0.5 }, []string{"highestCpuUsage"}},
		{"cpu NaN", func(r *Rule) { r.HighestCPUUsage = math.NaN() }, []string{"highestCpuUsage"}},
		{"load NaN", func(r *Rule) { r.HighestSystemLoad = math.NaN() }, []string{"highestSystemLoad: must be a finite number"}},
		{"qps inf", func(r *Rule) { r.QPS = math.Inf(1) }, []string{"qps: must be a finite number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := unset()
			tt.edit(&r)
			err := r.Validate()
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
