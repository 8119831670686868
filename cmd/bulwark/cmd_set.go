package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"time"
)

func init() {
	register(&command{
		name: "set", args: "SOURCE RESOURCE FIELD=VALUE...", summary: "change fields of one rule (read-modify-write, retried on conflict)",
		help: `Changes fields of the rule of RESOURCE: reads the document, changes the
fields, checks the result, and writes it with compare-and-set; when another
writer got in between it reads again and starts over (up to 10 times), so no
one's edit is lost. Only the fields named change: the other rules keep their
exact text, this rule its dashboard fields (id, gmtCreate, …).

VALUE is JSON (200, true, "text") or else a string (grade=QPS works: enums
take their names). FIELD may be nested: clusterConfig.thresholdType=1.
When several rules have RESOURCE, narrow with --limit-app, --where FIELD=VALUE
(repeatable; a field the rule leaves out matches false, 0, "" and null) and
--section in a rule set, or change them all with --all. Turning on a shadow
rule that sits beside the enforcing rule of its resource:

  bulwark set etcd://127.0.0.1:2379/bulwark/order-service/prod/flow "GET /orders" count=200
  bulwark set SOURCE "GET /orders" shadow=false --where shadow=true`,
		run: runSet,
	})
}

const setAttempts = 10

func runSet(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["set"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	changeFlags(fs, &o)
	var sel selector
	fs.StringVar(&sel.limitApp, "limit-app", "", "only the rule with this limitApp")
	fs.StringVar(&sel.section, "section", "", "in a rule set: only rules of this kind (flow, degrade, system, authority, paramFlow)")
	fs.BoolVar(&sel.all, "all", false, "change every rule that matches")
	var where []string
	fs.Func("where", "only rules whose FIELD has VALUE (FIELD=VALUE, repeatable)", func(s string) error {
		where = append(where, s)
		return nil
	})
	pos, err := parse(e, c, fs, args, 3, -1)
	if err != nil {
		return err
	}
	sel.resource = pos[1]
	if sel.where, err = assignments(where); err != nil {
		return err
	}
	as, err := assignments(pos[2:])
	if err != nil {
		return err
	}
	o.yes = true // set is its own confirmation
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	pause := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		cur, err := ctr.read(ctx)
		if err != nil {
			return err
		}
		if cur.Missing {
			return failf(exitInvalid, "%s does not exist: nothing to set (create it with bulwark apply)", ctr.display)
		}
		k, err := pickKind(&o, cur.Data, ctr.name)
		if err != nil {
			return err
		}
		rules, err := rulesOf(k, cur.Data, false)
		if err != nil {
			printFindings(e.stderr, findings(ctr.display, err, nil), false)
			return failf(exitInvalid, "%s is not a valid %s document: fix it with bulwark apply or edit", ctr.display, k.name)
		}
		if err := sel.apply(rules, as); err != nil {
			return err
		}
		next, err := k.codec.over(cur.Data, encodeRules(k, rules))
		if err == nil {
			err = k.codec.inEngine(next)
		}
		if err != nil {
			return failf(exitInvalid, "the changed rule is not valid, nothing written: %w", err)
		}
		p := &proposal{c: ctr, k: k, cur: cur, next: next, name: "after set " + strings.Join(pos[2:], " "), command: "set " + strings.Join(pos[1:], " ")}
		err = p.carry(ctx, e, &o)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitConflict || attempt == setAttempts {
			return err
		}
		fmt.Fprintf(e.stderr, "%s changed meanwhile: reading it again (attempt %d of %d)\n", ctr.display, attempt+1, setAttempts)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause/2 + rand.N(pause/2)):
		}
		pause = min(2*pause, time.Second)
	}
}

type assignment struct {
	path  []string
	value json.RawMessage
}

// assignments parses FIELD=VALUE arguments: VALUE is JSON, or else a
// string.
func assignments(args []string) ([]assignment, error) {
	var as []assignment
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, failf(exitUsage, "%q: want FIELD=VALUE", a)
		}
		v := json.RawMessage(value)
		if !json.Valid(v) {
			v, _ = json.Marshal(value)
		}
		as = append(as, assignment{path: strings.Split(name, "."), value: v})
	}
	return as, nil
}

