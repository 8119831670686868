// Package hotspot holds hot-parameter rules: Java Sentinel's
// ParamFlowRule and ParamFlowItem.
//
// A [Rule] limits the entries of a resource per value of one argument:
// ParamIdx picks the argument among those given with core.WithArgs
// (negative counts from the end), and every distinct value gets its own
// threshold, Count, per DurationInSec seconds (flow.GradeQPS, "QPS") or
// in flight (flow.GradeThread, "thread"): the rule uses package flow's
// grades and behaviors, as Java's ParamFlowRule uses FlowRule's constants.
// ParamFlowItemList gives chosen values a threshold of their own; an
// item's Object is the value written as text and its ClassType, a Java
// type name, says how to read it (see [ParamFlowItem]). A QPS rule either
// rejects above the threshold (flow.Reject, 0, "reject"; BurstCount extra
// tokens allowed) or paces entries (flow.RateLimiter, 2, "rateLimiter";
// up to MaxQueueingTimeMs of waiting); Java's param flow has no warm-up.
// An entry whose argument is missing or nil passes.
//
// # Limiters
//
// The engine (package core) makes one limiter per rule and keeps it (with
// its per-value state) across rule swaps while the rule is unchanged. Per
// value:
//
//   - flow.Reject (QPS): Java's token bucket. A value starts with Count +
//     BurstCount tokens (or its item's count + BurstCount); an entry takes
//     its count of tokens or is blocked. Tokens come back in proportion to
//     the time passed (Count per DurationInSec), but only once a whole
//     DurationInSec has passed since the last refill, and never above
//     Count + BurstCount.
//   - flow.RateLimiter (QPS): entries are spaced DurationInSec / Count apart
//     (times their count); an entry waits for its turn unless it is more
//     than MaxQueueingTimeMs away, and is then blocked. Java records the
//     arrival time instead of the entry's turn and never waits, so its
//     queued entries run at once, in a burst: here they are paced.
//   - flow.GradeThread: an entry is blocked when the value already has its
//     threshold of entries in flight.
//
// A threshold of 0 blocks the value. Thresholds are integers: Count is
// truncated, as Java does.
//
// # Values
//
// The value is the argument at ParamIdx (negative counts from the end;
// -1 is the last). A missing or nil argument passes. A slice or array
// argument is checked element by element (Java's collections and arrays).
// Each distinct Go value (by ==, so int 5 and int64 5 are two values) has
// its own state. Item thresholds match by class type: any Go integer type
// matches int, long, short and byte items by numeric value (a rune, which
// is an int32, also matches char items); float32 and float64 match double
// and float items; bool matches boolean; string matches String.
//
// A rule keeps state for at most min(4000 × DurationInSec, 200,000)
// values, Java's capacity. Past it, a value not used recently is
// forgotten (and comes back with a full budget). The cache is a CLOCK
// approximation of LRU: a hit sets a flag without locking, and a new value,
// under a mutex, evicts the first value the sweeping hand finds unused since
// its last pass (skipping values with entries in flight). Exact LRU would
// need a lock on every hit.
//
// # Differences from Java
//
//   - LimitApp is kept but ignored, as in Java.
//   - Java mutates a rule's paramIdx when it resolves a negative index
//     against the first call's arguments; here it is resolved per call.
//   - The rate limiter paces (see above).
//
// # Zero values and Java defaults
//
// A field left at its zero value means Java's default, as in a document
// that leaves it out: flow.GradeQPS (the Go zero value; documents write Java's
// 1 or "QPS"), durationInSec 1, controlBehavior 0 (reject), limitApp
// "default" ([Rule.WithDefaults]). paramIdx has no default in Java, which
// ignores a rule without one, and the converter rejects such a document;
// in Go, 0 is the first argument.
package hotspot
