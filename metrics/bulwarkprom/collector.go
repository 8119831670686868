package bulwarkprom

import (
	"math"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/datasource"
)

// Option configures a collector.
type Option func(*collector)

// WithDatasources exports the health of each datasource (a
// datasource.Readable), labelled with its Status().Name.
func WithDatasources(ds ...interface{ Status() datasource.Status }) Option {
	return func(c *collector) { c.sources = append(c.sources, ds...) }
}

type collector struct {
	e       *core.Engine
	sources []interface{ Status() datasource.Status }

	// labels caches each resource's label pair: a scrape of many
	// resources builds none (their number is bounded by the engine's).
	mu        sync.Mutex
	labels    map[string][]*dto.LabelPair
	labelName string // "resource"
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	passedDesc    = desc("bulwark_passed_total", "Entries admitted.", "resource")
	blockedDesc   = desc("bulwark_blocked_total", "Entries blocked, by kind of rule.", "resource", "kind")
	shadowDesc    = desc("bulwark_shadow_blocked_total", "Entries shadow rules would have blocked (and let through), by kind of rule.", "resource", "kind")
	errorsDesc    = desc("bulwark_errors_total", "Entries completed with an error.", "resource")
	rtDesc        = desc("bulwark_response_time_seconds", "Response times of completed entries (whole ms, capped by the engine's max RT).", "resource")
	concDesc      = desc("bulwark_concurrency", "Entries in flight.", "resource")
	stateDesc     = desc("bulwark_circuit_breaker_state", "Circuit breakers of the resource in each state.", "resource", "state")
	transDesc     = desc("bulwark_circuit_breaker_transitions_total", "Circuit breaker state transitions.", "resource", "from", "to")
	rulesDesc     = desc("bulwark_rules", "Rules in force.", "kind")
	changesDesc   = desc("bulwark_rule_changes_total", "Rule changes, applied or rejected.", "kind", "result")
	dsUpDesc      = desc("bulwark_datasource_up", "1 when the datasource's last attempt succeeded.", "datasource")
	dsFailDesc    = desc("bulwark_datasource_failures_total", "Failed reads and rejected documents.", "datasource")
	dsAppliedDesc = desc("bulwark_datasource_last_applied_timestamp_seconds", "When the datasource's rules in force were applied.", "datasource")
	loadDesc      = desc("bulwark_system_load1", "One-minute load average the system rules see.")
	cpuDesc       = desc("bulwark_system_cpu_usage_ratio", "CPU usage (0 to 1) the system rules see.")
	inboundDesc   = desc("bulwark_system_inbound_qps", "Inbound entries admitted in the last second.")
	clUpDesc      = desc("bulwark_cluster_up", "1 when the token service's backend answers, 0 while it fails and cluster rules fall back.")
	clReqDesc     = desc("bulwark_cluster_requests_total", "Requests the token service sent to its backend (cluster/redis: leases asked of Redis).")
	clFallDesc    = desc("bulwark_cluster_fallbacks_total", "Entries of cluster rules the token service could not answer in time (their rule's fallback applied).")
	allDescs      = []*prometheus.Desc{passedDesc, blockedDesc, shadowDesc, errorsDesc, rtDesc, concDesc, stateDesc, transDesc, rulesDesc, changesDesc, dsUpDesc, dsFailDesc, dsAppliedDesc, loadDesc, cpuDesc, inboundDesc, clUpDesc, clReqDesc, clFallDesc}
	blockKinds    = []core.BlockKind{core.BlockFlow, core.BlockCircuitBreaker, core.BlockSystem, core.BlockAuthority, core.BlockHotspot}
	breakerStates = []circuitbreaker.State{circuitbreaker.Closed, circuitbreaker.Open, circuitbreaker.HalfOpen}
)

