package rulechange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/codec"
)

// A Kind is a rule document format: one of Sentinel's five rule lists, or
// bulwark's rule set (an object holding several lists).
type Kind struct {
	name string
	// ids are the fields that identify a rule of this kind (rules are
	// matched by them in diffs); none: by position.
	ids   []string
	codec anyCodec
	// minimal is the smallest valid rule of the kind: the other fields of
	// its canonical form are the defaults left out when a rule is shown.
	minimal string
	// extraDefaults are defaults of the fields minimal sets.
	extraDefaults map[string]string
}

// anyCodec is a converter.Codec with its value type hidden: the CLI works on
// documents, and on canonical JSON (converter's Encode of the decoded value)
// to compare and change them.
type anyCodec interface {
	// canonical decodes data strictly and encodes it again: Java's field
	// names, order and numbers, every field, one rule per line.
	canonical(data []byte) (canon []byte, warnings []converter.Problem, err error)
	// format decodes data strictly and encodes it compactly
	// (codec.EncodeCompact): the canonical form people keep.
	format(data []byte) (out []byte, warnings []converter.Problem, err error)
	// over decodes canon (checking it) and writes it over prev, keeping
	// what prev has that the value does not model (codec.EncodeOver).
	over(prev, canon []byte) ([]byte, error)
	// inEngine loads a valid document into an engine of its own, which
	// checks the rules against each other as a service would (a shadow
	// cluster rule may not share an enforcing rule's flowId), and returns
	// its error.
	inEngine(data []byte) error
}

type codecOf[T any] struct {
	c    converter.Codec[T]
	load func(*core.Engine, T) error
}

func (c codecOf[T]) inEngine(data []byte) error {
	v, err := c.c.Convert(data)
	if err != nil {
		return err
	}
	e := core.NewEngine()
	defer func() { _ = e.Close() }()
	return c.load(e, v)
}

func (c codecOf[T]) canonical(data []byte) ([]byte, []converter.Problem, error) {
	v, warns, err := codec.Inspect(c.c, data)
	if err != nil {
		return nil, warns, err
	}
	canon, err := c.c.Encode(v)
	return canon, warns, err
}

func (c codecOf[T]) format(data []byte) ([]byte, []converter.Problem, error) {
	v, warns, err := codec.Inspect(c.c, data)
	if err != nil {
		return nil, warns, err
	}
	out, err := codec.EncodeCompact(c.c, v)
	return out, warns, err
}

func (c codecOf[T]) over(prev, canon []byte) ([]byte, error) {
	v, err := c.c.Convert(canon)
	if err != nil {
		return nil, err
	}
	if len(prev) == 0 {
		return c.c.Encode(v)
	}
	return codec.EncodeOver(c.c, prev, v)
}

// kinds, in the order detection prefers them.
var kinds = []*Kind{
	{name: "flow", ids: []string{"resource", "limitApp", "grade", "strategy", "refResource"}, codec: wrap(converter.FlowRules(), func(e *core.Engine, rs []flow.Rule) error { return e.Flow().Load(rs) }), minimal: `[{"resource":"r"}]`},
	{name: "degrade", ids: []string{"resource", "limitApp", "grade"}, codec: wrap(converter.CircuitBreakerRules(), func(e *core.Engine, rs []circuitbreaker.Rule) error { return e.CircuitBreaker().Load(rs) }), minimal: `[{"resource":"r","timeWindow":1}]`},
	{name: "paramFlow", ids: []string{"resource", "limitApp", "paramIdx", "grade"}, codec: wrap(converter.HotspotRules(), func(e *core.Engine, rs []hotspot.Rule) error { return e.Hotspot().Load(rs) }), minimal: `[{"resource":"r","paramIdx":0}]`},
	{name: "authority", ids: []string{"resource"}, codec: wrap(converter.AuthorityRules(), func(e *core.Engine, rs []authority.Rule) error { return e.Authority().Load(rs) }), minimal: `[{"resource":"r","limitApp":"a"}]`},
	{name: "system", codec: wrap(converter.SystemRules(), func(e *core.Engine, rs []system.Rule) error { return e.System().Load(rs) }), minimal: `[{"qps":1}]`, extraDefaults: map[string]string{"qps": "-1"}},
	{name: "ruleset", codec: wrap(converter.RuleSet(), (*core.Engine).LoadRuleSet)},
}

func wrap[T any](c converter.Codec[T], load func(*core.Engine, T) error) anyCodec {
	return codecOf[T]{c: c, load: load}
}

// sections maps a rule set's keys to the kinds of their lists.
var sections = map[string]string{"flow": "flow", "degrade": "degrade", "system": "system", "authority": "authority", "paramFlow": "paramFlow"}

// aliases are other names of kinds: bulwark's Go names and spellings.
var aliases = map[string]string{"circuitbreaker": "degrade", "hotspot": "paramFlow", "param-flow": "paramFlow", "rule-set": "ruleset"}

