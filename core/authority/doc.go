// Package authority holds origin authority rules: Java Sentinel's
// AuthorityRule.
//
// A [Rule] names a resource and a comma-separated list of origins
// (LimitApp, the caller apps passed with core.WithOrigin). With the White
// strategy (0, "white") only listed origins may enter; with Black (1,
// "black") listed origins are blocked. As in Java, an entry that carries
// no origin is not checked, and origins are matched exactly.
//
// The engine parses a rule's list once into a set, so a check is one map
// lookup. Several rules of one resource must all admit the entry. Authority
// rules are checked first, before system, hot-parameter, flow and breaker
// rules, as in Java.
//
// # Zero values and Java defaults
//
// The zero Strategy is White, Java's default. A rule needs a resource and
// at least one origin; [Rule.Validate] says so.
package authority
