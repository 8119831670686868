package sysload

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// ProcCollector is the [Collector] of Linux: load1 from /proc/loadavg, and
// CPU usage as the larger of the system's and the process's, where
//
//   - the system's is the container's when its cgroup limits CPU (cgroup
//     v2 cpu.max, or v1 cpu.cfs_quota_us / cpu.cfs_period_us, the smallest
//     limit on the path to the root): the cgroup's CPU time (v2 cpu.stat
//     usage_usec, v1 cpuacct.usage) over the limit; else the machine's,
//     from /proc/stat;
//   - the process's is its CPU time (/proc/self/stat) over the cores it
//     may use: the CPU count, or the cgroup limit when smaller.
//
// Like Java's SystemStatusListener, it reports whichever is higher, so a
// busy process in an idle container, or a busy container on an idle
// machine, both count. Create one with [NewCollector].
type ProcCollector struct {
	procRoot, cgroupRoot string

	mu     sync.Mutex
	fs     *procfs.FS
	cg     *cgroupCPU
	cgDone bool
	prev   cpuSample
	primed bool
}

type cpuSample struct {
	wall              time.Time
	hostBusy, hostAll float64   // seconds, summed over CPUs
	proc              float64   // process CPU seconds
	start             time.Time // when the process started, if known
	cgroup            float64   // cgroup CPU seconds, or NaN
}

// NewCollector returns a collector reading /proc and /sys/fs/cgroup.
func NewCollector() *ProcCollector { return NewCollectorAt("/proc", "/sys/fs/cgroup") }

// NewCollectorAt returns a collector reading the proc file system mounted
// at procRoot and the cgroup file systems under cgroupRoot (tests point
// them at fixtures). Nothing is read until the first call.
func NewCollectorAt(procRoot, cgroupRoot string) *ProcCollector {
	return &ProcCollector{procRoot: procRoot, cgroupRoot: cgroupRoot}
}

func (c *ProcCollector) procFS() (*procfs.FS, error) {
	if c.fs == nil {
		fs, err := procfs.NewFS(c.procRoot)
		if err != nil {
			return nil, fmt.Errorf("system: %w", err)
		}
		c.fs = &fs
	}
	return c.fs, nil
}

// Load1 returns the 1-minute load average from loadavg.
func (c *ProcCollector) Load1() (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fs, err := c.procFS()
	if err != nil {
		return 0, err
	}
	l, err := fs.LoadAvg()
	if err != nil {
		return 0, fmt.Errorf("system: reading load average: %w", err)
	}
	return l.Load1, nil
}

// CPULimit returns the number of cores the process's cgroup allows, and
// false when no cgroup limit applies (or none can be read).
func (c *ProcCollector) CPULimit() (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cg := c.cgroup()
	if cg == nil {
		return 0, false
	}
	return cg.cores, true
}

// CPUUsage returns the CPU usage since the previous call (the first call:
// the machine's since boot, or the process's since it started, whichever is
// higher), in [0, 1].
func (c *ProcCollector) CPUUsage() (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fs, err := c.procFS()
	if err != nil {
		return 0, err
	}
	s, errs := readSample(fs, time.Now())
	cores := float64(runtime.NumCPU())
	cgCores := math.NaN()
	if cg := c.cgroup(); cg != nil {
		cores, cgCores = min(cores, cg.cores), cg.cores
		if u, err := cg.usage(); err == nil {
			s.cgroup = u
		}
	}
	var prev *cpuSample
	if c.primed {
		prev = &c.prev
	}
	u := cpuUsage(prev, s, cores, cgCores)
	c.prev, c.primed = s, true
	if math.IsNaN(u) {
		if len(errs) == 0 {
			return 0, errors.New("system: cpu usage: no interval measured yet")
		}
		return 0, fmt.Errorf("system: cpu usage: %w", errors.Join(errs...))
	}
	return u, nil
}

