package core

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/sysload"
)

var systemKind = kind[system.Rule]{
	name:     "system",
	validate: system.Rule.Validate,
	equal:    func(a, b system.Rule) bool { return a == b },
	resource: func(system.Rule) string { return "" }, // system rules are global
	rules:    func(t *table) []system.Rule { return t.systemRules },
	install:  installSystem,
}

// WithSystemCollector makes system rules read load and CPU usage from c
// instead of the Linux collector, which reads /proc and the process's
// cgroup (see package core/system). Tests use it to inject values. A nil c
// means the Linux collector, as without the option.
func WithSystemCollector(c system.Collector) Option {
	return func(cfg *config) { cfg.collector = c }
}

// collectInterval is how often the collector goroutine samples, as Java's
// SystemStatusListener.
const collectInterval = time.Second

// systemSet is the system rules combined: one threshold per metric. The
// shadow rules are combined apart, in shadow (nil when there are none).
type systemSet struct {
	limits sysload.Limits
	blocks [sysload.MetricCPU + 1]*BlockError
	shadow *systemSet
}

// sysState is the engine's collector goroutine and what it last read.
type sysState struct {
	collector system.Collector
	// load and cpu hold math.Float64bits of the last reading, NaN when it
	// failed or nothing runs: the check is then disabled.
	load, cpu atomic.Uint64
	// warnedLoad and warnedCPU make a failing metric logged once.
	warnedLoad, warnedCPU atomic.Bool
	// stop and done belong to the running goroutine, nil when none runs;
	// guarded by Engine.mu.
	stop, done chan struct{}
}

func installSystem(e *Engine, next, _ *table, rules []system.Rule) {
	next.systemRules = rules
	next.system = nil
	var enforced, shadow []system.Rule
	for _, r := range rules {
		if r.Shadow {
			shadow = append(shadow, r)
		} else {
			enforced = append(enforced, r)
		}
	}
	if len(rules) > 0 {
		next.system = combineSystem(enforced)
		if len(shadow) > 0 {
			next.system.shadow = combineSystem(shadow)
		}
	}
	ss := next.system
	e.syncCollector(ss != nil && (ss.limits.NeedsCollector() || ss.shadow != nil && ss.shadow.limits.NeedsCollector()))
}

// combineSystem returns rules combined, with the error of each metric.
func combineSystem(rules []system.Rule) *systemSet {
	ss := &systemSet{limits: sysload.Combine(rules)}
	for m := sysload.MetricQPS; m <= sysload.MetricCPU; m++ {
		if i := ss.limits.From[m]; i >= 0 {
			ss.blocks[m] = &BlockError{Kind: BlockSystem, Rule: rules[i], Detail: systemDetail(m, &ss.limits)}
		}
	}
	return ss
}

func systemDetail(m sysload.Metric, l *sysload.Limits) string {
	switch m {
	case sysload.MetricQPS:
		return fmt.Sprintf("inbound qps above %g", l.QPS)
	case sysload.MetricThread:
		return fmt.Sprintf("inbound concurrency above %d", l.MaxThread)
	case sysload.MetricAvgRT:
		return fmt.Sprintf("inbound average rt above %dms", l.AvgRT)
	case sysload.MetricLoad:
		return fmt.Sprintf("load1 above %g and concurrency above capacity (BBR)", l.HighestSystemLoad)
	case sysload.MetricCPU:
		return fmt.Sprintf("cpu usage above %g", l.HighestCPUUsage)
	}
	return m.String()
}

