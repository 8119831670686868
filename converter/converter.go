package converter

import (
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// Converter decodes a document into a value. A datasource calls Convert
// with every version of the document it reads.
type Converter[T any] interface {
	Convert(data []byte) (T, error)
}

// Encoder encodes a value into a document, for write-back.
type Encoder[T any] interface {
	Encode(v T) ([]byte, error)
}

// Codec is a Converter and an Encoder of the same document format.
type Codec[T any] interface {
	Converter[T]
	Encoder[T]
}

// kind is everything the codec of one rule type needs.
type kind[T any] struct {
	object *object[T]
	// normalize is the rule type's WithDefaults: Java's default in place
	// of every zero value that stands for one. Decoded rules and rules to
	// encode go through it.
	normalize func(T) T
	validate  func(T) error
	encode    func(T) (any, []string) // the Java-shaped value to marshal, and fields out of Java's int range
	resource  func(*T) string         // the resource, to name a rule in problems
	identity  func(*T) string         // what matches a rule to its previous version (EncodeOver)
	equal     func(a, b *T) bool      // equal after decoding
}

// defaults is the rule a document's object starts from: Java's defaults.
func (k *kind[T]) defaults() T {
	var zero T
	return k.normalize(zero)
}

// check applies the defaults of a decoded rule and validates it.
func (k *kind[T]) check(t *T) error {
	*t = k.normalize(*t)
	return k.validate(*t)
}

// normalizeAll returns rules with their defaults applied, in a new slice.
func (k *kind[T]) normalizeAll(rules []T) []T {
	if len(rules) == 0 {
		return nil
	}
	out := make([]T, len(rules))
	for i, r := range rules {
		out[i] = k.normalize(r)
	}
	return out
}

// normalizeSet returns rs with every rule's defaults applied.
func normalizeSet(rs Rules) Rules {
	return Rules{Flow: flowKind.normalizeAll(rs.Flow), CircuitBreaker: cbKind.normalizeAll(rs.CircuitBreaker),
		System: sysKind.normalizeAll(rs.System), Authority: authKind.normalizeAll(rs.Authority),
		Hotspot: hotKind.normalizeAll(rs.Hotspot)}
}

func (k *kind[T]) read(d *decoder) []T {
	return readList(d, k.object, k.defaults, k.check, k.resource)
}

// list is the codec of a JSON array of rules of one kind.
type list[T any] struct {
	k *kind[T]
}

// Convert decodes a JSON array of rules. null decodes to no rules; an
// empty or blank document is an error. Comments and a leading byte order
// mark are allowed.
//
// On error, the rules returned are nil, unless the error is a
// *DecodeError with Partial set: then they are every rule without a
// problem, in document order.
func (c list[T]) Convert(data []byte) ([]T, error) {
	rules, _, err := c.Inspect(data)
	return rules, err
}

// Inspect is Convert that also returns the warnings: fields accepted and
// ignored because an older Sentinel release wrote them (Err errIgnored),
// in document order. Package internal/codec reaches it.
func (c list[T]) Inspect(data []byte) ([]T, []Problem, error) {
	rules, warnings, _, err := c.decode(data, nil)
	return rules, warnings, err
}

func (c list[T]) decode(data []byte, rec *listRec) ([]T, []Problem, *decoder, error) {
	d, err := start(data)
	if err != nil {
		return nil, nil, nil, err
	}
	d.rec = rec
	rules := c.k.read(d)
	d.end()
	if de := d.result(); de != nil {
		if !de.Partial {
			rules = nil
		}
		return rules, d.warnings, d, de
	}
	return rules, d.warnings, d, nil
}

// Encode writes the rules as a JSON array, one rule per line.
func (c list[T]) Encode(rules []T) ([]byte, error) {
	e := encoder{}
	encodeList(&e, "", c.k, rules)
	return e.result()
}

// EncodeOver writes rules over prev, the document they were read from:
// see the package documentation, "Writing over a document".
func (c list[T]) EncodeOver(prev []byte, rules []T) ([]byte, error) {
	out, _, err := c.encodeOver(prev, rules)
	return out, err
}

var (
	flowKind = &kind[flow.Rule]{flowObject, flow.Rule.WithDefaults, flow.Rule.Validate, encodeFlow,
		func(r *flow.Rule) string { return r.Resource }, flowIdentity, eq[flow.Rule]}
	cbKind = &kind[circuitbreaker.Rule]{cbObject, circuitbreaker.Rule.WithDefaults, circuitbreaker.Rule.Validate, encodeCircuitBreaker,
		func(r *circuitbreaker.Rule) string { return r.Resource }, cbIdentity, eq[circuitbreaker.Rule]}
	sysKind = &kind[system.Rule]{systemObject, system.Rule.WithDefaults, system.Rule.Validate, encodeSystem,
		func(*system.Rule) string { return "" }, func(*system.Rule) string { return "" }, eq[system.Rule]}
	authKind = &kind[authority.Rule]{authorityObject, func(r authority.Rule) authority.Rule { return r }, authority.Rule.Validate, encodeAuthority,
		func(r *authority.Rule) string { return r.Resource }, func(r *authority.Rule) string { return r.Resource }, eq[authority.Rule]}
	hotKind = &kind[hotspot.Rule]{hotspotObject, hotspot.Rule.WithDefaults, hotspot.Rule.Validate, encodeHotspot,
		func(r *hotspot.Rule) string { return r.Resource }, hotspotIdentity, hotspotEqual}
)

// FlowRules decodes and encodes a JSON array of Java FlowRules.
func FlowRules() Codec[[]flow.Rule] {
	return list[flow.Rule]{flowKind}
}

// CircuitBreakerRules decodes and encodes a JSON array of Java
// DegradeRules (plus grade 100, "avgRt", and rtSlowRequestAmount).
func CircuitBreakerRules() Codec[[]circuitbreaker.Rule] {
	return list[circuitbreaker.Rule]{cbKind}
}

// SystemRules decodes and encodes a JSON array of Java SystemRules.
func SystemRules() Codec[[]system.Rule] {
	return list[system.Rule]{sysKind}
}

// AuthorityRules decodes and encodes a JSON array of Java AuthorityRules
// (or of the dashboard's entities wrapping them).
func AuthorityRules() Codec[[]authority.Rule] {
	return list[authority.Rule]{authKind}
}

// HotspotRules decodes and encodes a JSON array of Java ParamFlowRules
// (or of the dashboard's entities wrapping them).
func HotspotRules() Codec[[]hotspot.Rule] {
	return list[hotspot.Rule]{hotKind}
}

// Rules is the value of a rule-set document: rules of every kind, applied
// together by core.Engine.LoadRuleSet.
type Rules = core.RuleSet

// RuleSet decodes and encodes a rule-set document, one JSON object with a
// key per kind:
//
//	{"flow": [...], "degrade": [...], "system": [...], "authority": [...], "paramFlow": [...]}
//
// The document is the whole state: a kind left out (or null) means no
// rules of that kind. Paths in errors start with the key: "flow[2].count".
func RuleSet() Codec[Rules] {
	return ruleSet{}
}

type ruleSet struct{}

// Rule-set keys: Java's names of the kinds.
const (
	keyFlow      = "flow"
	keyDegrade   = "degrade"
	keySystem    = "system"
	keyAuthority = "authority"
	keyParamFlow = "paramFlow"
)

// Convert decodes a rule-set document; see list's Convert (a partial
// value holds, for each kind, its rules without a problem).
func (c ruleSet) Convert(data []byte) (Rules, error) {
	rs, _, err := c.Inspect(data)
	return rs, err
}

// Inspect is Convert that also returns the warnings.
func (c ruleSet) Inspect(data []byte) (Rules, []Problem, error) {
	rs, warnings, _, err := c.decode(data, nil)
	return rs, warnings, err
}

// kindKeys are the rule-set keys, in Encode's order; setRec records the
// lists of a rule set in this order.
var kindKeys = [...]string{keyFlow, keyDegrade, keySystem, keyAuthority, keyParamFlow}

type setRec [len(kindKeys)]listRec

func (c ruleSet) decode(data []byte, recs *setRec) (Rules, []Problem, *decoder, error) {
	var rs Rules
	d, err := start(data)
	if err != nil {
		return rs, nil, nil, err
	}
	// record points d.rec at the record of kind i, afresh: when a key
	// appears twice, the last one wins.
	record := func(i int) {
		if recs != nil {
			recs[i] = listRec{open: -1}
			d.rec = &recs[i]
		}
	}
	switch d.peek() {
	case 'n':
		d.literal("null")
	case '{':
		d.pos++
		for first := true; d.next('}', first); first = false {
			d.at = d.pos
			key, ok := d.key()
			if !ok {
				break
			}
			switch string(key) {
			case keyFlow:
				d.push(keyFlow)
				record(0)
				rs.Flow = flowKind.read(d)
			case keyDegrade:
				d.push(keyDegrade)
				record(1)
				rs.CircuitBreaker = cbKind.read(d)
			case keySystem:
				d.push(keySystem)
				record(2)
				rs.System = sysKind.read(d)
			case keyAuthority:
				d.push(keyAuthority)
				record(3)
				rs.Authority = authKind.read(d)
			case keyParamFlow:
				d.push(keyParamFlow)
				record(4)
				rs.Hotspot = hotKind.read(d)
			default:
				d.push(string(key))
				d.problem(ErrSyntax, "unknown kind: expected flow, degrade, system, authority or paramFlow")
				d.skip()
			}
			d.rec = nil
			d.pop()
		}
	default:
		d.wrongType("an object with flow, degrade, system, authority and paramFlow rules")
	}
	d.end()
	if de := d.result(); de != nil {
		if !de.Partial {
			rs = Rules{}
		}
		return rs, d.warnings, d, de
	}
	return rs, d.warnings, d, nil
}

// Encode writes every kind, an empty array for a kind without rules.
func (c ruleSet) Encode(rs Rules) ([]byte, error) {
	e := encoder{}
	e.buf = append(e.buf, "{\n"...)
	encodeList(&e, keyFlow, flowKind, rs.Flow)
	e.buf = append(e.buf, ",\n"...)
	encodeList(&e, keyDegrade, cbKind, rs.CircuitBreaker)
	e.buf = append(e.buf, ",\n"...)
	encodeList(&e, keySystem, sysKind, rs.System)
	e.buf = append(e.buf, ",\n"...)
	encodeList(&e, keyAuthority, authKind, rs.Authority)
	e.buf = append(e.buf, ",\n"...)
	encodeList(&e, keyParamFlow, hotKind, rs.Hotspot)
	e.buf = append(e.buf, "\n}\n"...)
	return e.result()
}

// EncodeOver writes rs over prev, kind by kind: see the package
// documentation, "Writing over a document". A kind that prev leaves out
// or sets to null stays so when rs has no rules of it.
func (c ruleSet) EncodeOver(prev []byte, rs Rules) ([]byte, error) {
	out, _, err := c.encodeOver(prev, rs)
	return out, err
}
