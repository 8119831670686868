package rulechange

import (
	"errors"
	"fmt"
)

// Classes of errors (errors.Is); a conflict is datasource.ErrConflict.
var (
	// ErrArgument: a malformed source URL, kind, canary group or
	// selection.
	ErrArgument = errors.New("rulechange: bad argument")
	// ErrInvalid: a document that is not valid rules, or a selection that
	// matches no rule.
	ErrInvalid = errors.New("rulechange: invalid")
	// ErrUnreachable: the config center did not answer in time, or refused
	// the request.
	ErrUnreachable = errors.New("rulechange: unreachable")
)

// classed is an error of a class: its text is err's, errors.Is finds the
// class and err's chain.
type classed struct {
	class error
	err   error
}

func (c *classed) Error() string   { return c.err.Error() }
func (c *classed) Unwrap() []error { return []error{c.class, c.err} }
func class(cl, err error) error    { return &classed{class: cl, err: err} }
func classf(cl error, format string, args ...any) error {
	return class(cl, fmt.Errorf(format, args...))
}
