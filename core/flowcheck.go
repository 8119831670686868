package core

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/rule"
	"github.com/bulwark-go/bulwark/internal/flowcontrol"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

var flowKind = kind[flow.Rule]{
	name:     "flow",
	validate: flow.Rule.Validate,
	equal:    func(a, b flow.Rule) bool { return a == b },
	resource: func(r flow.Rule) string { return r.Resource },
	rules:    func(t *table) []flow.Rule { return t.flowRules },
	install:  installFlow,
	// A shadow cluster rule must not spend an enforcing rule's budget.
	conflicts: shadowSharingBudget,
}

// flowSet is the compiled flow rules of one resource, in checking order:
// rules for named origins, then "other", then "default" (Sentinel's order).
type flowSet struct {
	stats  *resStats
	checks []*flowCheck
	// named holds the origins some rule names, for "other" (nil: none).
	named map[string]bool
	// needOrigin: some rule reads per-origin statistics.
	needOrigin bool
	// chains are the (context, resource) nodes of chain rules, by context.
	chains map[string]*stat.Node
	// While the set is built: its checks, counted, and the resource's set
	// in the previous table.
	n   int
	was *flowSet
}

type flowCheck struct {
	rule *flow.Rule // in the table's flowRules, which never change
	// What entries read of the rule, here so that a check reads one object.
	limitApp string // limitApp(rule)
	strategy flow.Strategy
	shadow   bool
	ctrl     flowcontrol.Controller
	// block is made at the rule's first block (see blockError): most rules
	// never block, and a load of thousands of rules makes none.
	block atomic.Pointer[BlockError]
	ref   *stat.Node // Relate: the related resource's node; Chain: the context's node
	// budget is a cluster rule's share of its flow (nil: a local rule).
	budget cluster.Budget
	// plain: the rule is a QPS limit that rejects, enforced locally on the
	// resource's own statistics for every origin (Sentinel's usual rule).
	// checkFlow checks it against limit (stat.Limit of its count) without
	// asking its controller, unless an entry it does not fit is
	// prioritized and may wait for a later window.
	plain bool
	limit int64
}

// plainCheck reports whether r is a plain rule (see flowCheck.plain).
func plainCheck(r flow.Rule, budget cluster.Budget) bool {
	return budget == nil && !r.Shadow && r.Grade == flow.GradeQPS &&
		r.ControlBehavior == flow.Reject && r.Strategy == flow.Direct &&
		limitApp(r) == rule.LimitAppDefault
}

func limitApp(r flow.Rule) string {
	if r.LimitApp == "" {
		return rule.LimitAppDefault
	}
	return r.LimitApp
}

func originRank(r flow.Rule) int {
	switch limitApp(r) {
	case rule.LimitAppDefault:
		return 2
	case rule.LimitAppOther:
		return 1
	}
	return 0
}

// appliesLocally reports whether r is enforced by this process without a
// token service: always, except a cluster-mode rule without local
// fallback.
func appliesLocally(r flow.Rule) bool {
	return !r.ClusterMode || r.ClusterConfig.FallbackToLocalWhenFail
}

