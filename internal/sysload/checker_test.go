package sysload

import (
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// unset is a rule with every threshold written as Java's -1.
func unset() system.Rule {
	return system.Rule{HighestSystemLoad: system.Unset, HighestCPUUsage: system.Unset, QPS: system.Unset, AvgRT: system.Unset, MaxThread: system.Unset}
}

func TestCombineTakesTheMinimumPerField(t *testing.T) {
	a, b, c := unset(), unset(), unset()
	a.QPS, a.HighestSystemLoad = 100, 8
	b.QPS, b.MaxThread = 50, 20
	c.HighestSystemLoad, c.HighestCPUUsage, c.AvgRT = 4, 0.9, 30
	l := Combine([]system.Rule{a, b, c})
	assert.Equal(t, 50.0, l.QPS)
	assert.Equal(t, int64(20), l.MaxThread)
	assert.Equal(t, 4.0, l.HighestSystemLoad)
	assert.Equal(t, 0.9, l.HighestCPUUsage)
	assert.Equal(t, int64(30), l.AvgRT)
	assert.Equal(t, 1, l.From[MetricQPS])
	assert.Equal(t, 2, l.From[MetricLoad])
	assert.True(t, l.NeedsCollector())

	l = Combine([]system.Rule{b})
	assert.Equal(t, float64(system.Unset), l.HighestSystemLoad)
	assert.Equal(t, -1, l.From[MetricLoad])
	assert.False(t, l.NeedsCollector())
}

func TestCheck(t *testing.T) {
	now := mono.FromMillis(10_000)
	type setup func(n *stat.Node)
	pass := func(k int) setup {
		return func(n *stat.Node) {
			for range k {
				n.AddPass(now, 1, 0)
			}
		}
	}
	complete := func(k int, rt int64) setup {
		return func(n *stat.Node) {
			for range k {
				n.AddCompletion(now, 1, time.Duration(rt)*time.Millisecond, false, 0)
			}
		}
	}
	tests := []struct {
		name      string
		edit      func(*system.Rule)
		setup     []setup
		load, cpu float64
		want      Metric
	}{
		{"qps below", func(r *system.Rule) { r.QPS = 10 }, []setup{pass(9), complete(9, 1)}, 0, 0, MetricNone},
		{"qps reached", func(r *system.Rule) { r.QPS = 10 }, []setup{pass(10), complete(10, 1)}, 0, 0, MetricQPS},
		{"threads at max", func(r *system.Rule) { r.MaxThread = 3 }, []setup{pass(3)}, 0, 0, MetricNone},
		{"threads above max", func(r *system.Rule) { r.MaxThread = 3 }, []setup{pass(4)}, 0, 0, MetricThread},
		{"avg rt above", func(r *system.Rule) { r.AvgRT = 50 }, []setup{pass(2), complete(2, 60)}, 0, 0, MetricAvgRT},
		{"avg rt at", func(r *system.Rule) { r.AvgRT = 50 }, []setup{pass(2), complete(2, 50)}, 0, 0, MetricNone},
		{"cpu above", func(r *system.Rule) { r.HighestCPUUsage = 0.8 }, nil, 0, 0.81, MetricCPU},
		{"cpu at", func(r *system.Rule) { r.HighestCPUUsage = 0.8 }, nil, 0, 0.8, MetricNone},
		{"cpu unknown", func(r *system.Rule) { r.HighestCPUUsage = 0.8 }, nil, 0, math.NaN(), MetricNone},
		{"load high, one call in flight (BBR passes)", func(r *system.Rule) { r.HighestSystemLoad = 2 },
			[]setup{pass(1)}, 5, 0, MetricNone},
		{"load high, nothing completed: capacity 0 × 4900 ms", func(r *system.Rule) { r.HighestSystemLoad = 2 },
			[]setup{pass(3)}, 5, 0, MetricLoad},
		{"load high, concurrency above capacity", func(r *system.Rule) { r.HighestSystemLoad = 2 },
			// 20 completed in one 500 ms bucket: max 40/s; min rt 10 ms:
			// capacity 0.4; 3 in flight.
			[]setup{pass(23), complete(20, 10)}, 5, 0, MetricLoad},
		{"load normal, concurrency above capacity", func(r *system.Rule) { r.HighestSystemLoad = 2 },
			[]setup{pass(23), complete(20, 10)}, 1.5, 0, MetricNone},
		{"load unknown", func(r *system.Rule) { r.HighestSystemLoad = 2 },
			[]setup{pass(23), complete(20, 10)}, math.NaN(), 0, MetricNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := unset()
			tt.edit(&r)
			require.NoError(t, r.Validate())
			n := stat.NewNode(1)
			for _, s := range tt.setup {
				s(n)
			}
			l := Combine([]system.Rule{r})
			got := l.Check(Sample{Inbound: n, Now: now, Load1: tt.load, CPU: tt.cpu, DefaultMinRT: 4900 * time.Millisecond}, 1)
			assert.Equal(t, tt.want, got, got.String())
		})
	}
}

