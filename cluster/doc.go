// Package cluster is the contract between the engine and a token service
// for cluster flow rules: Java Sentinel's cluster flow control, where
// instances share one budget instead of each enforcing a rule's count
// alone.
//
// A flow rule with ClusterMode set and a ClusterConfig.FlowID is a cluster
// rule. Given a [TokenService] (core.WithTokenService), the engine asks the
// rule's [Budget] for tokens instead of checking the rule's count locally,
// and applies Java's fallback when the service cannot answer ([Fail]): the
// local check with the rule's count when
// ClusterConfig.FallbackToLocalWhenFail is set, otherwise the entry passes.
// Without a token service a cluster rule is checked as if the service had
// failed.
//
// The fields of Java's ClusterFlowConfig keep their meaning:
//
//   - FlowID names the budget: rules with the same FlowID share it across
//     every instance, whatever their resource names.
//   - ThresholdType 1 (global): the instances together admit at most the
//     rule's count per second, over each window of WindowIntervalMs.
//   - ThresholdType 0 (average local, Java's default): the budget is the
//     count times the number of live instances of the flow.
//   - FallbackToLocalWhenFail: see above.
//
// A shadow cluster rule (flow.Rule.Shadow) asks for tokens like any
// cluster rule, so it needs a FlowID of its own: its budget then counts,
// across every instance, exactly what it would have admitted, and its
// shadow blocks are what it would have blocked. Sharing the FlowID of an
// enforcing rule would spend that rule's budget; the engine rejects a
// rule list where a shadow cluster rule does (instances with different
// lists are beyond its sight: give shadow rules FlowIDs no enforcing rule
// uses anywhere).
//
// A service may report the health of its backend with a method
// Health() [Health]; the engine's statistics, metrics and live page show
// it.
//
// Package cluster/redis implements the service on Redis.
package cluster
