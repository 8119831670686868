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

// DefaultMaxSize is the document size limit unless WithMaxSize says
// otherwise: 4 MiB.
const DefaultMaxSize = 4 << 20

// Option configures a codec.
type Option func(*options)

type options struct {
	maxSize int
}

// WithMaxSize sets the largest document, in bytes, that Convert accepts
// and Encode produces; beyond it they return an error wrapping
// ErrTooLarge. n <= 0 removes the limit.
func WithMaxSize(n int) Option {
	return func(o *options) { o.maxSize = n }
}

func newOptions(opts []Option) options {
	o := options{maxSize: DefaultMaxSize}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// kind is everything the codec of one rule type needs.
type kind[T any] struct {
	object   *object[T]
	defaults func() T
	validate func(T) error
	encode   func(T) (any, []string) // the Java-shaped value to marshal, and fields out of Java's int range
}

// list is the codec of a JSON array of rules of one kind.
type list[T any] struct {
	k    *kind[T]
	opts options
}

// Convert decodes a JSON array of rules. null decodes to no rules;
// an empty or blank document is an error.
func (c list[T]) Convert(data []byte) ([]T, error) {
	d, err := start(data, c.opts.maxSize)
	if err != nil {
		return nil, err
	}
	rules := readList(d, c.k.object, c.k.defaults, c.k.validate)
	d.end()
	if err := d.result(); err != nil {
		return nil, err
	}
	return rules, nil
}

// Encode writes the rules as a JSON array, one rule per line.
func (c list[T]) Encode(rules []T) ([]byte, error) {
	e := encoder{maxSize: c.opts.maxSize}
	encodeList(&e, "", c.k, rules)
	return e.result()
}

var (
	flowKind = &kind[flow.Rule]{flowObject, flowDefaults, flow.Rule.Validate, encodeFlow}
	cbKind   = &kind[circuitbreaker.Rule]{cbObject, cbDefaults, circuitbreaker.Rule.Validate, encodeCircuitBreaker}
	sysKind  = &kind[system.Rule]{systemObject, systemDefaults, system.Rule.Validate, encodeSystem}
	authKind = &kind[authority.Rule]{authorityObject, authorityDefaults, authority.Rule.Validate, encodeAuthority}
	hotKind  = &kind[hotspot.Rule]{hotspotObject, hotspotDefaults, hotspot.Rule.Validate, encodeHotspot}
)

// FlowRules decodes and encodes a JSON array of Java FlowRules.
func FlowRules(opts ...Option) Codec[[]flow.Rule] {
	return list[flow.Rule]{flowKind, newOptions(opts)}
}

// CircuitBreakerRules decodes and encodes a JSON array of Java
// DegradeRules (plus grade 100, "avgRt", and rtSlowRequestAmount).
func CircuitBreakerRules(opts ...Option) Codec[[]circuitbreaker.Rule] {
	return list[circuitbreaker.Rule]{cbKind, newOptions(opts)}
}

// SystemRules decodes and encodes a JSON array of Java SystemRules.
func SystemRules(opts ...Option) Codec[[]system.Rule] {
	return list[system.Rule]{sysKind, newOptions(opts)}
}

// AuthorityRules decodes and encodes a JSON array of Java AuthorityRules
// (or of the dashboard's entities wrapping them).
func AuthorityRules(opts ...Option) Codec[[]authority.Rule] {
	return list[authority.Rule]{authKind, newOptions(opts)}
}

// HotspotRules decodes and encodes a JSON array of Java ParamFlowRules
// (or of the dashboard's entities wrapping them).
func HotspotRules(opts ...Option) Codec[[]hotspot.Rule] {
	return list[hotspot.Rule]{hotKind, newOptions(opts)}
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
func RuleSet(opts ...Option) Codec[Rules] {
	return ruleSet{newOptions(opts)}
}

type ruleSet struct{ opts options }

// Rule-set keys: Java's names of the kinds.
const (
	keyFlow      = "flow"
	keyDegrade   = "degrade"
	keySystem    = "system"
	keyAuthority = "authority"
	keyParamFlow = "paramFlow"
)

func (c ruleSet) Convert(data []byte) (Rules, error) {
	var rs Rules
	d, err := start(data, c.opts.maxSize)
	if err != nil {
		return rs, err
	}
	switch d.peek() {
	case 'n':
		d.literal("null")
	case '{':
		d.pos++
		for first := true; d.next('}', first); first = false {
			key, ok := d.key()
			if !ok {
				break
			}
			switch string(key) {
			case keyFlow:
				d.push(keyFlow)
				rs.Flow = readList(d, flowKind.object, flowKind.defaults, flowKind.validate)
			case keyDegrade:
				d.push(keyDegrade)
				rs.CircuitBreaker = readList(d, cbKind.object, cbKind.defaults, cbKind.validate)
			case keySystem:
				d.push(keySystem)
				rs.System = readList(d, sysKind.object, sysKind.defaults, sysKind.validate)
			case keyAuthority:
				d.push(keyAuthority)
				rs.Authority = readList(d, authKind.object, authKind.defaults, authKind.validate)
			case keyParamFlow:
				d.push(keyParamFlow)
				rs.Hotspot = readList(d, hotKind.object, hotKind.defaults, hotKind.validate)
			default:
				d.push(string(key))
				d.problem(ErrSyntax, "unknown kind: expected flow, degrade, system, authority or paramFlow")
				d.skip()
			}
			d.pop()
		}
	default:
		d.wrongType("an object with flow, degrade, system, authority and paramFlow rules")
	}
	d.end()
	if err := d.result(); err != nil {
		return Rules{}, err
	}
	return rs, nil
}

// Encode writes every kind, an empty array for a kind without rules.
func (c ruleSet) Encode(rs Rules) ([]byte, error) {
	e := encoder{maxSize: c.opts.maxSize}
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
