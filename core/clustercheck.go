package core

import (
	"fmt"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/rule"
	"github.com/bulwark-go/bulwark/internal/flowcontrol"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// WithTokenService makes the engine enforce cluster-mode flow rules
// (ClusterMode set, a ClusterConfig.FlowID) through ts: the instances
// sharing ts's backend share each flow's budget (see package cluster, and
// package cluster/redis for a service on Redis). When ts cannot answer in
// time, a rule with ClusterConfig.FallbackToLocalWhenFail is checked
// locally with its count, and any other cluster rule lets the entry pass,
// as in Java.
//
// Without the option, or with a nil ts, cluster rules are checked as if
// the service had failed: locally when they fall back, not at all
// otherwise. The engine does not close ts. When ts has a method
// Health() cluster.Health, [Engine.Stats] reports it (Stats.Cluster).
func WithTokenService(ts cluster.TokenService) Option {
	return func(cfg *config) { cfg.tokens = ts }
}

// enforces reports whether the engine checks flow rule r at all: every
// rule, except a cluster rule that has neither a token service nor a local
// fallback.
func (e *Engine) enforces(r flow.Rule) bool {
	return (r.ClusterMode && e.tokens != nil) || appliesLocally(r)
}

// budgetFor returns the cluster budget of a rule being installed, or nil
// for a rule checked locally only.
func (e *Engine) budgetFor(r flow.Rule) cluster.Budget {
	if !r.ClusterMode || e.tokens == nil {
		return nil
	}
	return e.tokens.Budget(r)
}

// clusterHealth returns the health of the engine's token service, nil
// when it has none or the service does not report one.
func (e *Engine) clusterHealth() *cluster.Health {
	hr, ok := e.tokens.(interface{ Health() cluster.Health })
	if !ok {
		return nil
	}
	h := hr.Health()
	return &h
}

// shadowSharingBudget finds each shadow cluster rule whose FlowID an
// enforcing cluster rule of the same list names too: asking for tokens, it
// would spend the enforcing rule's budget (across every instance), so that
// the enforcing rule admits less than its count. A shadow cluster rule
// needs a FlowID of its own.
func shadowSharingBudget(rules []flow.Rule, valid []bool) map[int]error {
	var enforcing map[int64]int // FlowID → the first enforcing cluster rule naming it
	for i, r := range rules {
		if !valid[i] || !r.ClusterMode || r.Shadow {
			continue
		}
		if enforcing == nil {
			enforcing = map[int64]int{}
		}
		if _, ok := enforcing[r.ClusterConfig.FlowID]; !ok {
			enforcing[r.ClusterConfig.FlowID] = i
		}
	}
	var out map[int]error
	for i, r := range rules {
		if !valid[i] || !r.ClusterMode || !r.Shadow {
			continue
		}
		id := r.ClusterConfig.FlowID
		j, ok := enforcing[id]
		if !ok {
			continue
		}
		if out == nil {
			out = map[int]error{}
		}
		out[i] = &rule.FieldError{Field: "clusterConfig.flowId", Err: fmt.Errorf("shadow cluster rule shares flowId %d with enforcing cluster rule rules[%d] (%q) "+
			"and would spend its budget; give the shadow rule a flowId of its own", id, j, rules[j].Resource)}
	}
	return out
}

// releaseBudgets releases the budgets of prev's cluster rules that the new
// table did not keep.
func releaseBudgets(prev *table, keep kept[*flowCheck]) {
	if !prev.budgets {
		return
	}
	for _, r := range prev.res {
		if r.flow == nil {
			continue
		}
		for _, fc := range r.flow.checks {
			if fc.budget != nil && !keep[fc] {
				fc.budget.Release()
			}
		}
	}
}

// checkCluster asks a cluster rule's budget for the entry's tokens and
// applies Java's fallback when the service fails.
func checkCluster(fc *flowCheck, n *stat.Node, en *Entry, now mono.Time) flowcontrol.Decision {
	res := fc.budget.RequestToken(en.ctx, en.count, en.prioritized)
	switch res.Status {
	case cluster.OK:
		return flowcontrol.Decision{}
	case cluster.Blocked:
		return flowcontrol.Decision{Blocked: true}
	case cluster.ShouldWait:
		return flowcontrol.Decision{Wait: res.Wait}
	}
	if fc.rule.ClusterConfig.FallbackToLocalWhenFail {
		return fc.ctrl.Check(n, now, en.count, en.prioritized, en.proc)
	}
	return flowcontrol.Decision{}
}
