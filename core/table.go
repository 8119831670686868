package core

import (
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// table is one immutable generation of every rule kind, compiled. Enter
// loads it once through an atomic pointer: it sees this generation whole,
// and a swap never disturbs it.
type table struct {
	flowRules []flow.Rule
	// The flow sets are in res only (resource.flow): flow rules are most
	// of a large list, and a second map of them would cost a load of
	// 10,000 rules a map of 10,000 more.
	flowRes int  // how many resources have flow rules
	budgets bool // some flow check has a cluster budget
	// flowSets holds the set of each of flowRules (nil: not enforced);
	// flowAlone is true when every rule is enforced and no two share a
	// resource.
	flowSets  []*flowSet
	flowAlone bool

	breakerRules []circuitbreaker.Rule
	breakers     map[string]*breakerSet

	authorityRules []authority.Rule
	authority      map[string]*authoritySet

	hotspotRules []hotspot.Rule
	hotspot      map[string]*hotspotSet

	// System rules are global: combined here, checked for every inbound
	// entry whether or not its resource has rules. nil when there are none.
	systemRules []system.Rule
	system      *systemSet

	// res merges every resource-scoped kind: one map lookup per Enter.
	res map[string]*resource
}

// resource is what Enter needs about one resource that has rules.
type resource struct {
	stats     *resStats
	authority *authoritySet
	hotspot   *hotspotSet
	flow      *flowSet
	breakers  *breakerSet
}

func (t *table) clone() *table {
	c := *t
	c.res = nil // made by installFlow or merge
	return &c
}

// merge completes the per-resource index: the flow sets that installFlow
// put in it (or, when flow rules were not swapped and res is still nil,
// prev's), then the other kinds' sets from their maps.
func (t *table) merge(prev *table) {
	n := t.flowRes + len(t.breakers) + len(t.authority) + len(t.hotspot)
	keepFlow := t.res == nil
	if keepFlow {
		t.res = make(map[string]*resource, n)
	} else {
		n -= t.flowRes // installFlow's slab holds those
	}
	slab := make([]resource, 0, n) // one allocation for every resource
	at := func(name string, s *resStats) *resource {
		r := t.res[name]
		if r == nil {
			slab = append(slab, resource{stats: s})
			r = &slab[len(slab)-1]
			t.res[name] = r
		}
		return r
	}
	if keepFlow {
		for name, r := range prev.res {
			if r.flow != nil {
				at(name, r.stats).flow = r.flow
			}
		}
	}
	for name, bs := range t.breakers {
		at(name, bs.stats).breakers = bs
	}
	for name, as := range t.authority {
		at(name, as.stats).authority = as
	}
	for name, hs := range t.hotspot {
		at(name, hs.stats).hotspot = hs
	}
}

// kept hands the rules of a swap the state of equal rules of the previous
// table, so that an unchanged rule keeps its warm-up tokens, breaker state
// or parameter windows. Each old check goes to at most one new rule: two
// equal rules of a resource keep two states.
type kept[C comparable] map[C]bool

// take returns the first check of old that same accepts and that no rule
// of this swap took yet, and marks it taken.
func (k kept[C]) take(old []C, same func(C) bool) (C, bool) {
	for _, c := range old {
		if !k[c] && same(c) {
			k[c] = true
			return c, true
		}
	}
	var zero C
	return zero, false
}
