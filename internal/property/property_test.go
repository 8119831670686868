package property_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/property"
)

func TestCell(t *testing.T) {
	var c property.Cell[int, string]
	_, ok := c.Get()
	assert.False(t, ok, "no value yet")
	assert.False(t, c.AcceptsPartial(), "no listeners")

	type call struct {
		v   int
		src string
	}
	var calls []call
	bad := errors.New("bad")
	cancel := c.Listen(property.Listener[int, string]{Fn: func(v int, src string) error {
		calls = append(calls, call{v, src})
		if v < 0 {
			return bad
		}
		return nil
	}})
	require.NoError(t, c.SetFrom(1, "a"))
	require.ErrorIs(t, c.SetFrom(-1, "b"), bad, "a listener's error is returned")
	v, ok := c.Get()
	assert.True(t, ok)
	assert.Equal(t, -1, v, "stored regardless")
	assert.Equal(t, []call{{1, "a"}, {-1, "b"}}, calls)

	var late []call
	c.Listen(property.Listener[int, string]{Fn: func(v int, src string) error {
		late = append(late, call{v, src})
		return nil
	}})
	assert.Equal(t, []call{{-1, "b"}}, late, "a new listener gets the current value and its source at once")

	cancel()
	require.NoError(t, c.SetFrom(2, "c"))
	assert.Len(t, calls, 2, "cancelled")
}

func TestAcceptsPartialAndReject(t *testing.T) {
	var c property.Cell[int, string]
	lenient := true
	var rejected []string
	c.Listen(property.Listener[int, string]{
		Fn:      func(int, string) error { return nil },
		Partial: func() bool { return lenient },
		Reject:  func(src string, err error) { rejected = append(rejected, src+": "+err.Error()) },
	})
	assert.True(t, c.AcceptsPartial())
	lenient = false
	assert.False(t, c.AcceptsPartial(), "asked each time")
	lenient = true
	c.Listen(property.Listener[int, string]{Fn: func(int, string) error { return nil }})
	assert.False(t, c.AcceptsPartial(), "a listener without Partial takes whole values only")

	c.Reject("rev 3", errors.New("does not decode"))
	assert.Equal(t, []string{"rev 3: does not decode"}, rejected)
	_, ok := c.Get()
	assert.False(t, ok, "a refusal sets nothing")
}
