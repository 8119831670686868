package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/internal/breaker"
	"github.com/bulwark-go/bulwark/internal/mono"
)

var breakerKind = kind[circuitbreaker.Rule]{
	name:     "degrade",
	validate: circuitbreaker.Rule.Validate,
	equal:    func(a, b circuitbreaker.Rule) bool { return a == b },
	resource: func(r circuitbreaker.Rule) string { return r.Resource },
	rules:    func(t *table) []circuitbreaker.Rule { return t.breakerRules },
	install:  installBreakers,
}

// maxProbes is how many breakers of one resource an Entry tracks as the
// half-open probe (a bit each in Entry.probes). Breakers past it, which no
// real configuration reaches, let any completion decide the half-open
// state, as Java does.
const maxProbes = 64

// breakerSet is the compiled breakers of one resource, in rule order.
type breakerSet struct {
	stats  *resStats
	checks []*breakerCheck
}

type breakerCheck struct {
	b        *breaker.Breaker
	open     *BlockError
	halfOpen *BlockError
	shadow   bool
}

// OnBreakerStateChange calls fn after every state transition of any of the
// engine's circuit breakers (Java's CircuitBreakerStateChangeObserver):
// from, to, the value that triggered it and the rule. fn runs synchronously
// on the goroutine that made the transition (an Enter or an Exit): it must
// be quick and must not enter the breaker's resource.
func (e *Engine) OnBreakerStateChange(fn func(circuitbreaker.StateChange)) (cancel func()) {
	return e.breakerLn.Add(fn)
}

// notifyBreaker tells the breaker listeners about c, made at engine time
// at, without locking or allocating.
func (e *Engine) notifyBreaker(c circuitbreaker.StateChange, at mono.Time) {
	c.Time = e.wallTime(at)
	for _, fn := range e.breakerLn.List() {
		fn(c)
	}
}

func installBreakers(e *Engine, next, prev *table, rules []circuitbreaker.Rule) {
	next.breakerRules = rules
	next.breakers = make(map[string]*breakerSet)
	keep := kept[*breakerCheck]{}
	for _, r := range rules {
		bs := next.breakers[r.Resource]
		if bs == nil {
			bs = &breakerSet{stats: e.nodes.pinFrom(prev, r.Resource)}
			next.breakers[r.Resource] = bs
		}
		bc := &breakerCheck{shadow: r.Shadow}
		var old []*breakerCheck
		if s := prev.breakers[r.Resource]; s != nil {
			old = s.checks
		}
		if c, ok := keep.take(old, func(c *breakerCheck) bool { return c.b.Rule() == r }); ok {
			bc.b = c.b
		} else {
			bc.b = breaker.New(r, breaker.Options{Stripes: e.nodes.stripes, OnStateChange: e.notifyBreaker})
		}
		bc.open = &BlockError{Kind: BlockCircuitBreaker, Resource: r.Resource, Rule: r, Detail: "breaker OPEN"}
		bc.halfOpen = &BlockError{Kind: BlockCircuitBreaker, Resource: r.Resource, Rule: r, Detail: "breaker HALF_OPEN, probe in flight"}
		bs.checks = append(bs.checks, bc)
	}
}

// checkBreakers asks each breaker of the resource in turn. When one blocks,
// the breakers before it that let this entry through as their half-open
// probe go back to OPEN: the probe never ran (Java's whenTerminate hook).
func (e *Engine) checkBreakers(bs *breakerSet, en *Entry, now mono.Time) error {
	for i, c := range bs.checks {
		pass, probe := c.b.TryPass(now, bs.stats.node)
		if !pass && c.shadow {
			// A shadow breaker's state machine runs, but it rejects nothing.
			if c.b.State() == circuitbreaker.HalfOpen {
				e.shadowBlocked(en, now, c.halfOpen)
			} else {
				e.shadowBlocked(en, now, c.open)
			}
			continue
		}
		if !pass {
			for j := range min(i, maxProbes) {
				if en.probes&(1<<j) != 0 {
					bs.checks[j].b.AbortProbe(now)
				}
			}
			en.probes = 0
			if c.b.State() == circuitbreaker.HalfOpen {
				return c.halfOpen
			}
			return c.open
		}
		if probe && i < maxProbes {
			en.probes |= 1 << i
		}
	}
	return nil
}

// exitBreakers reports a completed entry to the resource's breakers.
func (en *Entry) exitBreakers(bs *breakerSet, now mono.Time, rt time.Duration, failed bool) {
	for i, c := range bs.checks {
		c.b.OnComplete(now, rt, failed, i >= maxProbes || en.probes&(1<<i) != 0)
	}
}

func describeBreaker(r circuitbreaker.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "degrade rule %s", r.Grade)
	switch r.Grade {
	case circuitbreaker.SlowRequestRatio:
		fmt.Fprintf(&b, " rt>%gms ratio>%g", r.Count, r.SlowRatioThreshold)
	case circuitbreaker.AvgRT:
		fmt.Fprintf(&b, " %gms", r.Count)
	default:
		fmt.Fprintf(&b, " %g", r.Count)
	}
	fmt.Fprintf(&b, " timeWindow=%ds", r.TimeWindow)
	return b.String()
}
