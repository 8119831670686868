// Package core is bulwark's engine: it admits or rejects entries into
// protected resources according to flow, circuit-breaker, system, authority
// and hot-parameter rules, and it holds those rules in [RuleManager]s that
// swap them atomically while traffic flows.
//
// A request enters a resource with [Engine.Enter] (or [Engine.Do]) and
// leaves with [Entry.Exit]. Enter runs the checks in Sentinel's order,
// authority → system → hot parameters → flow → circuit breaker, against
// statistics kept in sliding windows (package stat), and returns a
// [*BlockError] (errors.Is(err, ErrBlocked)) naming the rule that blocked.
//
// Rules change through a RuleManager: Load validates a whole list and
// swaps it in at once, or changes nothing; Register attaches a [Property]
// that a datasource feeds. Readers never lock: every Enter reads one
// immutable rule table through an atomic pointer, so it sees the old rules
// or the new ones, never a mix, and rules that did not change keep their
// state (warm-up tokens, pacing timelines, breaker states, windows).
package core
