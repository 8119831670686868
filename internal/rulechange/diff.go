package rulechange

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Change is one rule added, removed or changed between two documents.
type Change struct {
	Op      string        `json:"op"` // "added", "removed", "changed"
	Section string        `json:"section,omitempty"`
	Rule    string        `json:"rule"` // the rule's label
	Fields  []FieldChange `json:"fields,omitempty"`
	// Value is the whole rule added or removed, canonical.
	Value json.RawMessage `json:"value,omitempty"`

	shown []Field // for a rule added or removed: the fields worth showing
}

// FieldChange is one field of a changed rule; nested objects are flattened
// ("clusterConfig.thresholdType"). A field one side lacks is null there.
type FieldChange struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// Diff compares two rule lists. Rules are matched by identity (resource,
// limitApp and the kind's other identifying fields; system rules by
// position): equal rules pair first, then the rules of one identity left
// over pair in document order.
func Diff(from, to []Rule) []Change {
	used := make([]bool, len(from))
	pair := make([]int, len(to))
	for j := range pair {
		pair[j] = -1
	}
	for pass := 0; pass < 2; pass++ {
		for j, n := range to {
			if pair[j] >= 0 {
				continue
			}
			for i, o := range from {
				if used[i] || o.identity() != n.identity() {
					continue
				}
				if pass == 0 && !bytes.Equal(encodeFields(o.Fields), encodeFields(n.Fields)) {
					continue
				}
				pair[j], used[i] = i, true
				break
			}
		}
	}
	var changes []Change
	for j, n := range to {
		if pair[j] < 0 {
			changes = append(changes, wholeRule("added", n))
			continue
		}
		if fcs := diffFields("", from[pair[j]].Fields, n.Fields); len(fcs) > 0 {
			changes = append(changes, Change{Op: "changed", Section: n.Section, Rule: n.Label(), Fields: fcs})
		}
	}
	for i, o := range from {
		if !used[i] {
			changes = append(changes, wholeRule("removed", o))
		}
	}
	return changes
}

func wholeRule(op string, r Rule) Change {
	c := Change{Op: op, Section: r.Section, Rule: r.Label(), Value: encodeFields(r.Fields)}
	def := r.Kind.defaults()
	for _, f := range r.Fields {
		if f.Name == "resource" {
			continue
		}
		if d, ok := def[f.Name]; ok && bytes.Equal(d, compact(f.Value)) {
			continue
		}
		c.shown = append(c.shown, f)
	}
	return c
}

func diffFields(prefix string, from, to []Field) []FieldChange {
	var out []FieldChange
	seen := map[string]bool{}
	find := func(fs []Field, name string) json.RawMessage {
		for _, f := range fs {
			if f.Name == name {
				return f.Value
			}
		}
		return nil
	}
	add := func(name string, a, b json.RawMessage) {
		ca, cb := compact(a), compact(b)
		if bytes.Equal(ca, cb) {
			return
		}
		fa, errA := ObjectFields(ca)
		fb, errB := ObjectFields(cb)
		if errA == nil && errB == nil {
			out = append(out, diffFields(prefix+name+".", fa, fb)...)
			return
		}
		out = append(out, FieldChange{Field: prefix + name, From: orNull(ca), To: orNull(cb)})
	}
	for _, f := range to {
		seen[f.Name] = true
		add(f.Name, find(from, f.Name), f.Value)
	}
	for _, f := range from {
		if !seen[f.Name] {
			add(f.Name, f.Value, nil)
		}
	}
	return out
}

func orNull(v []byte) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// Line is the change on one line, as diffs and the history show it:
//
//	~ GET /orders: count 100 → 200
//	+ GET /items: count 5
//	- GET /old: count 10, controlBehavior 2
func (c Change) Line() string {
	switch c.Op {
	case "changed":
		parts := make([]string, len(c.Fields))
		for i, f := range c.Fields {
			parts[i] = fmt.Sprintf("%s %s → %s", f.Field, f.From, f.To)
		}
		return "~ " + c.Rule + ": " + strings.Join(parts, ", ")
	default:
		sign := "+ "
		if c.Op == "removed" {
			sign = "- "
		}
		parts := make([]string, len(c.shown))
		for i, f := range c.shown {
			parts[i] = fmt.Sprintf("%s %s", f.Name, compact(f.Value))
		}
		line := sign + c.Rule
		if len(parts) > 0 {
			line += ": " + strings.Join(parts, ", ")
		}
		return line
	}
}

// Summary counts changes: "1 rule changed, 1 added, 2 removed".
func Summary(changes []Change) string {
	var added, removed, changed int
	for _, c := range changes {
		switch c.Op {
		case "added":
			added++
		case "removed":
			removed++
		default:
			changed++
		}
	}
	if added+removed+changed == 0 {
		return "no changes"
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{changed, "changed"}, {added, "added"}, {removed, "removed"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	noun := "rules"
	if added+removed+changed == 1 {
		noun = "rule"
	}
	return fmt.Sprintf("%d %s: %s", added+removed+changed, noun, strings.Join(parts, ", "))
}

// Lines are the changes' lines (Change.Line), as recorded in the history.
func Lines(changes []Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Line())
	}
	return out
}
