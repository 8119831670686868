// Package sysload holds the mechanisms of system rules: the combination of
// the rules in force into [Limits] and their checks (Java's
// SystemRuleManager.checkSystem, with the BBR load check), and
// [ProcCollector], the Linux [system.Collector] that reads /proc and the
// process's cgroup. The engine (package core) uses both; what they mean to
// users is documented in package core/system.
package sysload

import (
	"fmt"
	"math"
	"time"

	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// Metric names the threshold a [Limits] check tripped.
type Metric int

// Metrics, in checking order (Java's SystemRuleManager.checkSystem).
const (
	MetricNone   Metric = iota
	MetricQPS           // inbound QPS
	MetricThread        // concurrent inbound entries
	MetricAvgRT         // average RT of inbound entries
	MetricLoad          // load1, BBR-checked
	MetricCPU           // CPU usage
)

func (m Metric) String() string {
	switch m {
	case MetricNone:
		return "none"
	case MetricQPS:
		return "qps"
	case MetricThread:
		return "thread"
	case MetricAvgRT:
		return "avgRt"
	case MetricLoad:
		return "load"
	case MetricCPU:
		return "cpu"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// Limits is the combination of several rules: for each threshold, the
// smallest value any rule sets (Java applies rules one by one and keeps
// the minimum; here they are combined at once and swapped in whole). A
// negative field is unset.
type Limits struct {
	HighestSystemLoad float64
	HighestCPUUsage   float64
	QPS               float64
	AvgRT             int64
	MaxThread         int64
	// From holds, per Metric, the index in the combined list of the rule
	// that set that threshold (-1 when none did).
	From [MetricCPU + 1]int
}

// Combine returns the limits of rules: each threshold is the smallest
// positive value among the rules (Unset when no rule sets it).
func Combine(rules []system.Rule) Limits {
	l := Limits{HighestSystemLoad: system.Unset, HighestCPUUsage: system.Unset, QPS: system.Unset, AvgRT: system.Unset, MaxThread: system.Unset}
	for i := range l.From {
		l.From[i] = -1
	}
	minF := func(m Metric, cur *float64, v float64, i int) {
		if v > 0 && (*cur < 0 || v < *cur) {
			*cur, l.From[m] = v, i
		}
	}
	minI := func(m Metric, cur *int64, v int64, i int) {
		if v > 0 && (*cur < 0 || v < *cur) {
			*cur, l.From[m] = v, i
		}
	}
	for i, r := range rules {
		minF(MetricLoad, &l.HighestSystemLoad, r.HighestSystemLoad, i)
		minF(MetricCPU, &l.HighestCPUUsage, r.HighestCPUUsage, i)
		minF(MetricQPS, &l.QPS, r.QPS, i)
		minI(MetricAvgRT, &l.AvgRT, r.AvgRT, i)
		minI(MetricThread, &l.MaxThread, r.MaxThread, i)
	}
	return l
}

// NeedsCollector reports whether the limits read load or CPU usage, the
// metrics a [Collector] provides.
func (l *Limits) NeedsCollector() bool { return l.HighestSystemLoad > 0 || l.HighestCPUUsage > 0 }

// Sample is what the checks read: the inbound statistics at a time, and the
// last load and CPU usage collected (NaN when unknown, which disables that
// check).
type Sample struct {
	Inbound *stat.Node
	Now     mono.Time
	Load1   float64
	CPU     float64
	// DefaultMinRT is the minimum RT assumed when no inbound call completed
	// in the window (Sentinel's statistic max RT, 4900 ms).
	DefaultMinRT time.Duration
}

// Check decides whether an inbound entry of acquire tokens may pass; when
// it may not, it returns the metric that tripped. The checks, in Java's
// order:
//
//   - qps: inbound pass QPS + acquire > QPS;
//   - thread: concurrent inbound entries > MaxThread;
//   - avgRt: average inbound RT > AvgRT;
//   - load: load1 > HighestSystemLoad and the BBR condition: concurrency > 1
//     and concurrency > maxSuccessQps × minRt / 1000, i.e. more calls are
//     in flight than the service has shown it can complete;
//   - cpu: CPU usage > HighestCPUUsage.
func (l *Limits) Check(s Sample, acquire int64) Metric {
	n := s.Inbound
	if l.QPS > 0 && n.PassQPS(s.Now)+float64(acquire) > l.QPS {
		return MetricQPS
	}
	threads := n.Concurrency()
	if l.MaxThread > 0 && threads > l.MaxThread {
		return MetricThread
	}
	if l.AvgRT > 0 && n.AvgRT(s.Now) > float64(l.AvgRT) {
		return MetricAvgRT
	}
	if l.HighestSystemLoad > 0 && !math.IsNaN(s.Load1) && s.Load1 > l.HighestSystemLoad {
		if !BBR(threads, n.MaxSuccessQPS(s.Now), n.MinRT(s.Now, s.DefaultMinRT)) {
			return MetricLoad
		}
	}
	if l.HighestCPUUsage > 0 && !math.IsNaN(s.CPU) && s.CPU > l.HighestCPUUsage {
		return MetricCPU
	}
	return MetricNone
}

// BBR reports whether an entry may pass while the load is high (Java's
// checkBbr): it is blocked only when more than one call is in flight and
// more are in flight than maxSuccessQPS × minRT (in whole milliseconds, as
// Java counts it) / 1000, the concurrency at which the service completes
// calls fastest.
func BBR(concurrency int64, maxSuccessQPS float64, minRT time.Duration) bool {
	return !(concurrency > 1 && float64(concurrency) > maxSuccessQPS*float64(minRT.Milliseconds())/1000)
}
