package converter

import (
	"bytes"
	"encoding/json"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
)

// EncodeCompact writes the rules as Encode does, each rule without the
// fields that hold their defaults: the compact canonical form, which
// package internal/codec describes and reaches.
func (c list[T]) EncodeCompact(rules []T) ([]byte, error) {
	full, err := c.Encode(rules)
	if err != nil {
		return nil, err
	}
	return compactList(full, defaultsOf(c.k), "  "), nil
}

// EncodeCompact writes the kinds that have rules, each rule without the
// fields that hold their defaults.
func (c ruleSet) EncodeCompact(rs Rules) ([]byte, error) {
	full, err := c.Encode(rs)
	if err != nil {
		return nil, err
	}
	var lists map[string]json.RawMessage
	if err := json.Unmarshal(full, &lists); err != nil {
		return nil, err
	}
	defs := map[string]ruleDefaults{keyFlow: defaultsOf(flowKind), keyDegrade: defaultsOf(cbKind), keySystem: defaultsOf(sysKind),
		keyAuthority: defaultsOf(authKind), keyParamFlow: defaultsOf(hotKind)}
	var b bytes.Buffer
	b.WriteString("{")
	n := 0
	for _, key := range kindKeys {
		l := compactList(lists[key], defs[key], "    ")
		if bytes.Equal(l, []byte("[]\n")) {
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		b.WriteString("\n  \"" + key + "\": ")
		b.Write(bytes.TrimSuffix(l, []byte("\n")))
	}
	if n > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// ruleDefaults are the JSON values a rule of one kind takes for the
// fields a document leaves out, and of the fields of its nested objects.
type ruleDefaults struct {
	top    map[string][]byte
	nested map[string]map[string][]byte
	keep   map[string]bool // written even when they hold the default
}

// defaultsOf computes the defaults of k's rules: the encoding of its
// default rule, and of a rule whose nested objects are empty (their
// defaults).
func defaultsOf[T any](k *kind[T]) ruleDefaults {
	d := ruleDefaults{top: map[string][]byte{}, nested: map[string]map[string][]byte{}, keep: map[string]bool{"resource": true}}
	for i, f := range k.object.fields {
		if k.object.required&(1<<i) != 0 {
			d.keep[f.name] = true
		}
	}
	v, _ := k.encode(k.defaults())
	if b, err := json.Marshal(v); err == nil {
		for _, f := range jsonMembers(b) {
			d.top[f.name] = f.value
		}
	}
	var probe string
	switch any(k).(type) {
	case *kind[flow.Rule]:
		probe = `[{"resource":"r","clusterConfig":{}}]`
	case *kind[hotspot.Rule]:
		probe = `[{"resource":"r","paramIdx":0,"clusterConfig":{}}]`
	default:
		return d
	}
	rules, err := list[T]{k}.Convert([]byte(probe))
	if err != nil || len(rules) != 1 {
		return d
	}
	v, _ = k.encode(k.normalize(rules[0]))
	b, err := json.Marshal(v)
	if err != nil {
		return d
	}
	for _, f := range jsonMembers(b) {
		if len(f.value) > 0 && f.value[0] == '{' {
			m := map[string][]byte{}
			for _, g := range jsonMembers(f.value) {
				m[g.name] = g.value
			}
			d.nested[f.name] = m
		}
	}
	return d
}

// member is one member of a JSON object, its value compact.
type member struct {
	name  string
	value []byte
}

// jsonMembers returns the members of the JSON object data in their order; nil
// when data is not an object.
func jsonMembers(data []byte) []member {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		var b bytes.Buffer
		if json.Compact(&b, v) != nil {
			return nil
		}
		out = append(out, member{name, b.Bytes()})
	}
	return out
}

// compactList rewrites the JSON array of rules data (Encode's), one rule a
// line indented by indent, each without the members that hold d's
// defaults.
func compactList(data []byte, d ruleDefaults, indent string) []byte {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil || len(items) == 0 {
		return []byte("[]\n")
	}
	var b bytes.Buffer
	b.WriteString("[")
	for i, it := range items {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + indent)
		b.Write(compactObject(it, d.top, d.nested, d.keep))
	}
	b.WriteString("\n" + indent[2:] + "]\n")
	return b.Bytes()
}

// compactObject writes the object data without the members whose value is
// their default (nested objects member by member), keeping keep.
func compactObject(data []byte, top map[string][]byte, nested map[string]map[string][]byte, keep map[string]bool) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	n := 0
	for _, m := range jsonMembers(data) {
		v := m.value
		if def, ok := top[m.name]; ok && bytes.Equal(def, v) && !keep[m.name] {
			continue
		}
		if inner, ok := nested[m.name]; ok && len(v) > 0 && v[0] == '{' {
			v = compactObject(v, inner, nil, nil)
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		name, _ := json.Marshal(m.name)
		b.Write(name)
		b.WriteString(":")
		b.Write(v)
	}
	b.WriteString("}")
	return b.Bytes()
}
