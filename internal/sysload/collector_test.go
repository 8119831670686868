package sysload

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCPUUsageArithmetic(t *testing.T) {
	t0 := time.Unix(1000, 0)
	nan := math.NaN()
	sample := func(at time.Duration, busy, all, proc, cg float64) cpuSample {
		return cpuSample{wall: t0.Add(at), hostBusy: busy, hostAll: all, proc: proc, cgroup: cg, start: t0.Add(-10 * time.Second)}
	}
	for _, tc := range []struct {
		name           string
		prev           *cpuSample
		cur            cpuSample
		cores, cgCores float64
		want           float64
	}{
		{"first call: machine since boot", nil, sample(0, 25, 100, 0, nan), 4, nan, 0.25},
		{"first call: process since start, higher", nil, sample(0, 10, 100, 20, nan), 4, nan, 0.5}, // 20 s over 10 s on 4 cores
		{"machine over the interval", &cpuSample{wall: t0, hostBusy: 100, hostAll: 400, proc: 0, cgroup: nan},
			sample(time.Second, 160, 480, 0, nan), 4, nan, 0.75}, // 60 busy of 80
		{"cgroup time over its limit", &cpuSample{wall: t0, hostBusy: 0, hostAll: 0, proc: 0, cgroup: 5},
			sample(2*time.Second, 0, 0, 0, 5.5), 4, 0.5, 0.5}, // 0.5 s in 2 s over half a core
		{"cgroup limit without a cgroup time: machine's", &cpuSample{wall: t0, hostBusy: 0, hostAll: 100, proc: 0, cgroup: nan},
			sample(time.Second, 10, 200, 0, nan), 4, 0.5, 0.1},
		{"process higher than machine", &cpuSample{wall: t0, hostBusy: 0, hostAll: 100, proc: 1, cgroup: nan},
			sample(time.Second, 10, 200, 3, nan), 4, nan, 0.5}, // 2 s in 1 s over 4 cores
		{"clamped to 1", &cpuSample{wall: t0, hostBusy: 0, hostAll: 100, proc: 0, cgroup: nan},
			sample(time.Second, 10, 200, 8, nan), 4, nan, 1},
		{"no interval and no counters", &cpuSample{wall: t0, hostBusy: nan, hostAll: nan, proc: nan, cgroup: nan},
			cpuSample{wall: t0, hostBusy: nan, hostAll: nan, proc: nan, cgroup: nan}, 4, nan, nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cpuUsage(tc.prev, tc.cur, tc.cores, tc.cgCores)
			if math.IsNaN(tc.want) {
				assert.True(t, math.IsNaN(got), "got %v", got)
				return
			}
			assert.InDelta(t, tc.want, got, 1e-9)
		})
	}
}

// A cgroup v1 tree in a fixture: cpu and cpuacct co-mounted, the smallest
// CFS limit on the path wins, usage from cpuacct.usage (nanoseconds).
func TestResolveCgroupV1(t *testing.T) {
	root := t.TempDir()
	mount := filepath.Join(root, "cpu,cpuacct")
	require.NoError(t, os.MkdirAll(filepath.Join(mount, "svc", "pod"), 0o755))
	must := func(path, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(mount, path), []byte(data), 0o644))
	}
	must("svc/cpu.cfs_quota_us", "150000\n")
	must("svc/cpu.cfs_period_us", "100000\n")
	must("svc/pod/cpu.cfs_quota_us", "-1\n")
	must("svc/pod/cpu.cfs_period_us", "100000\n")
	must("svc/pod/cpuacct.usage", "2500000000\n")
	g := resolveCgroup(root, []procfs.Cgroup{{HierarchyID: 3, Controllers: []string{"cpu", "cpuacct"}, Path: "/svc/pod"}})
	require.NotNil(t, g)
	assert.Equal(t, 1.5, g.cores)
	assert.False(t, g.v2)
	u, err := g.usage()
	require.NoError(t, err)
	assert.Equal(t, 2.5, u)

	// Without a cpu controller, or without any limit, there is none.
	assert.Nil(t, resolveCgroup(root, []procfs.Cgroup{{HierarchyID: 4, Controllers: []string{"memory"}, Path: "/svc"}}))
	must("svc/cpu.cfs_quota_us", "-1\n")
	assert.Nil(t, resolveCgroup(root, []procfs.Cgroup{{HierarchyID: 3, Controllers: []string{"cpu", "cpuacct"}, Path: "/svc/pod"}}))
}
