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
// Whatever the grade, the breaker does not open while fewer than
// MinRequestAmount calls were seen in the StatIntervalMs interval.
//
// # Zero values and Java defaults
//
// Fields hold Java's values and Java's zero values: a Rule{} is invalid
// (no resource, TimeWindow, MinRequestAmount and StatIntervalMs 0). When a
// document leaves a field out, package converter applies Java's default:
// grade 0, minRequestAmount 5, statIntervalMs 1000, slowRatioThreshold 1.0,
// limitApp "default" (and rtSlowRequestAmount 5). [Rule.Validate] checks
// what Java's DegradeRuleManager checks, and what Java misses.
package circuitbreaker