// NewCollector returns a collector of e's metrics (see the package doc).
// Register it on your own registry: prometheus.NewRegistry().MustRegister.
// The counters count from e's making (see core.Engine.Stats), whenever the
// collector is made or first scraped.
func NewCollector(e *core.Engine, opts ...Option) prometheus.Collector {
	c := &collector{e: e, labels: map[string][]*dto.LabelPair{}, labelName: "resource"}
	for _, o := range opts {
		o(c)
	}
	return c
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.e.Stats()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	// The metrics of every resource, in one allocation.
	ms := make([]resourceMetric, 4*len(st.Resources))
	c.mu.Lock()
	for i := range st.Resources {
		r := &st.Resources[i]
		t := &r.Total
		labels := c.labels[r.Resource]
		if labels == nil {
			name := r.Resource
			labels = []*dto.LabelPair{{Name: &c.labelName, Value: &name}}
			c.labels[r.Resource] = labels
		}
		m := ms[4*i : 4*i+4]
		m[0] = resourceMetric{desc: passedDesc, labels: labels, kind: counterMetric, value: float64(t.Passed)}
		m[1] = resourceMetric{desc: errorsDesc, labels: labels, kind: counterMetric, value: float64(t.Failed)}
		m[2] = resourceMetric{desc: rtDesc, labels: labels, kind: summaryMetric, value: t.RT.Seconds(), count: uint64(t.Succeeded)}
		m[3] = resourceMetric{desc: concDesc, labels: labels, kind: gaugeMetric, value: float64(r.Second.Concurrency)}
	}
	c.mu.Unlock()
	for i := range ms {
		ch <- &ms[i]
	}
	for i := range st.Resources {
		r := &st.Resources[i]
		for _, k := range blockKinds {
			if n := r.Total.BlockedBy[k]; n > 0 {
				counter(blockedDesc, float64(n), r.Resource, k.String())
			}
			if n := r.Total.ShadowBlocked[k]; n > 0 {
				counter(shadowDesc, float64(n), r.Resource, k.String())
			}
		}
	}
	c.breakers(st.Breakers, gauge, counter)
	for _, k := range st.Rules {
		gauge(rulesDesc, float64(k.Rules), k.Kind)
		counter(changesDesc, float64(k.Applied), k.Kind, "applied")
		counter(changesDesc, float64(k.Rejected), k.Kind, "rejected")
	}
	for _, ds := range c.sources {
		s := ds.Status()
		up := 0.0
		if s.Failures == 0 && !s.LastRead.IsZero() {
			up = 1
		}
		gauge(dsUpDesc, up, s.Name)
		counter(dsFailDesc, float64(s.TotalFailures), s.Name)
		if !s.AppliedAt.IsZero() {
			gauge(dsAppliedDesc, float64(s.AppliedAt.UnixNano())/1e9, s.Name)
		}
	}
	if !math.IsNaN(st.System.Load1) {
		gauge(loadDesc, st.System.Load1)
	}
	if !math.IsNaN(st.System.CPUUsage) {
		gauge(cpuDesc, st.System.CPUUsage)
	}
	gauge(inboundDesc, float64(st.System.Inbound.Second.Passed))
	if h := st.Cluster; h != nil {
		clusterHealth(h, gauge, counter)
	}
}

// clusterHealth exports the health of the engine's token service.
func clusterHealth(h *cluster.Health, gauge, counter func(*prometheus.Desc, float64, ...string)) {
	up := 0.0
	if h.Healthy {
		up = 1
	}
	gauge(clUpDesc, up)
	counter(clReqDesc, float64(h.Requests))
	counter(clFallDesc, float64(h.Fallbacks))
}

// breakers exports the breakers per resource: a resource with several
// breakers has one series per state counting them, and its transitions
// summed.
func (c *collector) breakers(bs []core.BreakerStats, gauge, counter func(*prometheus.Desc, float64, ...string)) {
	for i := 0; i < len(bs); {
		res := bs[i].Rule.Resource
		var states [circuitbreaker.HalfOpen + 1]float64
		var trans [circuitbreaker.HalfOpen + 1][circuitbreaker.HalfOpen + 1]int64
		for ; i < len(bs) && bs[i].Rule.Resource == res; i++ {
			if s := bs[i].State; s >= 0 && int(s) < len(states) {
				states[s]++
			}
			for f := range trans {
				for t := range trans[f] {
					trans[f][t] += bs[i].Transitions[f][t]
				}
			}
		}
		for _, s := range breakerStates {
			gauge(stateDesc, states[s], res, s.String())
		}
		for _, f := range breakerStates {
			for _, t := range breakerStates {
				if f != t && trans[f][t] > 0 {
					counter(transDesc, float64(trans[f][t]), res, f.String(), t.String())
				}
			}
		}
	}
}

// resourceMetric is one metric of one resource: what
// prometheus.MustNewConstMetric makes, without building the label pair
// again at every scrape.
type resourceMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair // shared: never changed once made
	value  float64          // counter or gauge value, summary sum
	count  uint64           // summary count
	kind   uint8
}

const (
	counterMetric uint8 = iota
	gaugeMetric
	summaryMetric
)

func (m *resourceMetric) Desc() *prometheus.Desc { return m.desc }

func (m *resourceMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	switch m.kind {
	case counterMetric:
		out.Counter = &dto.Counter{Value: &m.value}
	case gaugeMetric:
		out.Gauge = &dto.Gauge{Value: &m.value}
	default:
		out.Summary = &dto.Summary{SampleCount: &m.count, SampleSum: &m.value}
	}
	return nil
}
