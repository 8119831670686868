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
// Enums are written as Java's numbers and read as numbers or as names in
// any case: "grade": "QPS", "controlBehavior": "warmUp", "strategy":
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
// # Errors
//
// Anything else is an error: an unknown field, a value of the wrong JSON
// type, an unknown enum value, a number out of range, a rule its Validate
// method rejects. Convert reports every problem of the document at once
// in a [*DecodeError], each with its JSON path ("[2].controlBehavior",
// "flow[0].count") and what was expected; errors.Is tells [ErrSyntax]
// (not JSON, or not the expected shape) from [ErrInvalid] (a value not
// allowed). A document over the size limit ([WithMaxSize], 4 MiB by
// default) fails with [ErrTooLarge] before it is read.
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
package converter
