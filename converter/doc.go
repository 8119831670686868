// Package converter turns rule documents into rules and back: Java
// Sentinel's JSON, strictly checked.
//
// Each kind has a [Codec] of a JSON array of rules, the document
// Sentinel's datasources read: [FlowRules] (Java FlowRule),
// [CircuitBreakerRules] (DegradeRule), [SystemRules] (SystemRule),
// [AuthorityRules] (AuthorityRule) and [HotspotRules] (ParamFlowRule).
// [RuleSet] reads one object holding several kinds,
//
//	{"flow": [...], "degrade": [...], "system": [...], "authority": [...], "paramFlow": [...]}
//
// which is the whole state: a kind left out means no rules of that kind.
// Codecs hold no state between calls and are safe for concurrent use.
// Besides Convert and Encode, the codecs of this package report what a
// document holds that they accepted but ignored (see Java compatibility),
// and write a value over the document it was read from (see Writing over
// a document); the datasource framework uses both, and so does the CLI.
//
// # Java compatibility
//
// Field names, numeric constants and defaults are Java's: a field left out
// (or null) takes the value Java's constructor gives it (FlowRule: grade
// 1, strategy 0, controlBehavior 0, warmUpPeriodSec 10, maxQueueingTimeMs
// 500, limitApp "default"; DegradeRule: grade 0, minRequestAmount 5,
// statIntervalMs 1000, slowRatioThreshold 1.0, limitApp "default";
// ParamFlowRule: grade 1, durationInSec 1, limitApp "default"; SystemRule:
// every threshold -1; AuthorityRule: strategy 0). A clusterConfig object
// gets the defaults of Java's ClusterFlowConfig (fallbackToLocalWhenFail
// true, sampleCount 10, windowIntervalMs 1000, resourceTimeout 2000,
// clientOfflineTime 2000) or ParamFlowClusterConfig (fallbackToLocalWhenFail
// false, sampleCount 10, windowIntervalMs 1000).
//
// The rule types' zero values stand for the same defaults (their
// WithDefaults methods), so decoded rules carry the defaults, and Encode
// writes a rule with zero fields as Java's numbers: flow.Rule{Resource:
// "r", Count: 2} is written with "grade":1, "limitApp":"default",
// "warmUpPeriodSec":10 and so on. A document's explicit 0 in such a field
// reads as the default too, except where Java refuses 0 whatever the
// rest of the rule: minRequestAmount, statIntervalMs and durationInSec
// must be > 0, and a system threshold of 0 (which Java takes as one that
// blocks all inbound traffic) is refused in favour of -1. A degrade
// rule's slowRatioThreshold 0 (any slow call opens the breaker) reads as
// math.SmallestNonzeroFloat64, which behaves the same, and is written
// back as 0.
//
// Enums are written as Java's numbers and read as numbers or as names in
// any case (the Go values of flow.Grade, which hot-parameter rules share,
// are not Java's numbers, so that its zero value is QPS; the codecs map
// them): "grade": "QPS", "controlBehavior": "warmUp", "strategy":
// "black", "grade": "errorRatio". Circuit breakers also have grade 100,
// "avgRt", Sentinel's average-RT strategy before 1.8, with its
// rtSlowRequestAmount field (default 5); Java 1.8 ignores such a rule.
// Numbers for Java int and long fields may be written 10 or 10.0, not
// 10.5, and must fit the Java type.
//
// Documents written by Sentinel's dashboard load as they are. Its entity
// fields id, app, ip, port, gmtCreate and gmtModified are ignored.
// Param-flow and authority entities nest the rule, {"id": 1, "rule":
// {...}}; the rule inside is used, and rule fields beside it (FastJSON
// writes the entity's getters) must be copies of the rule's. Java getters
// that FastJSON serializes are accepted too: AbstractRule's regex (false
// only: bulwark matches resource names exactly) and ParamFlowRule's
// parsedHotItems (derived from paramFlowItemList, ignored). A
// ParamFlowItem's object may be a JSON number or boolean, which FastJSON
// turns into its text. SystemRule's inherited resource and limitApp are
// accepted and ignored.
//
// As FastJSON (Java Sentinel's parser) does, a document may start with a
// UTF-8 byte order mark and hold comments, /* … */ and // to the end of
// the line, wherever white space may stand: a license header above the
// array, a note beside a rule.
//
// Fields that released Sentinel versions wrote and today's Java ignores
// are accepted and ignored too, each with a warning (a [Problem]) that a
// datasource logs and bulwark validate prints: DegradeRule's cut
// (Sentinel 0.1 to 1.4) and passCount (0.1 to 1.6), ParamFlowRule's
// blockGrade (0.2, renamed grade in 1.3) and the dashboard's avgLoad of
// SystemRuleEntity (up to 1.6.2, highestSystemLoad since). FlowRule, ClusterFlowConfig,
// SystemRule, AuthorityRule, ParamFlowClusterConfig and ParamFlowItem
// never lost a field in a release. Fields that only Sentinel's
// development branches had (FlowRule's clusterLocalCountWhenError,
// ClusterFlowConfig's prefetchCntRatio, ParamFlowRule's paramKey, …) stay
// unknown fields.
//
// # Errors
//
// Anything else is an error: an unknown field, a value of the wrong JSON
// type, an unknown enum value, a number out of range, a rule its Validate
// method rejects. Convert reports every problem of the document at once
// in a [*DecodeError], each with its JSON path ("[2].controlBehavior",
// "flow[0].count"), its line and column, the index and resource of its
// rule, and what was expected; errors.Is tells [ErrSyntax] (not JSON, or
// not the expected shape) from [ErrInvalid] (a value not allowed). A
// problem names its rule by index and resource, wherever the resource
// stands in the rule's object:
//
//	[3] "GET /orders": count: must be >= 0
//	flow[1] "GET /orders": clusterConfig.flowId: expected an integer, found a string
//
// and a document that is not JSON says where: "3:17: not valid JSON:
// expected ',' or ']', found '}'". The converters decode what they are
// given: the size limit of a document belongs to whoever reads it (the
// datasource framework refuses an oversized document while reading it,
// datasource.WithMaxSize).
//
// When every problem is inside individual rules, the error is partial
// ([DecodeError].Partial) and Convert returns, with it, every rule
// without a problem: a lenient consumer applies them, a strict one
// refuses the document. A problem of the document as a whole (not JSON,
// not an array, an empty document, an unknown rule-set key) gives no
// rules.
//
// JSON null as the document means no rules; an empty document is an
// error (write [] for no rules). When a key appears twice in an object,
// the last one wins, as in Java.
//
// # Encoding
//
// Encode writes Java's field names in Java's order, enums as numbers and
// every field, one rule per line, so that Java reads the document and
// Convert gives back equal rules. It refuses rules that would not decode
// (invalid, or an int beyond Java's range) with a *DecodeError, and an
// empty list of rules decodes to nil.
//
// # Writing over a document
//
// Write-back (datasource.Writable's Update, the CLI's set and the fleet
// console's edits) writes a value v over prev, the document v was read
// from, keeping what v does not model, so that changing one threshold
// changes only that threshold:
//
//   - a rule of v equal to a rule of prev (after decoding) is written as
//     prev's text of that rule, byte for byte: entity fields, nulls,
//     legacy fields, the {"rule": …} wrapper, spacing;
//   - a changed rule (see matching below) is prev's text of the rule it
//     replaces with the values that changed rewritten and the fields it
//     now needs added; entity fields, nulls of unchanged fields, regex
//     and the wrapper stay (the copies of a wrapped rule's fields beside
//     it follow the rule), legacy fields and parsedHotItems, which
//     described the old rule, go; gmtModified is not touched;
//   - a new rule is written as Encode writes it; a rule prev has and v
//     has not is dropped, with the comment before it;
//   - the rules are in v's order; the text around them (a header, the
//     comments before each rule, the indentation) is prev's. For a rule
//     set, kind by kind: a kind prev leaves out or sets to null stays so
//     while v has no rules of it, and is added after the others when it
//     has.
//
// Matching: a rule of v is the successor of a rule of prev with the same
// identity: its resource and limitApp, plus, for flow rules, grade,
// strategy and refResource; for circuit breakers, grade; for hotspot
// rules, paramIdx and grade; authority rules by resource alone; system
// rules, which have no identity, by position. Equal rules are paired
// first; the rules of one identity left over are then paired in document
// order, so that when several rules share an identity the first changed
// one of v replaces the first unpaired one of prev. A rule whose identity
// changed (a renamed resource) is a new rule and loses its entity fields.
//
// When prev does not decode (not JSON, a problem of the document as a
// whole), the document written is Encode's. When prev is partial, its
// rules with a problem match nothing, since no value holds them, and are
// dropped. v is checked as Encode checks it, and the result always
// decodes to v: were it not to, the document written is Encode's.
package converter
