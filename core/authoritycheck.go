package core

import (
	"fmt"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/internal/authcheck"
	"github.com/bulwark-go/bulwark/internal/mono"
)

var authorityKind = kind[authority.Rule]{
	name:     "authority",
	validate: authority.Rule.Validate,
	equal:    func(a, b authority.Rule) bool { return a == b },
	resource: func(r authority.Rule) string { return r.Resource },
	rules:    func(t *table) []authority.Rule { return t.authorityRules },
	install:  installAuthority,
}

// authoritySet is the compiled authority rules of one resource.
type authoritySet struct {
	stats  *resStats
	checks []authorityCheck
}

type authorityCheck struct {
	c      *authcheck.Checker
	block  *BlockError
	shadow bool
}

func installAuthority(e *Engine, next, prev *table, rules []authority.Rule) {
	next.authorityRules = rules
	next.authority = make(map[string]*authoritySet)
	for _, r := range rules {
		as := next.authority[r.Resource]
		if as == nil {
			as = &authoritySet{stats: e.nodes.pinFrom(prev, r.Resource)}
			next.authority[r.Resource] = as
		}
		as.checks = append(as.checks, authorityCheck{
			c:      authcheck.NewChecker(r),
			block:  &BlockError{Kind: BlockAuthority, Resource: r.Resource, Rule: r},
			shadow: r.Shadow,
		})
	}
}

// checkAuthority runs the resource's authority rules; an entry without
// origin is not checked.
func (e *Engine) checkAuthority(as *authoritySet, en *Entry, now mono.Time) error {
	if en.origin == "" {
		return nil
	}
	for i := range as.checks {
		if c := &as.checks[i]; !c.c.Pass(en.origin) {
			if c.shadow {
				e.shadowBlocked(en, now, c.block)
				continue
			}
			return c.block
		}
	}
	return nil
}

func describeAuthority(r authority.Rule) string {
	return fmt.Sprintf("authority rule %s limitApp=%s", r.Strategy, r.LimitApp)
}
