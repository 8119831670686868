// Package flow holds flow rules (Sentinel's FlowRule, field for field) and
// says how the engine (package core) enforces them. QPS rules shape traffic
// with one of four behaviors: reject (block above the threshold at once),
// warm-up (the allowed rate climbs from Count/coldFactor to Count over
// WarmUpPeriodSec after a cold period, as Guava's SmoothWarmingUp), rate
// limiter (pacing: entries run 1/Count apart, each queued for up to
// MaxQueueingTimeMs) and warm-up + rate limiter (pacing at the warm-up
// rate). Thread (concurrency) rules reject. The cold factor and how long a
// prioritized entry may occupy the next window are engine options
// (core.WithColdFactor, core.WithOccupyTimeout).
//
// A rule is checked against the statistics of one node, a sliding window
// of one second in two buckets: the resource's, an origin's, a calling
// context's or a related resource's, as its LimitApp and Strategy say.
// The engine records an entry's pass on every node once all of the
// resource's rules admitted it.
//
// # How exact a limit is under concurrency
//
// A QPS rule with the reject or warm-up behavior admits an entry when the
// passes already recorded in the node's one-second window, plus the
// entry's count, are within the threshold (the warm-up rate for warm-up).
// Entries that check at the same time do not see one another until they
// are recorded, so, as with Sentinel (whose check sums the window, then
// adds), a window may admit more than the threshold. The bound:
//
//   - Over: a window admits at most the threshold plus the counts of the
//     entries that were between their check and their record while it
//     filled up. A goroutine has at most one entry there, so that is at
//     most one entry per goroutine inside Enter for the resource at the
//     same moment: GOMAXPROCS entries when no goroutine is descheduled
//     during the few hundred nanoseconds of its Enter, and never more than
//     the number of goroutines entering the resource at once.
//   - Under: an entry is refused only when the passes recorded already
//     leave no room for its count, so a window that refused an entry
//     admitted at least threshold − count + 1. Nothing is reserved and
//     left unused.
//
// Checking costs no contention while the window is far from its threshold:
// each core counts its passes in cache lines of its own and publishes
// them to a shared total in steps of a quantum (64 × the stripes), and a
// check that finds published total + its own unpublished passes + the
// most the other cores can hold unpublished within the threshold admits
// without reading another core's lines. Near the threshold it sums every
// core's count. Neither way admits an entry that the exact sum of the
// recorded passes would refuse, so the bound above is the whole of the
// inexactness; it is the same as Sentinel's.
//
// Thread rules compare the node's concurrency (entries admitted and not
// yet exited), summed over every core, with the threshold: the same bound,
// with concurrency in place of passes. Pacing (the rate limiter behaviors)
// gives each entry its turn on a shared timeline with one compare-and-swap,
// so concurrent entries never share a turn and pacing never admits more
// than its rate. A prioritized entry that occupies a future window is
// counted there before it runs.
package flow