// readSample reads the machine's and the process's CPU times at wall; what
// cannot be read is NaN, with its error.
func readSample(fs *procfs.FS, wall time.Time) (cpuSample, []error) {
	s := cpuSample{wall: wall, hostBusy: math.NaN(), hostAll: math.NaN(), proc: math.NaN(), cgroup: math.NaN()}
	var errs []error
	if st, err := fs.Stat(); err == nil {
		t := st.CPUTotal
		s.hostAll = t.User + t.Nice + t.System + t.Idle + t.Iowait + t.IRQ + t.SoftIRQ + t.Steal
		s.hostBusy = s.hostAll - t.Idle - t.Iowait
	} else {
		errs = append(errs, fmt.Errorf("reading cpu statistics: %w", err))
	}
	p, err := fs.Self()
	var ps procfs.ProcStat
	if err == nil {
		ps, err = p.Stat()
	}
	if err != nil {
		return s, append(errs, fmt.Errorf("reading process statistics: %w", err))
	}
	s.proc = ps.CPUTime()
	if st, err := ps.StartTime(); err == nil {
		s.start = time.Unix(0, int64(st*1e9))
	}
	return s, errs
}

// cpuUsage is the arithmetic of CPUUsage: the larger of the system's and
// the process's usage from prev to cur, in [0, 1], or NaN when neither can
// be told. Without prev (the first call) they are the machine's since boot
// and the process's since it started. The system's is the cgroup's over
// cgCores (its limit; NaN: no limit) when both samples have the cgroup's
// time, else the machine's; the process's is over cores.
func cpuUsage(prev *cpuSample, cur cpuSample, cores, cgCores float64) float64 {
	system, process := math.NaN(), math.NaN()
	if prev == nil {
		system = cur.hostBusy / cur.hostAll
		if !cur.start.IsZero() {
			process = cur.proc / cur.wall.Sub(cur.start).Seconds() / cores
		}
	} else {
		wall := cur.wall.Sub(prev.wall).Seconds()
		if !math.IsNaN(cgCores) && !math.IsNaN(cur.cgroup) && !math.IsNaN(prev.cgroup) && wall > 0 {
			system = (cur.cgroup - prev.cgroup) / wall / cgCores
		} else if d := cur.hostAll - prev.hostAll; d > 0 {
			system = (cur.hostBusy - prev.hostBusy) / d
		}
		if wall > 0 {
			process = (cur.proc - prev.proc) / wall / cores
		}
	}
	u := math.NaN()
	for _, v := range []float64{system, process} {
		if !math.IsNaN(v) && !math.IsInf(v, 0) && (math.IsNaN(u) || v > u) {
			u = v
		}
	}
	if math.IsNaN(u) {
		return u
	}
	return min(max(u, 0), 1)
}

// cgroupCPU is the CPU limit of the process's cgroup and where its usage is
// read.
type cgroupCPU struct {
	cores     float64
	usageFile string
	v2        bool
}

func (g *cgroupCPU) usage() (float64, error) {
	b, err := os.ReadFile(g.usageFile)
	if err != nil {
		return 0, err
	}
	if g.v2 {
		return parseCPUStatUsage(string(b))
	}
	ns, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return 0, fmt.Errorf("system: %s: %w", g.usageFile, err)
	}
	return ns / 1e9, nil
}

// cgroup resolves the process's CPU cgroup once; nil when no limit applies.
func (c *ProcCollector) cgroup() *cgroupCPU {
	if c.cgDone {
		return c.cg
	}
	c.cgDone = true
	fs, err := c.procFS()
	if err != nil {
		return nil
	}
	p, err := fs.Self()
	if err != nil {
		return nil
	}
	groups, err := p.Cgroups()
	if err != nil {
		return nil
	}
	c.cg = resolveCgroup(c.cgroupRoot, groups)
	return c.cg
}

// resolveCgroup finds the CPU limit of the process's cgroup (groups, from
// /proc/self/cgroup) under root, and where its usage is read; nil when no
// limit applies.
func resolveCgroup(root string, groups []procfs.Cgroup) *cgroupCPU {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return resolveV2(root, groups)
	}
	return resolveV1(root, groups)
}

// resolveV2: the unified hierarchy mounted at root; the limit is cpu.max.
func resolveV2(root string, groups []procfs.Cgroup) *cgroupCPU {
	i := slices.IndexFunc(groups, func(g procfs.Cgroup) bool { return g.HierarchyID == 0 })
	if i < 0 {
		return nil
	}
	dir := existing(root, groups[i].Path)
	cores, ok := walkLimit(root, dir, func(d string) (float64, bool) {
		b, err := os.ReadFile(filepath.Join(d, "cpu.max"))
		if err != nil {
			return 0, false
		}
		v, ok, err := ParseCPUMax(string(b))
		return v, ok && err == nil
	})
	if !ok {
		return nil
	}
	return &cgroupCPU{cores: cores, usageFile: filepath.Join(dir, "cpu.stat"), v2: true}
}

