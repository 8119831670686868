// Package core is bulwark's engine: it admits or rejects entries into
// protected resources according to flow, circuit-breaker, system, authority
// and hot-parameter rules, and it holds those rules in [RuleManager]s that
// swap them atomically while traffic flows.
//
// A request enters a resource with [Engine.Enter] (or [Engine.Do]) and
// leaves with [Entry.Exit]. Enter runs the checks in Sentinel's order,
// authority → system → hot parameters → flow → circuit breaker, against
// statistics kept in sliding windows, and returns a
// [*BlockError] (errors.Is(err, ErrBlocked)) naming the rule that blocked.
//
// Rules change through a RuleManager: Load validates a whole list and
// swaps it in at once, or changes nothing; Register attaches a [Property]
// that a datasource feeds. Readers never lock: every Enter reads one
// immutable rule table through an atomic pointer, so it sees the old rules
// or the new ones, never a mix, and rules that did not change keep their
// state (warm-up tokens, pacing timelines, breaker states, windows).
//
// # Hot resources and exactness
//
// One resource entered from every core at once (a flash sale) scales with
// the cores: statistics are striped per processor (the scheduler's P), so
// cores write cache lines of their own, and a QPS check reads only its own
// core's counts and a published total while the window is far from the
// threshold, summing every core's counts only near it. Inbound entries
// write the engine-wide inbound statistics the same way.
//
// Checks do not serialise entries, so a QPS limit is exact up to a bound,
// as Sentinel's is: a one-second window admits at most the threshold plus
// the counts of the entries that were between their check and their
// record while it filled, which is at most one entry per goroutine inside
// Enter for the resource at that moment (GOMAXPROCS when goroutines are not
// descheduled inside Enter). It never admits less than the threshold minus
// the entry's count plus one once it refuses an entry. Package flow
// states the bound for every behavior.
//
// # The clock
//
// An entry reads the engine's clock twice, at Enter and at Exit; on many
// machines that is the largest single cost of an entry. With
// [WithCoarseClock] one goroutine of the engine reads the clock every
// resolution (1 ms is Java Sentinel's choice) and entries read what it
// published, at the cost of windows, response times and breaker timeouts
// trailing the clock by up to the resolution (plus any delay in scheduling
// that goroutine): the option's doc says what that changes. It composes
// with [WithClock]: the goroutine samples the injected clock. Close stops
// the goroutine; entries then read the clock themselves.
//
// # Shadow rules
//
// A rule of any kind with Shadow set is checked like the others, but an
// entry it would block goes on: it is counted per resource and kind
// ([Figures].ShadowBlocked) and told to [Engine.OnShadowBlock], at no
// allocation, and evaluation continues with the next rule. A shadow rule
// never makes an entry wait for pacing; a shadow breaker runs its state
// machine (its state is in [Engine.Stats]) but rejects nothing. A shadow
// rule and an enforcing one may share a resource, to try a new threshold
// beside the old; clearing Shadow is a rule change like any other.
//
// A shadow cluster flow rule asks its flow's budget for tokens like an
// enforcing one, so it needs a ClusterConfig.FlowID of its own: its budget
// then admits what the rule would admit across every instance, and its
// shadow blocks are what it would have blocked. A list in which a shadow
// cluster rule names the FlowID of an enforcing cluster rule is invalid
// (the shadow rule would spend the enforcing rule's budget): Load rejects
// it, naming the shadow rule's index and the FlowID.
//
// # Observing
//
// [Engine.Stats] reads what the engine measures (per resource the sliding
// second, the last minute and totals, blocks by kind; breakers; system
// figures; rules per kind and their source; the token service's health)
// and [Engine.History] the last 60 seconds of one resource, counted from
// the engine's making; neither blocks an entry. Every change of
// rules, and every rejected one, is a [RuleEvent]: logged, delivered to
// [Engine.OnRuleEvent] and kept ([Engine.RuleEvents]). Packages
// metrics/bulwarkprom and admin export them as Prometheus metrics and as a
// live page.
//
// # Layout
//
// The rule packages (core/flow, core/circuitbreaker, core/system,
// core/authority, core/hotspot) hold the rule types, their enums and
// Validate, and document what each rule does. The mechanisms that enforce
// them are internal and composed here: sliding windows (internal/stat),
// flow controllers (internal/flowcontrol), breakers (internal/breaker),
// hot-parameter limiters (internal/paramlimit), the authority checker
// (internal/authcheck), and the system checks with the /proc and cgroup
// collector (internal/sysload). Imports point one way: internal packages
// may import the rule packages for their types, core imports both, and the
// rule packages import neither.
package core
