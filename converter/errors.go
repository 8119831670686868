package converter

import (
	"errors"
	"fmt"
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
	// ErrTooLarge: the document is larger than the size limit
	// (see WithMaxSize).
	ErrTooLarge = errors.New("converter: document too large")
)

// Problem is one thing wrong with a document.
type Problem struct {
	// Path is where, in JSON path form: "[2].controlBehavior",
	// "flow[0].clusterConfig.flowId", "" for the document as a whole.
	Path string
	// Message says what is wrong and what was expected.
	Message string
	// Err is ErrSyntax or ErrInvalid.
	Err error
}

func (p Problem) Error() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Unwrap returns ErrSyntax or ErrInvalid.
func (p Problem) Unwrap() error { return p.Err }

// DecodeError lists every problem found in a document, in document order.
// A document that is not JSON at all has a single problem.
type DecodeError struct {
	Problems []Problem
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
