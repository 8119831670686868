package converter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors callers can branch on with errors.Is. A *DecodeError wraps
// ErrSyntax, ErrInvalid or both, depending on its problems.
var (
	// ErrSyntax: the document is not JSON, or not of the expected shape
	// (not an array of objects, a field of the wrong JSON type, an unknown
	// field).
	ErrSyntax = errors.New("converter: syntax error")
	// ErrInvalid: the document is well-formed but a value is not allowed
	// (an unknown enum value, a fraction where Java has an int, a value
	// out of range, a rule that fails its Validate).
	ErrInvalid = errors.New("converter: invalid rule")
)

// errIgnored is the Err of a warning (see the package documentation): a
// field that an older Sentinel release wrote and today's Java ignores was
// accepted and ignored. It is never part of a *DecodeError.
var errIgnored = errors.New("converter: field ignored")

// Problem is one thing wrong with a document, or a warning about it (a
// field accepted and ignored: see the package documentation).
type Problem struct {
	// Path is where, in JSON path form: "[2].controlBehavior",
	// "flow[0].clusterConfig.flowId", "" for the document as a whole.
	Path string
	// Rule is the index of the rule the problem is confined to, in its
	// list (for a rule set, the list of the kind Path starts with); -1
	// for a problem of the document as a whole (not JSON, not an array,
	// an unknown rule-set key). A problem of a rule rejects that rule
	// only; see DecodeError.Partial.
	Rule int
	// Resource is the resource of that rule, when it has one and it
	// could be read (wherever it stands in the rule's object); "" else.
	Resource string
	// Line and Column locate the problem in the document, both from 1
	// (the column counts characters): the value in question, or the
	// start of the rule for a rule its Validate rejects. 0 when unknown.
	Line, Column int
	// Message says what is wrong and what was expected.
	Message string
	// Err is ErrSyntax or ErrInvalid; for a warning, an error saying the
	// field was ignored.
	Err error
}

// Error returns the problem as a person reads it. A problem inside a rule
// with a resource names the rule by index and resource, then the field:
//
//	[3] "GET /orders": count: must be >= 0
//	flow[1] "GET /orders": clusterConfig.flowId: expected an integer, found a string
//
// other problems start with their path ("[2].qps: …"); a problem of the
// document as a whole with a position starts with it ("3:17: not valid
// JSON: …").
func (p Problem) Error() string {
	if p.Resource != "" {
		if i := strings.IndexByte(p.Path, ']'); i >= 0 {
			rule, field := p.Path[:i+1], strings.TrimPrefix(p.Path[i+1:], ".")
			s := rule + " " + strconv.Quote(p.Resource) + ": "
			if field != "" {
				s += field + ": "
			}
			return s + p.Message
		}
	}
	if p.Path == "" {
		if p.Line > 0 {
			return fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Message)
		}
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Unwrap returns Err.
func (p Problem) Unwrap() error { return p.Err }

// DecodeError lists every problem found in a document, in document order
// (a rule's Validate problems follow its decoding problems). A document
// that is not JSON at all has a single problem.
//
// When every problem is confined to individual rules (Problem.Rule >= 0:
// a bad value, an unknown field or a failed Validate inside a rule, an
// element that is not an object), Partial is true and the value returned
// with the error holds every rule without a problem, in document order
// (possibly none). A lenient consumer may apply it; a strict one refuses
// the document. A problem of the document as a whole (not JSON, not an
// array, an empty document, an unknown rule-set key) leaves Partial false
// and the value returned is the zero value.
type DecodeError struct {
	Problems []Problem
	// Partial: the value returned with this error holds every rule
	// without a problem.
	Partial bool
}

// maxListed bounds how many problems Error spells out; Problems holds all.
const maxListed = 20

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("converter: ")
	if len(e.Problems) == 1 {
		b.WriteString(e.Problems[0].Error())
		return b.String()
	}
	fmt.Fprintf(&b, "%d problems: ", len(e.Problems))
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap returns the problems, so that errors.Is(err, ErrSyntax) and
// errors.Is(err, ErrInvalid) tell which kinds of problem there are.
func (e *DecodeError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}
