// Package hotspot holds hot-parameter rules: Java Sentinel's
// ParamFlowRule and ParamFlowItem.
//
// A [Rule] limits the entries of a resource per value of one argument:
// ParamIdx picks the argument among those given with core.WithArgs
// (negative counts from the end), and every distinct value gets its own
// threshold, Count, per DurationInSec seconds (GradeQPS, "QPS") or in
// flight (GradeThread, "thread"). ParamFlowItemList gives chosen values a
// threshold of their own; an item's Object is the value written as text
// and its ClassType, a Java type name, says how to read it (see
// [ParamFlowItem.Parse]). A QPS rule either rejects above the threshold
// (Reject, 0, "reject"; BurstCount extra tokens allowed) or paces entries
// (RateLimiter, 2, "rateLimiter"; up to MaxQueueingTimeMs of waiting).
// An entry whose argument is missing or nil passes.
//
// # Zero values and Java defaults
//
// Fields hold Java's values and Java's zero values: GradeThread is 0 and a
// DurationInSec of 0 is invalid. When a document leaves a field out, the
// converter applies Java's default: grade 1 (QPS), durationInSec 1,
// controlBehavior 0, limitApp "default". paramIdx has no default: Java
// ignores a rule without one, and the converter rejects it.
package hotspot