func KindNamed(name string) (*Kind, error) {
	if a, ok := aliases[strings.ToLower(name)]; ok {
		name = a
	}
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if strings.EqualFold(k.name, name) {
			return k, nil
		}
		names = append(names, k.name)
	}
	return nil, classf(ErrArgument, "unknown kind %q: want one of %s", name, strings.Join(names, ", "))
}

// detect picks the kind of data: the one whose codec finds the fewest
// problems in it, the first in kinds on a tie, unless the hint (a kind name
// found in the document's key or file name) is among the tied.
func Detect(data []byte, hint string) *Kind {
	object := firstToken(data) == '{'
	best, bestN := kinds[0], math.MaxInt
	var tied []*Kind
	for _, k := range kinds {
		if (k.name == "ruleset") != object {
			continue
		}
		_, _, err := k.codec.canonical(data)
		n := problemCount(err)
		switch {
		case n < bestN:
			best, bestN, tied = k, n, []*Kind{k}
		case n == bestN:
			tied = append(tied, k)
		}
	}
	if hint != "" {
		for _, k := range tied {
			if k.name == hint {
				return k
			}
		}
	}
	return best
}

// hintFrom finds a kind name in a key or file name ("order-service-degrade-rules").
func HintFrom(name string) string {
	n := strings.ToLower(name)
	for _, h := range []struct{ word, kind string }{{"param", "paramFlow"}, {"hotspot", "paramFlow"}, {"degrade", "degrade"}, {"breaker", "degrade"}, {"system", "system"}, {"authority", "authority"}, {"flow", "flow"}} {
		if strings.Contains(n, h.word) {
			return h.kind
		}
	}
	return ""
}

func problemCount(err error) int {
	if err == nil {
		return 0
	}
	var de *converter.DecodeError
	if errors.As(err, &de) {
		return len(de.Problems)
	}
	return math.MaxInt - 1
}

// Field is one field of a rule, in document order.
type Field struct {
	Name  string
	Value json.RawMessage
}

// Rule is one rule of a canonical document.
type Rule struct {
	Section string // the rule set key ("flow", …); "" in a single-kind document
	Kind    *Kind
	Index   int     // in its list
	Fields  []Field // canonical: every field, in Java's order
}

// Get is the value of the field name, nil when the rule has none.
func (r Rule) Get(name string) json.RawMessage {
	for _, f := range r.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// Resource is the rule's resource, "" for rules without one.
func (r Rule) Resource() string {
	var s string
	_ = json.Unmarshal(r.Get("resource"), &s)
	return s
}

// identity is what matches a rule across two versions of a document.
func (r Rule) identity() string {
	if len(r.Kind.ids) == 0 {
		return fmt.Sprintf("%s#%d", r.Section, r.Index)
	}
	var b strings.Builder
	b.WriteString(r.Section)
	for _, id := range r.Kind.ids {
		b.WriteByte(0)
		b.Write(compact(r.Get(id)))
	}
	return b.String()
}

// Label names the rule for a person: its resource, and those of its
// identifying fields that differ from the kind's default
// ("GET /orders (limitApp appA)"); system rules by position.
func (r Rule) Label() string {
	prefix := ""
	if r.Section != "" {
		prefix = r.Section + " "
	}
	if len(r.Kind.ids) == 0 {
		return fmt.Sprintf("%srule #%d", prefix, r.Index+1)
	}
	var extra []string
	def := r.Kind.defaults()
	for _, id := range r.Kind.ids[1:] {
		v := compact(r.Get(id))
		if d, ok := def[id]; ok && bytes.Equal(d, v) && id != "paramIdx" {
			continue
		}
		extra = append(extra, id+" "+r.Kind.show(id, v))
	}
	l := prefix + r.Resource()
	if len(extra) > 0 {
		l += " (" + strings.Join(extra, ", ") + ")"
	}
	return l
}

// defaults are the canonical values of a minimal rule of the kind.
func (k *Kind) defaults() map[string]json.RawMessage {
	defaultsOnce.Do(func() {
		defaultValues = map[string]map[string]json.RawMessage{}
		for _, k := range kinds {
			m := map[string]json.RawMessage{}
			if k.minimal != "" {
				if canon, _, err := k.codec.canonical([]byte(k.minimal)); err == nil {
					set, _ := ObjectFields([]byte(strings.Trim(k.minimal, "[]")))
					if rules, err := parseRules(k, canon); err == nil && len(rules) == 1 {
						for _, f := range rules[0].Fields {
							if !slices.ContainsFunc(set, func(g Field) bool { return g.Name == f.Name }) {
								m[f.Name] = compact(f.Value)
							}
						}
					}
					for name, v := range k.extraDefaults {
						m[name] = []byte(v)
					}
				}
			}
			defaultValues[k.name] = m
		}
	})
	return defaultValues[k.name]
}

var (
	defaultsOnce  sync.Once
	defaultValues map[string]map[string]json.RawMessage
)

// parseRules splits a canonical document of kind k into its rules.
func parseRules(k *Kind, canon []byte) ([]Rule, error) {
	if k.name != "ruleset" {
		return parseList(k, "", canon)
	}
	secs, err := ObjectFields(canon)
	if err != nil {
		return nil, err
	}
	var all []Rule
	for _, s := range secs {
		sk, err := KindNamed(sections[s.Name])
		if err != nil {
			return nil, err
		}
		rules, err := parseList(sk, s.Name, s.Value)
		if err != nil {
			return nil, err
		}
		all = append(all, rules...)
	}
	return all, nil
}

func parseList(k *Kind, section string, data []byte) ([]Rule, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("canonical document: %w", err)
	}
	rules := make([]Rule, 0, len(items))
	for i, it := range items {
		fs, err := ObjectFields(it)
		if err != nil {
			return nil, err
		}
		rules = append(rules, Rule{Section: section, Kind: k, Index: i, Fields: fs})
	}
	return rules, nil
}

