package core

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
)

// RuleSource says where rules came from: the datasource and the revision
// of its document. It is empty for a direct Load or LoadRuleSet.
type RuleSource struct {
	Name     string // the datasource's name (datasource.WithName)
	Revision string // the document's revision in the datasource
	Author   string // who wrote the document, when known (datasource.WithAuthor)
}

// RuleEvent is one change of one kind of rules, or one rejected attempt to
// change them: the audit record of [Engine.OnRuleEvent] and
// [Engine.RuleEvents].
//
// Rules are named by resource and described by their fields with the
// names of the JSON document: a changed rule as
// "GET /orders: count 100 → 200", an added or removed one by the fields
// that differ from the defaults ("GET /orders: count=100").
type RuleEvent struct {
	Time   time.Time
	Kind   string // "flow", "degrade", "system", "authority", "paramFlow": a rule-set document's section names
	Source RuleSource
	// Rejected says the rules did not change: Errors names every invalid
	// rule. When Rejected is false, Errors lists the rules a lenient
	// manager skipped.
	Rejected bool
	Errors   []string
	// Added and Removed are rules with no counterpart in the other list;
	// Changed pairs a removed and an added rule of one resource (the
	// closest one) and lists the fields that differ, old → new. Each list
	// names at most 50 rules; a longer one ends with "… and N more".
	Added, Removed, Changed []string
	Rules                   int // rules of the kind in force afterwards
}

// keptEvents is how many events RuleEvents keeps.
const keptEvents = 100

// ruleLog is the engine's record of rule events.
type ruleLog struct {
	deliver sync.Mutex // serialises events: subscribers see them in order
	mu      sync.Mutex // guards the rest
	ring    []RuleEvent
	next    int
	subs    map[uint64]func(RuleEvent)
	nextID  uint64
	// per kind, in kindNames order: where the rules in force came from,
	// and the changes applied and rejected.
	sources           [len(kindNames)]RuleSource
	applied, rejected [len(kindNames)]int64
}

// kindNames are the rule kinds in the order LoadRuleSet applies them.
var kindNames = [...]string{"flow", "degrade", "system", "authority", "paramFlow"}

// OnRuleEvent calls fn with every rule event from now on, in order, on the
// goroutine that loaded the rules; fn must be quick and must not load
// rules (it may read [Engine.RuleEvents] or [Engine.Stats]). cancel stops
// the calls.
func (e *Engine) OnRuleEvent(fn func(RuleEvent)) (cancel func()) {
	l := &e.events
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.subs == nil {
		l.subs = make(map[uint64]func(RuleEvent))
	}
	id := l.nextID
	l.nextID++
	l.subs[id] = fn
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subs, id)
	}
}

// RuleEvents returns the last 100 rule events, oldest first.
func (e *Engine) RuleEvents() []RuleEvent {
	l := &e.events
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RuleEvent, 0, len(l.ring))
	out = append(out, l.ring[l.next:]...)
	return append(out, l.ring[:l.next]...)
}

// RuleStats describes the rules in force of one kind.
type RuleStats struct {
	Kind   string
	Rules  int        // rules in force
	Source RuleSource // where they came from
	// Applied and Rejected count the changes since the engine was created.
	Applied, Rejected int64
}

func (e *Engine) ruleStats() []RuleStats {
	t := e.table.Load()
	counts := [len(kindNames)]int{len(t.flowRules), len(t.breakerRules), len(t.systemRules), len(t.authorityRules), len(t.hotspotRules)}
	l := &e.events
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RuleStats, len(kindNames))
	for i, k := range kindNames {
		out[i] = RuleStats{Kind: k, Rules: counts[i], Source: l.sources[i], Applied: l.applied[i], Rejected: l.rejected[i]}
	}
	return out
}

