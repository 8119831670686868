package property

import (
	"errors"
	"sync"

	"github.com/bulwark-go/bulwark/internal/listeners"
)

// Cell holds a value of type T, set from a source described by an S, and
// tells its listeners about every change. SetFrom, Listen and Reject are
// serialised, so listeners see values in the order they were set, each
// exactly once. A listener must not call SetFrom or Listen on the same
// cell. The zero Cell has no value and no listeners; a Cell must not be
// copied after first use.
type Cell[T, S any] struct {
	mu        sync.Mutex
	value     T
	has       bool
	src       S // where value came from
	listeners listeners.Set[Listener[T, S]]
}

// Listener is told of a cell's values.
type Listener[T, S any] struct {
	// Fn is called with every value and its source.
	Fn func(T, S) error
	// Partial reports whether the listener applies the valid part of a
	// value and reports the rest; nil means whole values only.
	Partial func() bool
	// Reject, when not nil, hears of values refused before SetFrom.
	Reject func(S, error)
}

// SetFrom stores v, read from src, and calls every listener with it. It
// returns the listeners' errors, joined; the value is stored regardless,
// since each listener decides for itself what to keep.
func (c *Cell[T, S]) SetFrom(v T, src S) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.value, c.has, c.src = v, true, src
	var errs []error
	for _, l := range c.listeners.List() {
		if err := l.Fn(v, src); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Get returns the current value and whether one was ever set.
func (c *Cell[T, S]) Get() (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.value, c.has
}

// Listen adds l, calls its Fn at once with the current value and its
// source if there is one (the error is not returned: a listener that
// cares reports it itself), and returns a function that removes it.
func (c *Cell[T, S]) Listen(l Listener[T, S]) (cancel func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	remove := c.listeners.Add(l)
	if c.has {
		_ = l.Fn(c.value, c.src)
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		remove()
	}
}

// AcceptsPartial reports whether the cell has listeners and every one of
// them applies the valid part of a value and reports the rest (its
// Partial reports true): a datasource then sets the valid rules of a
// document in which some rules are invalid, instead of rejecting the
// document whole.
func (c *Cell[T, S]) AcceptsPartial() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ls := c.listeners.List()
	for _, l := range ls {
		if l.Partial == nil || !l.Partial() {
			return false
		}
	}
	return len(ls) > 0
}

// Reject tells the listeners that a value read from src was refused before
// it could be set (its document did not decode). The value does not
// change.
func (c *Cell[T, S]) Reject(src S, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.listeners.List() {
		if l.Reject != nil {
			l.Reject(src, err)
		}
	}
}
