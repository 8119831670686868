// Package authcheck holds the checker of origin authority rules (Java's
// AuthorityRuleChecker). The engine (package core) builds one per rule
// with [NewChecker]; what it admits is documented in package
// core/authority.
package authcheck

import (
	"strings"

	"github.com/bulwark-go/bulwark/core/authority"
)

// Checker decides entries against one [authority.Rule]: Java's
// AuthorityRuleChecker, with the rule's list parsed once. It is immutable
// and safe for concurrent use. Create one with [NewChecker].
type Checker struct {
	rule authority.Rule
	apps map[string]struct{}
}

// NewChecker returns the checker of a valid rule.
func NewChecker(r authority.Rule) *Checker {
	c := &Checker{rule: r, apps: map[string]struct{}{}}
	for app := range strings.SplitSeq(r.LimitApp, ",") {
		c.apps[app] = struct{}{}
	}
	return c
}

// Rule returns the checker's rule.
func (c *Checker) Rule() authority.Rule { return c.rule }

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
	if c.rule.Strategy == authority.Black {
		return !listed
	}
	return listed
}