// emit records ev, logs it and tells the subscribers, in the order of
// subscription. Events are delivered one at a time, in order; a subscriber
// may read the events or subscribe (only l.mu guards those).
func (e *Engine) emit(ev RuleEvent) {
	l := &e.events
	l.deliver.Lock()
	defer l.deliver.Unlock()
	l.mu.Lock()
	if i := slices.Index(kindNames[:], ev.Kind); i >= 0 {
		if ev.Rejected {
			l.rejected[i]++
		} else {
			l.applied[i]++
			l.sources[i] = ev.Source
		}
	}
	if len(l.ring) < keptEvents {
		l.ring = append(l.ring, ev)
	} else {
		l.ring[l.next] = ev
		l.next = (l.next + 1) % keptEvents
	}
	ids := slices.Sorted(maps.Keys(l.subs))
	fns := make([]func(RuleEvent), len(ids))
	for i, id := range ids {
		fns[i] = l.subs[id]
	}
	l.mu.Unlock()
	attrs := []any{"kind", ev.Kind, "source", ev.Source.Name, "revision", ev.Source.Revision, "rules", ev.Rules}
	if ev.Source.Author != "" {
		attrs = append(attrs, "author", ev.Source.Author)
	}
	for _, a := range []struct {
		key  string
		list []string
	}{{"added", ev.Added}, {"removed", ev.Removed}, {"changed", ev.Changed}, {"errors", ev.Errors}} {
		if len(a.list) > 0 {
			attrs = append(attrs, a.key, a.list)
		}
	}
	if ev.Rejected {
		e.log.Warn("rules rejected", attrs...)
	} else {
		e.log.Info("rules changed", attrs...)
	}
	for _, fn := range fns {
		fn(ev)
	}
}

// rejectKind returns what emits the rejection of a document of kind
// (or "ruleset") that did not decode. A rule set's error names the kind
// when one kind's rules were at fault.
func (e *Engine) rejectKind(kind string) func(RuleSource, error) {
	return func(src RuleSource, err error) {
		var verr *ValidationError
		k := kind
		if errors.As(err, &verr) && verr.Kind != "" {
			k = verr.Kind
		}
		rules := 0
		if i := slices.Index(kindNames[:], k); i >= 0 {
			rules = e.ruleStats()[i].Rules
		}
		e.emit(RuleEvent{Time: e.wallTime(e.now()), Kind: k, Source: src, Rejected: true, Errors: []string{err.Error()}, Rules: rules})
	}
}

// rejectedEvent is the event of a rejected list.
func (e *Engine) rejectedEvent(kind string, src RuleSource, verr *ValidationError, rules int) RuleEvent {
	return RuleEvent{Time: e.wallTime(e.now()), Kind: kind, Source: src, Rejected: true, Errors: ruleErrors(verr), Rules: rules}
}

func ruleErrors(verr *ValidationError) []string {
	if verr == nil {
		return nil
	}
	out := make([]string, len(verr.Rules))
	for i, r := range verr.Rules {
		out[i] = r.Error()
	}
	return out
}

// maxEventLines bounds each list of a RuleEvent: a change of thousands of
// rules lists the first ones and then how many more there are, so that
// loading them stays cheap and the kept events stay small.
const maxEventLines = 50

// lines collects the descriptions of one list of an event, up to
// maxEventLines.
type lines struct {
	list []string
	more int
}

// add appends the line describe returns, or counts it past the bound
// (describe is then not called).
func (l *lines) add(describe func() string) {
	if len(l.list) < maxEventLines {
		l.list = append(l.list, describe())
	} else {
		l.more++
	}
}

func (l *lines) done() []string {
	if l.more > 0 {
		l.list = append(l.list, fmt.Sprintf("… and %d more", l.more))
	}
	return l.list
}