// checkSystem runs the system rules for an inbound entry of resource. System
// rules are global, so the returned error is a copy of the prebuilt one
// naming the resource: the blocked path allocates the error only.
//
// The shadow rules are checked after the enforced ones pass: a would-be
// block is counted and, only while some OnShadowBlock listener listens,
// told with a copy of its error naming the resource.
func (e *Engine) checkSystem(ss *systemSet, en *Entry, resource string, now mono.Time) error {
	s := sysload.Sample{
		Inbound:      e.inbound,
		Now:          now,
		Load1:        math.Float64frombits(e.sys.load.Load()),
		CPU:          math.Float64frombits(e.sys.cpu.Load()),
		DefaultMinRT: e.maxRT,
	}
	if m := ss.limits.Check(s, en.count); m != sysload.MetricNone {
		return ss.blockOf(m, resource)
	}
	if sh := ss.shadow; sh != nil {
		if m := sh.limits.Check(s, en.count); m != sysload.MetricNone {
			if en.stats != nil {
				en.stats.addShadow(now, BlockSystem, en.count)
			}
			if fns := e.shadowLn.List(); len(fns) > 0 {
				b := sh.blockOf(m, resource)
				for _, fn := range fns {
					fn(b)
				}
			}
		}
	}
	return nil
}

// blockOf returns a copy of the error of metric m naming resource.
func (ss *systemSet) blockOf(m sysload.Metric, resource string) *BlockError {
	b := *ss.blocks[m]
	b.Resource = resource
	return &b
}

// syncCollector starts the collector goroutine when need is true and none
// runs, and stops it (waiting for it) when need is false. It runs under
// e.mu.
func (e *Engine) syncCollector(need bool) {
	s := &e.sys
	switch {
	case need && s.stop == nil && !e.closed.Load():
		if s.collector == nil {
			s.collector = sysload.NewCollector()
		}
		s.warnedLoad.Store(false)
		s.warnedCPU.Store(false)
		e.collect() // the rules see a reading as soon as they are in force
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go everyUntil(s.stop, s.done, collectInterval, e.collect)
	case !need && s.stop != nil:
		e.stopCollector()
	}
}

// stopCollector stops the collector goroutine and waits for it. It runs
// under e.mu.
func (e *Engine) stopCollector() {
	s := &e.sys
	if s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop, s.done = nil, nil
	s.load.Store(math.Float64bits(math.NaN()))
	s.cpu.Store(math.Float64bits(math.NaN()))
}

// everyUntil calls fn every d until stop is closed, then closes done: the
// loop of the engine's background goroutines (the system collector, the
// statistics harvest).
func everyUntil(stop <-chan struct{}, done chan<- struct{}, d time.Duration, fn func()) {
	defer close(done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			fn()
		}
	}
}

// collect reads the metrics once. A metric that cannot be read disables
// its check until it can; the first failure is logged.
func (e *Engine) collect() {
	s := &e.sys
	read := func(name string, f func() (float64, error), dst *atomic.Uint64, warned *atomic.Bool) {
		v, err := f()
		if err != nil || math.IsNaN(v) {
			dst.Store(math.Float64bits(math.NaN()))
			if !warned.Swap(true) {
				e.log.Warn("system metric unavailable: its check is disabled", "metric", name, "err", err)
			}
			return
		}
		dst.Store(math.Float64bits(v))
	}
	read("load1", s.collector.Load1, &s.load, &s.warnedLoad)
	read("cpu", s.collector.CPUUsage, &s.cpu, &s.warnedCPU)
}

func describeSystem(r system.Rule) string {
	var parts []string
	if r.HighestSystemLoad > 0 {
		parts = append(parts, fmt.Sprintf("load1=%g", r.HighestSystemLoad))
	}
	if r.HighestCPUUsage > 0 {
		parts = append(parts, fmt.Sprintf("cpu=%g", r.HighestCPUUsage))
	}
	if r.QPS > 0 {
		parts = append(parts, fmt.Sprintf("qps=%g", r.QPS))
	}
	if r.AvgRT > 0 {
		parts = append(parts, fmt.Sprintf("avgRt=%dms", r.AvgRT))
	}
	if r.MaxThread > 0 {
		parts = append(parts, fmt.Sprintf("maxThread=%d", r.MaxThread))
	}
	return "system rule " + strings.Join(parts, " ")
}