// resolveV1: one hierarchy per controller; the limit is the cpu
// controller's CFS quota over its period, the usage cpuacct.usage.
func resolveV1(root string, groups []procfs.Cgroup) *cgroupCPU {
	var cpuPath, acctPath string
	var hasCPU, hasAcct bool
	for _, g := range groups {
		if slices.Contains(g.Controllers, "cpu") {
			cpuPath, hasCPU = g.Path, true
		}
		if slices.Contains(g.Controllers, "cpuacct") {
			acctPath, hasAcct = g.Path, true
		}
	}
	if !hasCPU {
		return nil
	}
	mounts := func(first string) []string {
		return []string{filepath.Join(root, first), filepath.Join(root, "cpu,cpuacct"), filepath.Join(root, "cpuacct,cpu")}
	}
	cpuMount := firstDir(mounts("cpu")...)
	if cpuMount == "" {
		return nil
	}
	dir := existing(cpuMount, cpuPath)
	cores, ok := walkLimit(cpuMount, dir, func(d string) (float64, bool) {
		q, err1 := os.ReadFile(filepath.Join(d, "cpu.cfs_quota_us"))
		p, err2 := os.ReadFile(filepath.Join(d, "cpu.cfs_period_us"))
		if err1 != nil || err2 != nil {
			return 0, false
		}
		v, ok, err := ParseCFS(string(q), string(p))
		return v, ok && err == nil
	})
	if !ok {
		return nil
	}
	g := &cgroupCPU{cores: cores, usageFile: filepath.Join(dir, "cpuacct.usage")}
	if m := firstDir(mounts("cpuacct")...); hasAcct && m != "" {
		g.usageFile = filepath.Join(existing(m, acctPath), "cpuacct.usage")
	}
	return g
}

// existing returns mount/path when it exists, else mount: inside a cgroup
// namespace, /proc/self/cgroup may name a path the mount does not show.
func existing(mount, path string) string {
	d := filepath.Join(mount, path)
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return d
	}
	return mount
}

func firstDir(dirs ...string) string {
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

// walkLimit returns the smallest limit from dir up to root.
func walkLimit(root, dir string, limit func(string) (float64, bool)) (float64, bool) {
	best, found := 0.0, false
	for d := dir; ; d = filepath.Dir(d) {
		if v, ok := limit(d); ok && (!found || v < best) {
			best, found = v, true
		}
		if d == root || len(d) <= len(root) || d == filepath.Dir(d) {
			break
		}
	}
	return best, found
}

// ParseCPUMax reads a cgroup v2 cpu.max ("$MAX $PERIOD", MAX may be "max")
// and returns the cores it allows; ok is false when it sets no limit.
func ParseCPUMax(s string) (cores float64, ok bool, err error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return 0, false, fmt.Errorf("system: cpu.max: malformed %q", s)
	}
	if f[0] == "max" {
		return 0, false, nil
	}
	q, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, false, fmt.Errorf("system: cpu.max: %w", err)
	}
	period := 100000.0
	if len(f) == 2 {
		if period, err = strconv.ParseFloat(f[1], 64); err != nil {
			return 0, false, fmt.Errorf("system: cpu.max: %w", err)
		}
	}
	if q <= 0 || period <= 0 {
		return 0, false, fmt.Errorf("system: cpu.max: malformed %q", s)
	}
	return q / period, true, nil
}

// ParseCFS reads cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us and
// returns the cores they allow; ok is false when the quota is -1 (none).
func ParseCFS(quota, period string) (cores float64, ok bool, err error) {
	q, err := strconv.ParseInt(strings.TrimSpace(quota), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("system: cpu.cfs_quota_us: %w", err)
	}
	if q < 0 {
		return 0, false, nil
	}
	p, err := strconv.ParseInt(strings.TrimSpace(period), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("system: cpu.cfs_period_us: %w", err)
	}
	if q == 0 || p <= 0 {
		return 0, false, fmt.Errorf("system: cfs quota %d / period %d: malformed", q, p)
	}
	return float64(q) / float64(p), true, nil
}

// parseCPUStatUsage returns usage_usec of a cgroup v2 cpu.stat, in seconds.
func parseCPUStatUsage(s string) (float64, error) {
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "usage_usec" {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("system: cpu.stat usage_usec: %w", err)
			}
			return v / 1e6, nil
		}
	}
	return 0, errors.New("system: cpu.stat: no usage_usec")
}