// ObjectFields returns the fields of a JSON object in their order.
func ObjectFields(data []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %s", abbrev(data))
	}
	var fs []Field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fs = append(fs, Field{Name: name, Value: v})
	}
	return fs, nil
}

// Encode writes rules back as a canonical document of kind k.
func (k *Kind) Encode(rules []Rule) []byte {
	var b bytes.Buffer
	writeList := func(rs []Rule, indent string) {
		b.WriteString("[")
		for i, r := range rs {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  ")
			b.Write(encodeFields(r.Fields))
		}
		if len(rs) > 0 {
			b.WriteString("\n" + indent)
		}
		b.WriteString("]")
	}
	if k.name != "ruleset" {
		writeList(rules, "")
		b.WriteString("\n")
		return b.Bytes()
	}
	var order []string
	bySection := map[string][]Rule{}
	for _, r := range rules {
		if _, ok := bySection[r.Section]; !ok {
			order = append(order, r.Section)
		}
		bySection[r.Section] = append(bySection[r.Section], r)
	}
	b.WriteString("{")
	for i, s := range order {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  %q: ", s)
		writeList(bySection[s], "  ")
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

func encodeFields(fs []Field) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, f := range fs {
		if i > 0 {
			b.WriteString(",")
		}
		name, _ := json.Marshal(f.Name)
		b.Write(name)
		b.WriteString(":")
		b.Write(compact(f.Value))
	}
	b.WriteString("}")
	return b.Bytes()
}

func compact(v json.RawMessage) []byte {
	if v == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

func abbrev(b []byte) string {
	s := string(b)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// firstToken is the first character of data that is not a byte order mark,
// white space or a comment: '{' for a rule set, '[' for a list of rules.
func firstToken(data []byte) byte {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for len(data) > 0 {
		switch {
		case data[0] == ' ' || data[0] == '\t' || data[0] == '\n' || data[0] == '\r':
			data = data[1:]
		case bytes.HasPrefix(data, []byte("//")):
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				return 0
			}
			data = data[i+1:]
		case bytes.HasPrefix(data, []byte("/*")):
			i := bytes.Index(data[2:], []byte("*/"))
			if i < 0 {
				return 0
			}
			data = data[i+4:]
		default:
			return data[0]
		}
	}
	return 0
}

// Name is the kind's name: flow, degrade, system, authority, paramFlow or
// ruleset.
func (k *Kind) Name() string { return k.name }

// Canonical decodes data strictly and encodes it again: Java's field
// names, order and numbers, every field, one rule per line. It returns the
// warnings (fields of older Sentinel releases that are ignored), and the
// converter's error (a *converter.DecodeError) when data is not valid.
func (k *Kind) Canonical(data []byte) (canon []byte, warnings []converter.Problem, err error) {
	return k.codec.canonical(data)
}

// Format decodes data strictly and writes it in the canonical form people
// keep: each rule with the fields that differ from Java's defaults, in
// Java's field order, one rule per line (codec.EncodeCompact). It returns
// the warnings and the converter's error as Canonical does.
func (k *Kind) Format(data []byte) (out []byte, warnings []converter.Problem, err error) {
	return k.codec.format(data)
}

// Over decodes canon (checking it) and writes it over prev, keeping what
// prev has that the rule types do not model (codec.EncodeOver).
func (k *Kind) Over(prev, canon []byte) ([]byte, error) { return k.codec.over(prev, canon) }

// Rules decodes a document of kind k into its canonical rules; a missing
// document has none.
func (k *Kind) Rules(data []byte, missing bool) ([]Rule, error) {
	if missing {
		return nil, nil
	}
	canon, _, err := k.codec.canonical(data)
	if err != nil {
		return nil, err
	}
	return parseRules(k, canon)
}

// Empty is an empty document of kind k: no rules.
func (k *Kind) Empty() []byte {
	if k.name == "ruleset" {
		return []byte("{}\n")
	}
	return []byte("[]\n")
}

// PickKind is the kind named (the caller's choice; "" for none), else the
// kind detected in data, name (a key or file name) being a hint.
func PickKind(named string, data []byte, name string) (*Kind, error) {
	if named != "" {
		return KindNamed(named)
	}
	return Detect(data, HintFrom(filepath.Base(name))), nil
}
