// Package flowcontrol holds the traffic-shaping controllers that enforce
// flow rules (Sentinel's TrafficShapingController): reject, warm-up, rate
// limiter (pacing) and warm-up + rate limiter for QPS rules, reject for
// thread rules. The engine (package core) builds one per rule with
// [NewController] and checks it against a node of package stat.
//
// What the controllers mean to users, and how exact a limit is under
// concurrency, is documented in package core/flow.
package flowcontrol
