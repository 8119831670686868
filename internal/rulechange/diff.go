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
	kind  *Kind   // the rule's kind: its enums' names
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
			changes = append(changes, Change{Op: "changed", Section: n.Section, Rule: n.Label(), Fields: fcs, kind: n.Kind})
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
	return Change{Op: op, Section: r.Section, Rule: r.Label(), Value: encodeFields(r.Fields), kind: r.Kind, shown: r.shown()}
}

// shown are the rule's fields worth showing: those that differ from the
// kind's defaults, but its resource (the label names it).
func (r Rule) shown() []Field {
	var out []Field
	def := r.Kind.defaults()
	for _, f := range r.Fields {
		if f.Name == "resource" {
			continue
		}
		if d, ok := def[f.Name]; ok && bytes.Equal(d, compact(f.Value)) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// Text is the rule's fields for a person, as a diff line shows an added
// rule: those that differ from the kind's defaults, enums by name
// ("count 5, controlBehavior warmUp"); "" when every field but the
// resource holds its default.
func (r Rule) Text() string { return r.Kind.fieldsText(r.shown()) }

// Names are the names of the rule's enum values, by field
// ({"grade": "QPS", "controlBehavior": "reject"}).
func (r Rule) Names() map[string]string {
	out := map[string]string{}
	for _, f := range r.Fields {
		if enumNames[r.Kind.name][f.Name] == nil {
			continue
		}
		if s := r.Kind.show(f.Name, f.Value); s != string(compact(f.Value)) {
			out[f.Name] = s
		}
	}
	return out
}

func (k *Kind) fieldsText(fs []Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %s", f.Name, k.show(f.Name, f.Value))
	}
	return strings.Join(parts, ", ")
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
			parts[i] = c.fieldText(f)
		}
		return "~ " + c.Rule + ": " + strings.Join(parts, ", ")
	default:
		sign := "+ "
		if c.Op == "removed" {
			sign = "- "
		}
		line := sign + c.Rule
		if t := c.kind.fieldsText(c.shown); t != "" {
			line += ": " + t
		}
		return line
	}
}

// fieldText is one field change for a person: "controlBehavior reject → warmUp".
func (c Change) fieldText(f FieldChange) string {
	return fmt.Sprintf("%s %s → %s", f.Field, c.kind.show(f.Field, f.From), c.kind.show(f.Field, f.To))
}

// MarshalJSON adds what a person reads to the change: its line (Line),
// the text of an added or removed rule's fields, and each field change's
// text and values, enums by name, so that a page shows what the CLI prints.
func (c Change) MarshalJSON() ([]byte, error) {
	type plain Change
	type field struct {
		FieldChange
		Text     string `json:"text"`     // "controlBehavior reject → warmUp"
		FromText string `json:"fromText"` // "reject"
		ToText   string `json:"toText"`   // "warmUp"
	}
	out := struct {
		plain
		Fields []field `json:"fields,omitempty"`
		Line   string  `json:"line"`
		Text   string  `json:"text,omitempty"` // an added or removed rule's fields
	}{plain: plain(c), Line: c.Line()}
	for _, f := range c.Fields {
		out.Fields = append(out.Fields, field{FieldChange: f, Text: c.fieldText(f), FromText: c.kind.show(f.Field, f.From), ToText: c.kind.show(f.Field, f.To)})
	}
	if c.Op != "changed" {
		out.Text = c.kind.fieldsText(c.shown)
	}
	return json.Marshal(out)
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