// holds reports whether the rule's field at a.path has a.value, compared
// as JSON values; a field the rule leaves out holds its zero value (false,
// 0, "" or null).
func (a assignment) holds(r rule) bool {
	var want any
	if json.Unmarshal(a.value, &want) != nil {
		return false
	}
	raw := r.get(a.path[0])
	for _, name := range a.path[1:] {
		var inner map[string]json.RawMessage
		if raw == nil || json.Unmarshal(raw, &inner) != nil {
			raw = nil
			break
		}
		raw = inner[name]
	}
	var got any
	if raw == nil || json.Unmarshal(raw, &got) != nil || got == nil {
		return want == nil || want == false || want == 0.0 || want == ""
	}
	return reflect.DeepEqual(got, want)
}

// selector picks the rules set changes.
type selector struct {
	resource, limitApp, section string
	where                       []assignment
	all                         bool
}

func (s selector) apply(rules []rule, as []assignment) error {
	var hit []int
	var resources []string
	for i, r := range rules {
		if !slices.Contains(resources, r.resource()) {
			resources = append(resources, r.resource())
		}
		if r.resource() != s.resource || (s.section != "" && r.section != s.section) {
			continue
		}
		if s.limitApp != "" {
			var la string
			_ = json.Unmarshal(r.get("limitApp"), &la)
			if la != s.limitApp {
				continue
			}
		}
		if !s.matches(r) {
			continue
		}
		hit = append(hit, i)
	}
	switch {
	case len(hit) == 0:
		if len(s.where) > 0 || s.limitApp != "" || s.section != "" {
			return failf(exitInvalid, "no rule of resource %q matches the selection (resources: %s)", s.resource, strings.Join(resources, ", "))
		}
		return failf(exitInvalid, "no rule of resource %q matches (resources: %s)", s.resource, strings.Join(resources, ", "))
	case len(hit) > 1 && !s.all:
		labels := make([]string, len(hit))
		for i, h := range hit {
			labels[i] = rules[h].label()
		}
		return failf(exitUsage, "%d rules match: %s; narrow with --limit-app, --where or --section, or pass --all", len(hit), strings.Join(labels, "; "))
	}
	for _, h := range hit {
		for _, a := range as {
			fs, err := setField(rules[h].fields, a.path, a.value)
			if err != nil {
				return fail(exitUsage, fmt.Errorf("%s: %w", rules[h].label(), err))
			}
			rules[h].fields = fs
		}
	}
	return nil
}

// matches reports whether r holds every --where.
func (s selector) matches(r rule) bool {
	for _, w := range s.where {
		if !w.holds(r) {
			return false
		}
	}
	return true
}

// setField sets the field at path (nested objects) to v; a field must be one
// of the rule's (the canonical form has them all).
func setField(fs []field, path []string, v json.RawMessage) ([]field, error) {
	for i, f := range fs {
		if f.name != path[0] {
			continue
		}
		out := slices.Clone(fs)
		if len(path) == 1 {
			out[i].value = v
			return out, nil
		}
		inner, err := objectFields(f.value)
		if err != nil { // null: an object absent so far
			inner = nil
		}
		inner, err = setNew(inner, path[1:], v)
		if err != nil {
			return nil, err
		}
		out[i].value = encodeFields(inner)
		return out, nil
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return nil, fmt.Errorf("no field %q (fields: %s)", path[0], strings.Join(names, ", "))
}

// setNew is setField inside a nested object, where a field may be new (the
// codec checks it).
func setNew(fs []field, path []string, v json.RawMessage) ([]field, error) {
	for _, f := range fs {
		if f.name == path[0] {
			return setField(fs, path, v)
		}
	}
	fs = append(fs, field{name: path[0], value: json.RawMessage("null")})
	return setField(fs, path, v)
}
