package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/rule"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/listeners"
	"github.com/bulwark-go/bulwark/internal/property"
)

// ErrInvalidRules is wrapped by every [*ValidationError]:
// errors.Is(err, core.ErrInvalidRules) tells a rejected rule list apart
// from other failures.
var ErrInvalidRules = errors.New("core: invalid rules")

// RuleError is one rule that failed validation.
type RuleError struct {
	Index int // position in the list given to Load
	Rule  any // the rule itself, as given
	// Err is what the rule's Validate returned: one *rule.FieldError per
	// problem, joined; rule.Fields lists them.
	Err error
}

// Error names the rule by index and each problem by field:
// "rules[3].count: must be >= 0; rules[3].resource: must not be empty".
func (e RuleError) Error() string {
	var b strings.Builder
	for i, p := range rule.Fields(e.Err) {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "rules[%d]", e.Index)
		if p.Field != "" {
			b.WriteString(".")
		} else {
			b.WriteString(": ")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap returns Err, so that errors.As finds its *rule.FieldError.
func (e RuleError) Unwrap() error { return e.Err }

// ValidationError lists the invalid rules of a Load. In strict mode (the
// default) nothing was applied; in lenient mode the valid rules were.
// errors.As finds a [RuleError] and a *rule.FieldError in it.
type ValidationError struct {
	Kind    string      // "flow", "degrade", "system", "authority", "paramFlow"
	Rules   []RuleError // every invalid rule, in list order
	Applied bool        // true in lenient mode: the valid rules are in force
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Applied {
		fmt.Fprintf(&b, "core: %d invalid %s rule(s) skipped: ", len(e.Rules), e.Kind)
	} else {
		fmt.Fprintf(&b, "core: %s rules rejected, previous rules kept: ", e.Kind)
	}
	for i, r := range e.Rules {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidRules) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidRules }

// Unwrap returns the rule errors.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Rules))
	for i, r := range e.Rules {
		errs[i] = r
	}
	return errs
}

// RuleChange describes one swap of a kind's rules, for audit logs.
type RuleChange[R any] struct {
	Old, New []R
	// Added are rules of New with no equal rule in Old; Removed the
	// reverse. A rule whose threshold changed is both removed (old form)
	// and added (new form).
	Added, Removed []R
	// Resources are the resources whose rules changed, sorted.
	Resources []string
	Time      time.Time
}

// kind describes one rule type to the generic manager.
type kind[R any] struct {
	name     string
	validate func(R) error
	// defaults is the rule type's WithDefaults (set by newRuleManager).
	defaults func(R) R
	equal    func(a, b R) bool
	resource func(R) string
	// rules returns the kind's rules in force in t.
	rules func(t *table) []R
	// install compiles rules into next, reusing the state of equal rules in
	// prev.
	install func(e *Engine, next, prev *table, rules []R)
	// conflicts, when set, checks the rules of a list against each other:
	// it returns, by index, the problem of each rule that may not stand
	// beside the others. Rules with valid[i] false failed their own
	// validation and are left out.
	conflicts func(rules []R, valid []bool) map[int]error
}

// RuleManager holds one kind of rules of an [Engine]. Load swaps a whole
// list in atomically; Register attaches a [Property] that a datasource
// feeds. All methods are safe for concurrent use.
type RuleManager[R any] struct {
	e       *Engine
	k       kind[R]
	lenient atomic.Bool

	regMu  sync.Mutex
	cancel func()

	listeners listeners.Set[func(RuleChange[R])]

	// inForce is the list of rules the last swap put in force, and
	// grouped, the same grouped by resource, for the next swap's diff.
	// Guarded by e.mu.
	inForce []R
	grouped grouped
}

func newRuleManager[R any](e *Engine, k kind[R]) *RuleManager[R] {
	if k.defaults == nil {
		k.defaults = defaultsOf[R]()
	}
	return &RuleManager[R]{e: e, k: k}
}

// defaultsOf returns the WithDefaults method of the rule type R, or the
// identity for a type whose zero values are all Java's defaults
// (authority.Rule).
func defaultsOf[R any]() func(R) R {
	var f any
	switch any(*new(R)).(type) {
	case flow.Rule:
		f = flow.Rule.WithDefaults
	case circuitbreaker.Rule:
		f = circuitbreaker.Rule.WithDefaults
	case system.Rule:
		f = system.Rule.WithDefaults
	case hotspot.Rule:
		f = hotspot.Rule.WithDefaults
	default:
		return func(r R) R { return r }
	}
	return f.(func(R) R)
}

// SetLenient switches the manager between strict (the default: one invalid
// rule rejects the whole list) and lenient (valid rules are applied, and
// Load's *ValidationError lists the skipped ones with Applied set).
func (m *RuleManager[R]) SetLenient(lenient bool) { m.lenient.Store(lenient) }

// Rules returns a copy of the rules in force, as Load applied them: with
// Java's defaults in place of zero values (the rule types' WithDefaults).
func (m *RuleManager[R]) Rules() []R { return slices.Clone(m.k.rules(m.e.table.Load())) }

// Register makes p the source of this manager's rules, replacing any
// earlier property (Sentinel's register2Property): the manager stops
// listening to the old one, and p's current value, if any, is loaded at
// once. Every later p.Set loads the new list and returns Load's error to
// the caller of Set.
func (m *RuleManager[R]) Register(p *Property[[]R]) {
	m.regMu.Lock()
	defer m.regMu.Unlock()
	if m.cancel != nil {
		m.cancel()
	}
	m.cancel = p.cell().Listen(property.Listener[[]R, RuleSource]{Fn: m.load, Partial: m.lenient.Load, Reject: m.e.rejectKind(m.k.name)})
}

// OnChange calls fn after every swap of this kind's rules, in order, from
// the goroutine that loaded them; fn must not load rules itself.
func (m *RuleManager[R]) OnChange(fn func(RuleChange[R])) (cancel func()) {
	return m.listeners.Add(fn)
}

// Load applies each rule's defaults (a zero field means Java's default:
// see the rule types' WithDefaults), validates every rule and swaps the
// list in. In strict mode an invalid rule rejects the whole list: the
// returned *ValidationError names every bad rule by index and field, and
// the rules in force do not change. A list equal to the one in force is
// recognised and skipped. Rules equal to rules in force keep their state.
func (m *RuleManager[R]) Load(rules []R) error { return m.load(rules, RuleSource{}) }

// load is Load of rules from src.
func (m *RuleManager[R]) load(rules []R, src RuleSource) error {
	// The rules in force are valid, so a list equal to them needs no
	// validation: this is the common case of a datasource re-reading an
	// unchanged document.
	if slices.EqualFunc(rules, m.k.rules(m.e.table.Load()), func(a, b R) bool { return m.k.equal(m.k.defaults(a), b) }) {
		return nil
	}
	valid, verr := m.check(rules)
	if verr != nil && !verr.Applied {
		m.e.emit(m.e.rejectedEvent(m.k.name, src, verr, len(m.k.rules(m.e.table.Load()))))
		return verr
	}
	m.e.mu.Lock()
	prev := m.e.table.Load()
	if slices.EqualFunc(valid, m.k.rules(prev), m.k.equal) {
		m.e.mu.Unlock()
		if verr != nil {
			return verr
		}
		return nil
	}
	next := prev.clone()
	m.k.install(m.e, next, prev, valid)
	next.merge(prev)
	m.e.table.Store(next)
	m.notify(prev, next, src, verr)
	m.e.mu.Unlock()
	if verr != nil {
		return verr
	}
	return nil
}

// check applies the rules' defaults and validates them; in lenient mode it
// returns the valid ones.
func (m *RuleManager[R]) check(given []R) ([]R, *ValidationError) {
	var rules []R
	if len(given) > 0 {
		rules = make([]R, len(given))
	}
	var bad []RuleError
	for i, r := range given {
		rules[i] = m.k.defaults(r)
		if err := m.k.validate(rules[i]); err != nil {
			bad = append(bad, RuleError{Index: i, Rule: r, Err: err})
		}
	}
	if m.k.conflicts != nil {
		bad = m.addConflicts(given, rules, bad)
	}
	if len(bad) == 0 {
		return rules, nil
	}
	verr := &ValidationError{Kind: m.k.name, Rules: bad}
	if !m.lenient.Load() {
		return nil, verr
	}
	verr.Applied = true
	valid := make([]R, 0, len(rules)-len(bad))
	j := 0
	for i, r := range rules {
		if j < len(bad) && bad[j].Index == i {
			j++
			continue
		}
		valid = append(valid, r)
	}
	return valid, verr
}

// addConflicts adds to bad, the rules that failed their own validation,
// the rules that conflict with others of the list, in list order.
func (m *RuleManager[R]) addConflicts(given, rules []R, bad []RuleError) []RuleError {
	valid := make([]bool, len(rules))
	for i := range valid {
		valid[i] = true
	}
	for _, b := range bad {
		valid[b.Index] = false
	}
	conflicts := m.k.conflicts(rules, valid)
	if len(conflicts) == 0 {
		return bad
	}
	for i, err := range conflicts {
		bad = append(bad, RuleError{Index: i, Rule: given[i], Err: err})
	}
	slices.SortFunc(bad, func(a, b RuleError) int { return a.Index - b.Index })
	return bad
}

// notify emits the rule event of the swap from prev to next, of rules from
// src (verr: the rules a lenient manager skipped), and tells listeners
// about it. It runs under the engine's rule lock, so listeners see swaps
// in order.
func (m *RuleManager[R]) notify(prev, next *table, src RuleSource, verr *ValidationError) {
	fns := m.listeners.List()
	old, cur := m.k.rules(prev), m.k.rules(next)
	og := m.grouped
	if len(old) != len(m.inForce) || len(old) == 0 || &old[0] != &m.inForce[0] {
		og = byResource(old, m.k.resource) // swapped in by another path
	}
	d := diff(old, og, cur, m.k.equal, m.k.resource)
	m.inForce, m.grouped = cur, d.cur
	ev := changeEvent(m, old, cur, d, src, verr)
	m.e.emit(ev)
	if len(fns) == 0 {
		return
	}
	c := RuleChange[R]{Old: slices.Clone(old), New: slices.Clone(cur), Time: ev.Time,
		Added: pick(cur, d.fresh, d.nFresh), Removed: pick(old, d.gone, d.nGone), Resources: d.resources()}
	for _, fn := range fns {
		fn(c)
	}
}

// ruleDiff is what a swap changed: the rules only in cur (fresh, by index
// in cur) and only in old (gone, by index in old).
type ruleDiff struct {
	fresh, gone   []bool
	nFresh, nGone int
	// old and cur are the lists grouped by resource.
	old, cur grouped
}

// resources returns the resources of the fresh and gone rules, sorted,
// each once. Only listeners read them: a swap without any does not list
// them.
func (d ruleDiff) resources() []string {
	var out []string
	o, c := d.old, d.cur
	for i, j := 0, 0; i < len(o.idx) || j < len(c.idx); {
		switch {
		case i < len(o.idx) && !d.gone[o.idx[i]]:
			i++
		case j < len(c.idx) && !d.fresh[c.idx[j]]:
			j++
		default:
			var res string
			if j == len(c.idx) || (i < len(o.idx) && o.keys[o.idx[i]] <= c.keys[c.idx[j]]) {
				res = o.keys[o.idx[i]]
				i++
			} else {
				res = c.keys[c.idx[j]]
				j++
			}
			if n := len(out); n == 0 || out[n-1] != res {
				out = append(out, res)
			}
		}
	}
	return out
}

// pick returns the n rules of rs that mask marks, in order.
func pick[R any](rs []R, mask []bool, n int) []R {
	if n == 0 {
		return nil
	}
	out := make([]R, 0, n)
	for i, in := range mask {
		if in {
			out = append(out, rs[i])
		}
	}
	return out
}

// diff finds the rules only in cur, only in old (grouped as ok), and the resources they
// belong to; rules are compared within their resource only. It groups
// both lists by resource through sorted indexes, so that a list of
// thousands of rules costs a sort, not a map entry per rule, and it copies
// no rule.
func diff[R any](old []R, ok grouped, cur []R, equal func(a, b R) bool, resource func(R) string) (d ruleDiff) {
	keys := make([]string, len(cur))
	for i := range cur {
		keys[i] = resource(cur[i])
	}
	if ok.alone(keys) {
		return diffAligned(old, ok, cur, keys, equal)
	}
	return diffSorted(old, ok, cur, keys, equal)
}

// diffSorted is diff through the lists grouped by resource.
func diffSorted[R any](old []R, ok grouped, cur []R, keys []string, equal func(a, b R) bool) ruleDiff {
	ck := group(keys)
	oi, ci := ok.idx, ck.idx
	okey := func(i int) string { return ok.keys[oi[i]] }
	ckey := func(j int) string { return ck.keys[ci[j]] }
	gone, fresh := make([]bool, len(old)), make([]bool, len(cur))
	nGone, nFresh := 0, 0
	for i, j := 0, 0; i < len(oi) || j < len(ci); {
		// The next resource in order, and its group in each list.
		var res string
		switch {
		case i == len(oi):
			res = ckey(j)
		case j == len(ci):
			res = okey(i)
		default:
			res = min(okey(i), ckey(j))
		}
		oe, ce := i, j
		for oe < len(oi) && okey(oe) == res {
			oe++
		}
		for ce < len(ci) && ckey(ce) == res {
			ce++
		}
		for _, c := range ci[j:ce] {
			if !slices.ContainsFunc(oi[i:oe], func(o int) bool { return equal(old[o], cur[c]) }) {
				fresh[c] = true
				nFresh++
			}
		}
		for _, o := range oi[i:oe] {
			if !slices.ContainsFunc(ci[j:ce], func(c int) bool { return equal(old[o], cur[c]) }) {
				gone[o] = true
				nGone++
			}
		}
		i, j = oe, ce
	}
	return ruleDiff{fresh: fresh, gone: gone, nFresh: nFresh, nGone: nGone, old: ok, cur: ck}
}

// grouped is a list of rules' indexes sorted by resource, list order
// within a resource.
type grouped struct {
	keys []string // resource of rule i
	idx  []int
}

// byResource groups rs by resource. It reads each rule's resource once
// and sorts (resource, index) pairs: sorting indexes with a function of
// the rules would copy two rules per comparison.
func byResource[R any](rs []R, resource func(R) string) grouped {
	keys := make([]string, len(rs))
	for i := range rs {
		keys[i] = resource(rs[i])
	}
	return group(keys)
}

// group groups the rules whose resources are keys.
func group(keys []string) grouped {
	type keyed struct {
		key string
		i   int
	}
	ks := make([]keyed, len(keys))
	g := grouped{keys: keys, idx: make([]int, len(keys))}
	for i, k := range keys {
		ks[i] = keyed{k, i}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Or(strings.Compare(a.key, b.key), a.i-b.i) })
	for j, k := range ks {
		g.idx[j] = k.i
	}
	return g
}

// alone reports whether the list g groups has one rule per resource and
// keys names the same resources at the same places: then each rule of the
// new list can only be the rule at its place in the old one.
func (g grouped) alone(keys []string) bool {
	if len(keys) != len(g.keys) || len(keys) == 0 {
		return false
	}
	for k := 1; k < len(g.idx); k++ {
		if g.keys[g.idx[k]] == g.keys[g.idx[k-1]] {
			return false
		}
	}
	for i, k := range keys {
		if g.keys[i] != k {
			return false
		}
	}
	return true
}

// diffAligned is diff of lists that name the same resources, one rule each,
// at the same places (see grouped.alone): a rule is changed when it
// differs from the rule at its place, and no sort is needed.
func diffAligned[R any](old []R, ok grouped, cur []R, keys []string, equal func(a, b R) bool) ruleDiff {
	d := ruleDiff{gone: make([]bool, len(old)), old: ok, cur: grouped{keys: keys, idx: ok.idx}}
	for i := range cur {
		if !equal(old[i], cur[i]) {
			d.gone[i] = true
			d.nGone++
		}
	}
	d.fresh, d.nFresh = d.gone, d.nGone // the same places
	return d
}