// changeEvent describes the swap from old to cur, which added and removed
// the rules d finds. Each removed rule is paired with the added rule of its
// resource that differs from it in the fewest fields: the pair is a
// changed rule.
func changeEvent[R any](m *RuleManager[R], old, cur []R, d ruleDiff, src RuleSource, verr *ValidationError) RuleEvent {
	now := m.e.now()
	ev := RuleEvent{Time: m.e.wallTime(now), Kind: m.k.name, Source: src, Errors: ruleErrors(verr), Rules: len(cur)}
	// The added rules' indexes in cur, sorted by resource: a removed
	// rule's candidates are one run of it.
	byRes := make([]int, 0, d.nFresh)
	for _, c := range d.cur.idx {
		if d.fresh[c] {
			byRes = append(byRes, c)
		}
	}
	key := func(c int) string { return d.cur.keys[c] }
	// Each removed rule's candidates, byRes[lo[o]:hi[o]]: found walking
	// the removed rules by resource beside byRes.
	lo, hi := make([]int32, len(old)), make([]int32, len(old))
	for a, k := 0, 0; k < len(d.old.idx); k++ {
		o := d.old.idx[k]
		if !d.gone[o] {
			continue
		}
		res := d.old.keys[o]
		for a < len(byRes) && key(byRes[a]) < res {
			a++
		}
		b := a
		for b < len(byRes) && key(byRes[b]) == res {
			b++
		}
		lo[o], hi[o] = int32(a), int32(b)
	}
	_, breakers := any(*new(R)).(circuitbreaker.Rule)
	base := reflect.ValueOf(m.k.defaults(*new(R)))
	used := make([]bool, len(cur))
	var changed, gone, fresh lines
	for o := range old { // by index: a rule is a large struct, copied only when described
		if !d.gone[o] {
			continue
		}
		r := &old[o]
		if breakers {
			m.e.obs.breakerRemoved(any(*r).(circuitbreaker.Rule))
		}
		res := d.old.keys[o]
		best, bestN := -1, 0
		for _, c := range byRes[lo[o]:hi[o]] {
			if used[c] {
				continue
			}
			if hi[o]-lo[o] == 1 {
				best = c // the only candidate: no need to compare
				break
			}
			if n := len(fieldDiff("", reflect.ValueOf(*r), reflect.ValueOf(cur[c]))); best < 0 || n < bestN {
				best, bestN = c, n
			}
		}
		if best < 0 {
			gone.add(func() string { return describeFields(res, reflect.ValueOf(*r), base) })
			continue
		}
		used[best] = true
		a := &cur[best]
		changed.add(func() string {
			return ruleName(res) + ": " + strings.Join(fieldDiff("", reflect.ValueOf(*r), reflect.ValueOf(*a)), ", ")
		})
	}
	for c := range cur {
		if !d.fresh[c] {
			continue
		}
		a := &cur[c]
		if !used[c] {
			fresh.add(func() string { return describeFields(m.k.resource(*a), reflect.ValueOf(*a), base) })
		}
		if breakers {
			m.e.obs.breakerLoaded(any(*a).(circuitbreaker.Rule), m.e.wallTime(now)) // after the removals above
		}
	}
	ev.Changed, ev.Removed, ev.Added = changed.done(), gone.done(), fresh.done()
	return ev
}

func ruleName(resource string) string {
	if resource == "" {
		return "(global)"
	}
	return resource
}

// describeFields names a rule by resource and the fields that differ from
// the kind's defaults: "GET /orders: count=100".
func describeFields(resource string, v, base reflect.Value) string {
	var parts []string
	var walk func(prefix string, v, base reflect.Value)
	walk = func(prefix string, v, base reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || (prefix == "" && f.Name == "Resource") {
				continue
			}
			name := prefix + jsonName(f.Name)
			x, y := v.Field(i), base.Field(i)
			switch {
			case f.Type.Kind() == reflect.Struct:
				walk(name+".", x, y)
			case !reflect.DeepEqual(x.Interface(), y.Interface()):
				parts = append(parts, name+"="+show(x))
			}
		}
	}
	walk("", v, base)
	if len(parts) == 0 {
		return ruleName(resource) + ": defaults"
	}
	return ruleName(resource) + ": " + strings.Join(parts, " ")
}

// fieldDiff lists the fields of two rules of one type that differ, as
// "name old → new", named as in the JSON document (nested:
// "clusterConfig.flowId").
func fieldDiff(prefix string, a, b reflect.Value) []string {
	var out []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		x, y := a.Field(i), b.Field(i)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, fieldDiff(prefix+jsonName(f.Name)+".", x, y)...)
		} else if !sameValue(x, y) {
			out = append(out, fmt.Sprintf("%s%s %s → %s", prefix, jsonName(f.Name), show(x), show(y)))
		}
	}
	return out
}

// sameValue reports whether two fields hold the same value, as
// reflect.DeepEqual does, without boxing the comparable ones: a swap of
// thousands of rules describes some of them field by field.
func sameValue(x, y reflect.Value) bool {
	if x.Kind() != reflect.Interface && x.Type().Comparable() {
		return x.Equal(y)
	}
	return reflect.DeepEqual(x.Interface(), y.Interface())
}

// jsonName turns a Go field name into Java's JSON name: LimitApp →
// limitApp, FlowID → flowId.
func jsonName(goName string) string {
	s := strings.TrimSuffix(goName, "ID")
	if s != goName {
		s += "Id"
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

func show(v reflect.Value) string {
	if v.Kind() == reflect.String {
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface()) // enums print their names
}
