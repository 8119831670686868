package rulechange

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// PlanSet plans changing fields of the rules sel picks in the document at
// c: the other rules keep their exact text, the rules changed their
// dashboard fields (codec.EncodeOver). kind is the rule kind, "" to detect
// it; command is recorded in the history. A document that does not exist
// or is not valid, or a change that makes a rule invalid, is ErrInvalid.
// On a conflict, plan again: the document is read anew.
func PlanSet(ctx context.Context, c *Center, kind string, sel Selector, as []Assignment, nextName, command string) (*Plan, error) {
	cur, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if cur.Missing {
		return nil, classf(ErrInvalid, "%s does not exist: nothing to set (create it with bulwark apply)", c.display)
	}
	k, err := PickKind(kind, cur.Data, c.name)
	if err != nil {
		return nil, err
	}
	rules, err := k.Rules(cur.Data, false)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid %s document: %w", c.display, k.name, class(ErrInvalid, err))
	}
	if err := sel.apply(rules, as); err != nil {
		return nil, err
	}
	next, err := k.codec.over(cur.Data, k.Encode(rules))
	if err == nil {
		err = k.codec.inEngine(next)
	}
	if err != nil {
		return nil, classf(ErrInvalid, "the changed rule is not valid, nothing written: %w", err)
	}
	p := &Plan{Center: c, Kind: k, Current: cur, Next: next, Base: cur, BaseName: c.display, NextName: nextName, Command: command}
	return p, p.review()
}

// An Assignment is FIELD=VALUE: a field (nested: its path) and a JSON value.
type Assignment struct {
	path  []string
	value json.RawMessage
}

// ParseAssignments parses FIELD=VALUE arguments: VALUE is JSON, or else a
// string; FIELD may be nested (clusterConfig.thresholdType).
func ParseAssignments(args []string) ([]Assignment, error) {
	var as []Assignment
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, classf(ErrArgument, "%q: want FIELD=VALUE", a)
		}
		v := json.RawMessage(value)
		if !json.Valid(v) {
			v, _ = json.Marshal(value)
		}
		as = append(as, Assignment{path: strings.Split(name, "."), value: v})
	}
	return as, nil
}

// holds reports whether the rule's field at a.path has a.value, compared
// as JSON values; a field the rule leaves out holds its zero value (false,
// 0, "" or null).
func (a Assignment) holds(r Rule) bool {
	var want any
	if json.Unmarshal(a.value, &want) != nil {
		return false
	}
	raw := r.Get(a.path[0])
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

// A Selector picks the rules of a resource that a set changes.
type Selector struct {
	Resource string
	LimitApp string // only the rule with this limitApp ("": any)
	Section  string // in a rule set: only rules of this kind ("": any)
	// Where: only rules whose field has the value; a field the rule
	// leaves out holds its zero value (false, 0, "" or null).
	Where []Assignment
	// All changes every rule that matches; else more than one is
	// ErrArgument.
	All bool
}

func (s Selector) apply(rules []Rule, as []Assignment) error {
	var hit []int
	var resources []string
	for i, r := range rules {
		if !slices.Contains(resources, r.Resource()) {
			resources = append(resources, r.Resource())
		}
		if r.Resource() != s.Resource || (s.Section != "" && r.Section != s.Section) {
			continue
		}
		if s.LimitApp != "" {
			var la string
			_ = json.Unmarshal(r.Get("limitApp"), &la)
			if la != s.LimitApp {
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
		if len(s.Where) > 0 || s.LimitApp != "" || s.Section != "" {
			return classf(ErrInvalid, "no rule of resource %q matches the selection (resources: %s)", s.Resource, strings.Join(resources, ", "))
		}
		return classf(ErrInvalid, "no rule of resource %q matches (resources: %s)", s.Resource, strings.Join(resources, ", "))
	case len(hit) > 1 && !s.All:
		labels := make([]string, len(hit))
		for i, h := range hit {
			labels[i] = rules[h].Label()
		}
		return classf(ErrArgument, "%d rules match: %s; narrow with --limit-app, --where or --section, or pass --all", len(hit), strings.Join(labels, "; "))
	}
	for _, h := range hit {
		for _, a := range as {
			fs, err := setField(rules[h].Fields, a.path, a.value)
			if err != nil {
				return classf(ErrArgument, "%s: %w", rules[h].Label(), err)
			}
			rules[h].Fields = fs
		}
	}
	return nil
}

// matches reports whether r holds every --where.
func (s Selector) matches(r Rule) bool {
	for _, w := range s.Where {
		if !w.holds(r) {
			return false
		}
	}
	return true
}

// setField sets the field at path (nested objects) to v; a field must be one
// of the rule's (the canonical form has them all).
func setField(fs []Field, path []string, v json.RawMessage) ([]Field, error) {
	for i, f := range fs {
		if f.Name != path[0] {
			continue
		}
		out := slices.Clone(fs)
		if len(path) == 1 {
			out[i].Value = v
			return out, nil
		}
		inner, err := ObjectFields(f.Value)
		if err != nil { // null: an object absent so far
			inner = nil
		}
		inner, err = setNew(inner, path[1:], v)
		if err != nil {
			return nil, err
		}
		out[i].Value = encodeFields(inner)
		return out, nil
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return nil, fmt.Errorf("no field %q (fields: %s)", path[0], strings.Join(names, ", "))
}

// setNew is setField inside a nested object, where a field may be new (the
// codec checks it).
func setNew(fs []Field, path []string, v json.RawMessage) ([]Field, error) {
	for _, f := range fs {
		if f.Name == path[0] {
			return setField(fs, path, v)
		}
	}
	fs = append(fs, Field{Name: path[0], Value: json.RawMessage("null")})
	return setField(fs, path, v)
}