func TestBBR(t *testing.T) {
	assert.True(t, BBR(1, 0, 0), "one call in flight always passes")
	assert.True(t, BBR(10, 1000, 10*time.Millisecond), "10 in flight, capacity 10")
	assert.False(t, BBR(11, 1000, 10*time.Millisecond))
	assert.True(t, BBR(10, 1000, 10*time.Millisecond+999*time.Microsecond), "min rt counts in whole ms, as Java's")
	assert.True(t, BBR(0, 0, 0))
}

func TestParseCgroupFiles(t *testing.T) {
	_, ok, err := ParseCPUMax("max 100000\n")
	require.NoError(t, err)
	assert.False(t, ok)
	c, ok, err := ParseCPUMax("150000 100000\n")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 1.5, c)
	_, _, err = ParseCPUMax("x 1")
	assert.Error(t, err)

	_, ok, err = ParseCFS("-1\n", "100000\n")
	require.NoError(t, err)
	assert.False(t, ok)
	c, ok, err = ParseCFS("50000\n", "100000\n")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 0.5, c)

	u, err := parseCPUStatUsage("usage_usec 2500000\nuser_usec 1\n")
	require.NoError(t, err)
	assert.Equal(t, 2.5, u)
}

// A cgroup v2 tree in a fixture: the smallest limit on the path wins.
func TestResolveCgroupV2(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(root+"/a/b", 0o755))
	must := func(path, data string) { require.NoError(t, os.WriteFile(root+"/"+path, []byte(data), 0o644)) }
	must("cgroup.controllers", "cpu")
	must("a/cpu.max", "50000 100000\n")
	must("a/b/cpu.max", "max 100000\n")
	must("a/b/cpu.stat", "usage_usec 1000000\n")
	g := resolveCgroup(root, []procfs.Cgroup{{HierarchyID: 0, Path: "/a/b"}})
	require.NotNil(t, g)
	assert.Equal(t, 0.5, g.cores)
	u, err := g.usage()
	require.NoError(t, err)
	assert.Equal(t, 1.0, u)
}

// The collector reads this machine's /proc and cgroup files.
func TestProcCollectorReadsThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	c := NewCollector()
	l, err := c.Load1()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, l, 0.0)
	assert.Less(t, l, 10_000.0)
	for range 3 {
		u, err := c.CPUUsage()
		require.NoError(t, err)
		assert.GreaterOrEqual(t, u, 0.0)
		assert.LessOrEqual(t, u, 1.0)
		x := 0
		for i := range 5_000_000 { // burn a little CPU between samples
			x += i
		}
		_ = x
	}
	if cores, ok := c.CPULimit(); ok {
		t.Logf("cgroup cpu limit: %g cores", cores)
		assert.Greater(t, cores, 0.0)
	} else {
		t.Log("no cgroup cpu limit")
	}
}

func TestProcCollectorMissingFiles(t *testing.T) {
	c := NewCollectorAt(t.TempDir(), t.TempDir())
	_, err := c.Load1()
	assert.Error(t, err)
	_, err = c.CPUUsage()
	assert.Error(t, err)
}
