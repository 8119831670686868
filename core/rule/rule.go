// Package rule holds what the rule packages (core/flow, core/circuitbreaker,
// core/system, core/authority, core/hotspot) share: the origin names with a
// meaning of their own in LimitApp, and the error their Validate methods
// report problems with. Package core and package converter
// read it with errors.As to name the field of every problem; nobody parses
// messages.
package rule

import "errors"

// Origins with a meaning of their own in a rule's LimitApp, as in Java's
// RuleConstant. Each rule package names the ones it understands.
const (
	LimitAppDefault = "default" // every caller; "" means the same
	LimitAppOther   = "other"   // callers that no other rule of the resource names
)

// FieldError is one problem of a rule: a field and what is wrong with it.
// A rule's Validate returns one per problem, joined with errors.Join; use
// [Fields] to list them, or errors.As to find the first.
type FieldError struct {
	// Field is the path of the field inside the rule, in the JSON names of
	// Java's rule documents: "count", "clusterConfig.flowId",
	// "paramFlowItemList[2].object". It is "" for a problem of the rule as
	// a whole (a system rule that sets no threshold).
	Field string
	// Err says what is wrong: "must be >= 0". It may wrap a cause.
	Err error
}

// Error returns "field: problem", or the problem alone when Field is "".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// Fields returns every problem of err, in order: the *FieldError of each
// error that err joins (errors.Join, nested or not), found with errors.As.
// An error without one is returned as a problem of the rule as a whole
// (Field ""). Fields(nil) is nil.
func Fields(err error) []*FieldError {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*FieldError
		for _, e := range j.Unwrap() {
			out = append(out, Fields(e)...)
		}
		return out
	}
	if fe, ok := errors.AsType[*FieldError](err); ok {
		return []*FieldError{fe}
	}
	return []*FieldError{{Err: err}}
}