// installFlow compiles the flow rules into next: per resource, a check per
// rule that this process enforces, in Sentinel's origin order. An unchanged
// rule keeps its controller (warm-up tokens, pacing timeline) from prev.
func installFlow(e *Engine, next, prev *table, rules []flow.Rule) {
	next.flowRules = rules
	// The index of this swap, made here with the flow sets in it (merge
	// adds the other kinds).
	next.res = make(map[string]*resource, max(prev.flowRes, len(rules)/2))
	next.flowRes = 0
	next.budgets = false
	// When the list names the resources of the list in force at the same
	// places, one rule each (a document whose thresholds changed), rule
	// i's resource is new in this swap and its set in prev is prev's set
	// of rule i: no map lookup finds either.
	aligned := prev.flowAlone && len(prev.flowRules) == len(rules)
	for i := 0; aligned && i < len(rules); i++ {
		aligned = rules[i].Resource == prev.flowRules[i].Resource
	}
	next.flowSets = make([]*flowSet, len(rules))
	keep := kept[*flowCheck]{}
	// One allocation for every check of the generation, one for every
	// resource's set and one for the sets' lists of checks: a list of
	// thousands of rules costs a few allocations per rule, not a dozen.
	checks := make([]flowCheck, 0, len(rules))
	sets := make([]flowSet, 0, len(rules))
	slab := make([]resource, 0, len(rules))
	of := make([]*flowSet, 0, len(rules)) // the set of each check
	ctrls := flowcontrol.NewSlab(e.flowCfg, len(rules))
	for i := range rules {
		r := &rules[i]
		if !e.enforces(*r) {
			continue
		}
		var fs *flowSet
		var res *resource
		if !aligned {
			res = next.res[r.Resource]
		}
		if res != nil {
			fs = res.flow
		} else {
			sets = append(sets, flowSet{})
			fs = &sets[len(sets)-1]
			if aligned {
				was := prev.flowSets[i]
				fs.stats, fs.was = was.stats, was
			} else if was := prev.res[r.Resource]; was != nil {
				fs.stats, fs.was = was.stats, was.flow // pinned already
			} else {
				fs.stats = e.nodes.pin(r.Resource)
			}
			slab = append(slab, resource{stats: fs.stats, flow: fs})
			next.res[r.Resource] = &slab[len(slab)-1]
			next.flowRes++
		}
		next.flowSets[i] = fs
		fs.noteOrigin(*r)
		ctrl, budget := e.flowState(keep, fs.was, r, ctrls)
		checks = append(checks, flowCheck{
			rule:     r,
			limitApp: limitApp(*r),
			strategy: r.Strategy,
			shadow:   r.Shadow,
			ctrl:     ctrl,
			budget:   budget,
			ref:      e.refNode(fs, *r),
			plain:    plainCheck(*r, budget),
			limit:    stat.Limit(r.Count),
		})
		next.budgets = next.budgets || budget != nil
		of = append(of, fs)
		fs.n++
		if r.ControlBehavior == flow.WarmUp || r.ControlBehavior == flow.WarmUpRateLimiter {
			fs.stats.node.Minute() // warm-up reads the previous second
		}
	}
	next.flowAlone = len(sets) == len(rules)
	releaseBudgets(prev, keep)
	list := make([]*flowCheck, len(checks))
	for i := range sets {
		fs := &sets[i]
		fs.checks, list = list[:0:fs.n], list[fs.n:]
		fs.was = nil // a generation must not hold the one before
	}
	for i := range checks {
		of[i].checks = append(of[i].checks, &checks[i])
	}
	for i := range sets {
		if fs := &sets[i]; len(fs.checks) > 1 {
			slices.SortStableFunc(fs.checks, func(a, b *flowCheck) int {
				return cmp.Compare(originRank(*a.rule), originRank(*b.rule))
			})
		}
	}
}

// flowState returns the controller and the cluster budget of r: those of
// an equal rule of was, the resource's set in the previous table (nil if
// none), that no rule took yet, or new ones from slab. A controller that
// keeps no state is always new (from this swap's slab): kept, it would
// hold the previous swap's slab.
func (e *Engine) flowState(keep kept[*flowCheck], was *flowSet, r *flow.Rule, slab *flowcontrol.Slab) (flowcontrol.Controller, cluster.Budget) {
	var old []*flowCheck
	if was != nil {
		old = was.checks
	}
	if c, ok := keep.take(old, func(c *flowCheck) bool { return *c.rule == *r }); ok {
		if !flowcontrol.Stateful(*r) {
			return slab.Controller(*r), c.budget
		}
		return c.ctrl, c.budget
	}
	return slab.Controller(*r), e.budgetFor(*r)
}

// noteOrigin records what r needs of entries' origins: the origins it names
// (which "other" excludes), and per-origin statistics for a direct rule
// that limits some origins only.
func (fs *flowSet) noteOrigin(r flow.Rule) {
	la := limitApp(r)
	if la != rule.LimitAppDefault && la != rule.LimitAppOther {
		if fs.named == nil {
			fs.named = map[string]bool{}
		}
		fs.named[la] = true
	}
	if la != rule.LimitAppDefault && r.Strategy == flow.Direct {
		fs.needOrigin = true
	}
}

