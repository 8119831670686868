// Package circuitbreaker holds circuit-breaking rules: Java Sentinel's
// DegradeRule.
//
// A [Rule] watches one resource and opens a breaker when the resource
// looks unhealthy; while open, entries are blocked for TimeWindow seconds,
// then one probe entry passes, and its outcome closes the breaker or opens
// it again (CLOSED → OPEN → HALF_OPEN). What "unhealthy" means is the
// [Grade]:
//
//   - SlowRequestRatio (0, "slowRequestRatio"): Count is the maximum RT in
//     ms; the breaker opens when more than SlowRatioThreshold (0..1) of the
//     calls of the statistic interval were slower.
//   - ErrorRatio (1, "errorRatio"): Count is the error ratio, 0..1.
//   - ErrorCount (2, "errorCount"): Count is a number of errors per
//     statistic interval.
//   - AvgRT (100, "avgRt"): Sentinel's strategy before 1.8. When the
//     average RT of the last second reaches Count ms, RTSlowRequestAmount
//     more calls pass, then the breaker opens for TimeWindow seconds. Java
//     1.8 does not know this grade (it ignores such a rule); its number is
//     outside Java's 0–2 on purpose.
//
// Except for AvgRT, the breaker does not open while fewer than
// MinRequestAmount calls were seen in the StatIntervalMs interval.
//
// # Breakers
//
// The engine (package core) makes one breaker per rule and keeps it across
// rule swaps while the rule is unchanged. A breaker takes no lock: its
// state is one atomic word moved by compare-and-swap, and its statistics
// are a sliding window of StatIntervalMs (two buckets of half the interval
// when StatIntervalMs is even, else one). The engine asks the breaker on
// Enter, after every other check, and tells it on Exit the call's RT and
// whether it failed (core.Entry.SetError, or the error of the function
// given to core.Engine.Do). A call is slow when its RT is above Count; a
// failed call is bad for the error grades, a slow one for SlowRequestRatio.
//
//   - CLOSED: every call passes. After each completion, if the interval
//     holds at least MinRequestAmount calls and the measure is above the
//     threshold (or the slow ratio is exactly 1.0 with a threshold of 1.0),
//     the breaker opens.
//   - OPEN: calls are blocked until TimeWindow seconds have passed; then the
//     first call moves the breaker to HALF_OPEN and passes as the probe.
//   - HALF_OPEN: other calls are blocked. When the probe completes, a good
//     probe closes the breaker and starts its statistics over; a bad probe
//     opens it for another TimeWindow. A probe that a check after the
//     breaker blocks (another breaker of the resource) never ran: the
//     breaker returns to OPEN without a new wait, so the next call probes.
//
// Listeners get every transition as a [StateChange]: from, to, the value
// that triggered it, the rule (core.Engine.OnBreakerStateChange).
//
// # AvgRT
//
// The pre-1.8 strategy reads the resource's own statistics rather than a
// window of its own: the average RT of the resource's second window (RT sum
// over completions, 0 when nothing completed), each RT capped by the
// engine's maximum (core.WithMaxRT, 4900 ms by default). Below Count, the
// call passes and the counter resets; otherwise the counter counts the call,
// which passes while the counter is below RTSlowRequestAmount; when it
// reaches it, the call is blocked and the breaker stays OPEN for
// TimeWindow seconds, after which the counter resets and the check starts
// over (OPEN → CLOSED, no probe). MinRequestAmount and StatIntervalMs do not
// apply to it.
//
// # Differences from Java
//
//   - Only the probe decides a HALF_OPEN breaker. Java lets any completion
//     decide, including a call admitted before the breaker opened that
//     finishes late, which can close a breaker that no probe tested.
//   - The window slides: two buckets of half the interval when
//     StatIntervalMs is even (Java: one bucket, so its counts drop to zero
//     at each interval's end).
//   - A probe that never exits keeps the breaker HALF_OPEN, as in Java:
//     always Exit an Entry.
//   - LimitApp is kept but ignored, as in Java 1.8.
//
// # Zero values and Java defaults
//
// A field left at its zero value means Java's default, as in a document
// that leaves it out ([Rule.WithDefaults]): grade 0 (slow request ratio),
// minRequestAmount 5, statIntervalMs 1000, slowRatioThreshold 1.0,
// limitApp "default" (and rtSlowRequestAmount 5). Resource and TimeWindow
// have no default: a rule needs both. [Rule.Validate] checks what Java's
// DegradeRuleManager checks, and what Java misses.
package circuitbreaker
