package rule_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/rule"
)

func TestFieldError(t *testing.T) {
	fe := &rule.FieldError{Field: "count", Err: errors.New("must be >= 0")}
	assert.Equal(t, "count: must be >= 0", fe.Error())
	assert.Equal(t, "rule sets nothing", (&rule.FieldError{Err: errors.New("rule sets nothing")}).Error())

	wrapped := &rule.FieldError{Field: "paramFlowItemList[0].object", Err: fmt.Errorf("unreadable: %w", io.ErrUnexpectedEOF)}
	assert.ErrorIs(t, wrapped, io.ErrUnexpectedEOF, "Err wraps its cause")
}

func TestFields(t *testing.T) {
	assert.Nil(t, rule.Fields(nil))

	a := &rule.FieldError{Field: "a", Err: errors.New("x")}
	b := &rule.FieldError{Field: "b", Err: errors.New("y")}
	c := &rule.FieldError{Field: "c", Err: errors.New("z")}
	got := rule.Fields(errors.Join(a, errors.Join(b, c)))
	assert.Equal(t, []*rule.FieldError{a, b, c}, got, "joined errors, nested or not, in order")

	got = rule.Fields(fmt.Errorf("context: %w", a))
	assert.Equal(t, []*rule.FieldError{a}, got, "found through a wrapper")

	plain := errors.New("plain")
	got = rule.Fields(errors.Join(a, plain))
	require.Len(t, got, 2)
	assert.Equal(t, a, got[0])
	assert.Equal(t, "", got[1].Field, "an error without a field is the rule's as a whole")
	assert.Equal(t, plain, got[1].Err)
}