// refNode returns the statistics a Relate or Chain rule reads instead of
// its resource's: the related resource's, or those of the resource entered
// through the rule's context (registered in fs.chains). It is nil for a
// Direct rule.
func (e *Engine) refNode(fs *flowSet, r flow.Rule) *stat.Node {
	switch r.Strategy {
	case flow.Relate:
		return e.nodes.pin(r.RefResource).node
	case flow.Chain:
		if fs.chains == nil {
			fs.chains = map[string]*stat.Node{}
		}
		n := fs.chains[r.RefResource]
		if n == nil {
			n = e.chainNode(r.Resource, r.RefResource)
			fs.chains[r.RefResource] = n
		}
		return n
	}
	return nil
}

// chainNode returns the statistics of resource entered through context
// ctxName; they live as long as the engine, so a chain rule that comes back
// finds its window.
func (e *Engine) chainNode(resource, ctxName string) *stat.Node {
	return e.nodes.pin("\x00chain\x00" + ctxName + "\x00" + resource).node
}

// node selects the statistics a rule is checked against for this entry, or
// nil when the rule does not apply to it (Sentinel's
// selectNodeByRequesterAndStrategy).
func (fc *flowCheck) node(fs *flowSet, en *Entry) *stat.Node {
	la := fc.limitApp
	var direct *stat.Node
	switch {
	case la == rule.LimitAppDefault:
		direct = fs.stats.node
	case la == rule.LimitAppOther:
		if en.origin == "" || fs.named[en.origin] {
			return nil
		}
		direct = en.originNode
	case la == en.origin:
		direct = en.originNode
	default:
		return nil
	}
	switch fc.strategy {
	case flow.Direct:
		return direct
	case flow.Relate:
		return fc.ref
	case flow.Chain:
		if en.contextName != fc.rule.RefResource {
			return nil
		}
		return fc.ref
	}
	return nil
}

// blockError returns the error that reports the rule's blocks, made at its
// first block and returned as is from then on.
func (fc *flowCheck) blockError() *BlockError {
	if b := fc.block.Load(); b != nil {
		return b
	}
	fc.block.CompareAndSwap(nil, &BlockError{Kind: BlockFlow, Resource: fc.rule.Resource, Rule: *fc.rule})
	return fc.block.Load()
}

// checkFlow runs the resource's flow rules for an entry. It may wait (pacing,
// occupied windows); the wait honours ctx.
func (e *Engine) checkFlow(fs *flowSet, en *Entry, now mono.Time) error {
	for _, fc := range fs.checks {
		if fc.plain {
			if fs.stats.node.PassFits(now, en.count, fc.limit, en.proc) {
				continue
			}
			if !en.prioritized {
				return fc.blockError()
			}
		}
		n := fc.node(fs, en)
		if n == nil {
			continue
		}
		var d flowcontrol.Decision
		if fc.budget == nil {
			d = fc.ctrl.Check(n, now, en.count, en.prioritized, en.proc)
		} else {
			d = checkCluster(fc, n, en, now)
		}
		if fc.shadow {
			// Watched only: counted, never blocking, occupying or waiting.
			if d.Blocked {
				e.shadowBlocked(en, now, fc.blockError())
			}
			continue
		}
		if d.Blocked {
			return fc.blockError()
		}
		if d.Occupied {
			en.occupied = true
		}
		if d.Wait > 0 {
			en.waited = true
			if err := e.sleep(en.ctx, d.Wait); err != nil {
				return fmt.Errorf("core: %s: waiting for flow rule: %w", fc.rule.Resource, err)
			}
		}
	}
	return nil
}

func describeFlow(r flow.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "flow rule %s %g", r.Grade, r.Count)
	if r.Grade == flow.GradeQPS && r.ControlBehavior != flow.Reject {
		fmt.Fprintf(&b, " %s", r.ControlBehavior)
	}
	if la := limitApp(r); la != rule.LimitAppDefault {
		fmt.Fprintf(&b, " limitApp=%s", la)
	}
	if r.Strategy != flow.Direct {
		fmt.Fprintf(&b, " %s=%s", r.Strategy, r.RefResource)
	}
	return b.String()
}
