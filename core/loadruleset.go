package core

import (
	"errors"
	"slices"

	"github.com/bulwark-go/bulwark/internal/property"
)

// stagedKind is one kind's part of a LoadRuleSet: its rules validated, ready
// to install.
type stagedKind interface {
	verr() *ValidationError
	changed(prev *table) bool
	install(next, prev *table)
	rejected(src RuleSource) // emits the kind's rejection event, if any
	notify(prev, next *table, src RuleSource)
}

type staged[R any] struct {
	m     *RuleManager[R]
	rules []R
	err   *ValidationError
}

func stage[R any](m *RuleManager[R], rules []R) stagedKind {
	valid, verr := m.check(rules)
	return &staged[R]{m: m, rules: valid, err: verr}
}

func (s *staged[R]) verr() *ValidationError { return s.err }

func (s *staged[R]) changed(prev *table) bool {
	return !slices.EqualFunc(s.rules, s.m.k.rules(prev), s.m.k.equal)
}

func (s *staged[R]) install(next, prev *table) { s.m.k.install(s.m.e, next, prev, s.rules) }

func (s *staged[R]) notify(prev, next *table, src RuleSource) { s.m.notify(prev, next, src, s.err) }

func (s *staged[R]) rejected(src RuleSource) {
	if s.err != nil {
		s.m.e.emit(s.m.e.rejectedEvent(s.m.k.name, src, s.err, len(s.m.k.rules(s.m.e.table.Load()))))
	}
}

// LoadRuleSet applies rules of every kind together: it validates every
// kind first and, unless some kind's rules are rejected, installs them all
// in one atomic swap, so an Enter sees either the old rules of every kind
// or the new ones. A kind left nil in rs has no rules afterwards.
//
// Validation follows each kind's manager: in strict mode (the default) one
// invalid rule of any kind rejects the whole set and nothing changes; a
// manager set lenient with [RuleManager.SetLenient] skips its invalid
// rules and the rest is applied. The returned error joins every kind's
// *ValidationError. Kinds whose rules equal those in force are left alone
// (they keep their state and their listeners hear nothing); the others'
// OnChange listeners are called after the swap, in the order flow,
// circuit breaker, system, authority, hotspot.
func (e *Engine) LoadRuleSet(rs RuleSet) error { return e.loadRuleSet(rs, RuleSource{}) }

// loadRuleSet is LoadRuleSet of rules from src.
func (e *Engine) loadRuleSet(rs RuleSet, src RuleSource) error {
	kinds := []stagedKind{
		stage(e.flow, rs.Flow),
		stage(e.breakers, rs.CircuitBreaker),
		stage(e.system, rs.System),
		stage(e.authority, rs.Authority),
		stage(e.hotspot, rs.Hotspot),
	}
	var errs []error
	rejected := false
	for _, k := range kinds {
		if v := k.verr(); v != nil {
			errs = append(errs, v)
			rejected = rejected || !v.Applied
		}
	}
	err := errors.Join(errs...)
	if rejected {
		for _, k := range kinds {
			k.rejected(src)
		}
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	prev := e.table.Load()
	kinds = slices.DeleteFunc(kinds, func(k stagedKind) bool { return !k.changed(prev) })
	if len(kinds) == 0 {
		return err
	}
	next := prev.clone()
	for _, k := range kinds {
		k.install(next, prev)
	}
	next.merge(prev)
	e.table.Store(next)
	for _, k := range kinds {
		k.notify(prev, next, src)
	}
	return err
}

// RegisterRuleSet makes p a source of rules of every kind: p's current
// value, if any, is loaded at once with [Engine.LoadRuleSet], and so is
// every later p.Set, which gets LoadRuleSet's error. cancel stops
// listening; the rules in force stay. It is independent of the kinds'
// [RuleManager.Register]: whichever loads last wins for a kind.
func (e *Engine) RegisterRuleSet(p *Property[RuleSet]) (cancel func()) {
	return p.cell().Listen(property.Listener[RuleSet, RuleSource]{Fn: e.loadRuleSet, Reject: e.rejectKind("ruleset")})
}
