package authority

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bulwark-go/bulwark/core/rule"
)

// Strategy says what listed origins get: Java's AUTHORITY_WHITE / BLACK.
type Strategy int

// Strategies. The zero value is White, as Java's constant 0 and default.
const (
	// White admits only the origins listed in LimitApp.
	White Strategy = 0
	// Black blocks the origins listed in LimitApp.
	Black Strategy = 1
)

func (s Strategy) String() string {
	switch s {
	case White:
		return "white"
	case Black:
		return "black"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// Rule is an origin authority rule, Java Sentinel's AuthorityRule. Every
// field's zero value is Java's default; Resource and LimitApp are
// required.
type Rule struct {
	// Resource is the name passed to Enter. Required.
	Resource string
	// LimitApp is a comma-separated list of origins (see core.WithOrigin);
	// spaces around names are not trimmed, as in Java. Required: unlike
	// other kinds' LimitApp, "" does not mean every caller.
	LimitApp string
	// Strategy says whether the list admits or blocks. Zero value: White.
	Strategy Strategy
	// Shadow makes the rule watch without acting: it is checked and each
	// entry it would block is counted (core.Engine.Stats, OnShadowBlock),
	// but it never blocks. Java ignores the field. Zero value: false, an
	// enforcing rule.
	Shadow bool
}

// Validate reports every problem of the rule, one *rule.FieldError per
// problem, joined: what Java's AuthorityRuleManager.isValidRule checks
// (resource and limitApp non-blank) and an unknown strategy.
func (r Rule) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &rule.FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if strings.TrimSpace(r.Resource) == "" {
		bad("resource", "must not be empty")
	}
	if strings.TrimSpace(r.LimitApp) == "" {
		bad("limitApp", "must list at least one origin (comma-separated)")
	}
	if r.Strategy != White && r.Strategy != Black {
		bad("strategy", "must be 0 (white) or 1 (black), got %d", int(r.Strategy))
	}
	return errors.Join(errs...)
}
