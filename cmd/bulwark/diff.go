package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// change is one rule added, removed or changed between two documents.
type change struct {
	Op      string        `json:"op"` // "added", "removed", "changed"
	Section string        `json:"section,omitempty"`
	Rule    string        `json:"rule"` // the rule's label
	Fields  []fieldChange `json:"fields,omitempty"`
	// Value is the whole rule added or removed, canonical.
	Value json.RawMessage `json:"value,omitempty"`

	shown []field // for a rule added or removed: the fields worth showing
}

// fieldChange is one field of a changed rule; nested objects are flattened
// ("clusterConfig.thresholdType"). A field one side lacks is null there.
type fieldChange struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// diffRules compares two rule lists. Rules are matched by identity (resource,
// limitApp and the kind's other identifying fields; system rules by
// position): equal rules pair first, then the rules of one identity left
// over pair in document order.
func diffRules(from, to []rule) []change {
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
				if pass == 0 && !bytes.Equal(encodeFields(o.fields), encodeFields(n.fields)) {
					continue
				}
				pair[j], used[i] = i, true
				break
			}
		}
	}
	var changes []change
	for j, n := range to {
		if pair[j] < 0 {
			changes = append(changes, wholeRule("added", n))
			continue
		}
		if fcs := diffFields("", from[pair[j]].fields, n.fields); len(fcs) > 0 {
			changes = append(changes, change{Op: "changed", Section: n.section, Rule: n.label(), Fields: fcs})
		}
	}
	for i, o := range from {
		if !used[i] {
			changes = append(changes, wholeRule("removed", o))
		}
	}
	return changes
}

func wholeRule(op string, r rule) change {
	c := change{Op: op, Section: r.section, Rule: r.label(), Value: encodeFields(r.fields)}
	def := r.kind.defaults()
	for _, f := range r.fields {
		if f.name == "resource" {
			continue
		}
		if d, ok := def[f.name]; ok && bytes.Equal(d, compact(f.value)) {
			continue
		}
		c.shown = append(c.shown, f)
	}
	return c
}

func diffFields(prefix string, from, to []field) []fieldChange {
	var out []fieldChange
	seen := map[string]bool{}
	find := func(fs []field, name string) json.RawMessage {
		for _, f := range fs {
			if f.name == name {
				return f.value
			}
		}
		return nil
	}
	add := func(name string, a, b json.RawMessage) {
		ca, cb := compact(a), compact(b)
		if bytes.Equal(ca, cb) {
			return
		}
		fa, errA := objectFields(ca)
		fb, errB := objectFields(cb)
		if errA == nil && errB == nil {
			out = append(out, diffFields(prefix+name+".", fa, fb)...)
			return
		}
		out = append(out, fieldChange{Field: prefix + name, From: orNull(ca), To: orNull(cb)})
	}
	for _, f := range to {
		seen[f.name] = true
		add(f.name, find(from, f.name), f.value)
	}
	for _, f := range from {
		if !seen[f.name] {
			add(f.name, f.value, nil)
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

// printChanges writes changes one line each:
//
//	~ GET /orders: count 100 → 200
//	+ GET /items: count 5
//	- GET /old: count 10, controlBehavior 2
func printChanges(e *env, w io.Writer, changes []change) {
	for _, c := range changes {
		switch c.Op {
		case "changed":
			parts := make([]string, len(c.Fields))
			for i, f := range c.Fields {
				parts[i] = fmt.Sprintf("%s %s → %s", f.Field, f.From, f.To)
			}
			fmt.Fprintln(w, e.paint("33", "~ "+c.Rule+": "+strings.Join(parts, ", ")))
		case "added", "removed":
			sign, color := "+ ", "32"
			if c.Op == "removed" {
				sign, color = "- ", "31"
			}
			parts := make([]string, len(c.shown))
			for i, f := range c.shown {
				parts[i] = fmt.Sprintf("%s %s", f.name, compact(f.value))
			}
			line := sign + c.Rule
			if len(parts) > 0 {
				line += ": " + strings.Join(parts, ", ")
			}
			fmt.Fprintln(w, e.paint(color, line))
		}
	}
}

// summary counts changes: "1 rule changed, 1 added, 2 removed".
func summary(changes []change) string {
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

// diffLines renders changes as the lines recorded in the history.
func diffLines(changes []change) []string {
	var b bytes.Buffer
	printChanges(&env{}, &b, changes)
	s := strings.TrimRight(b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
