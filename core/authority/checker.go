package authority

import "strings"

// Checker decides entries against one [Rule]: Java's
// AuthorityRuleChecker, with the rule's list parsed once. It is immutable
// and safe for concurrent use. Create one with [NewChecker].
type Checker struct {
	rule Rule
	apps map[string]struct{}
}

// NewChecker returns the checker of a valid rule.
func NewChecker(r Rule) *Checker {
	c := &Checker{rule: r, apps: map[string]struct{}{}}
	for app := range strings.SplitSeq(r.LimitApp, ",") {
		c.apps[app] = struct{}{}
	}
	return c
}

// Rule returns the checker's rule.
func (c *Checker) Rule() Rule { return c.rule }

// Pass reports whether an entry from origin may pass. An entry without an
// origin ("") is not checked and passes, as in Java. Otherwise the origin
// is listed when it equals one of LimitApp's comma-separated names exactly
// (no trimming, no prefix matching); White admits only listed origins,
// Black blocks them.
func (c *Checker) Pass(origin string) bool {
	if origin == "" {
		return true
	}
	_, listed := c.apps[origin]
	if c.rule.Strategy == Black {
		return !listed
	}
	return listed
}
