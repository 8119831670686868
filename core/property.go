package core

import (
	"errors"
	"sync"

	"github.com/bulwark-go/bulwark/internal/listeners"
)

// Property holds a value that changes over time and tells its listeners
// about every change: Sentinel's SentinelProperty, the link between a
// datasource (which calls Set) and a [RuleManager] (which listens).
//
// Set and Listen are serialised, so listeners see values in the order they
// were set, each exactly once. A listener must not call Set or Listen on the
// same property. The zero value is not usable: create one with
// [NewProperty].
type Property[T any] struct {
	mu        sync.Mutex
	value     T
	has       bool
	src       RuleSource // where value came from
	listeners listeners.Set[listener[T]]
}

type listener[T any] struct {
	fn func(T) error
	// from is called instead of fn with the value's source, when not nil.
	from    func(T, RuleSource) error
	partial func() bool // nil: the listener wants whole values only
	// reject, when not nil, hears of values refused before Set.
	reject func(RuleSource, error)
}

// NewProperty returns a property with no value and no listeners.
func NewProperty[T any]() *Property[T] {
	return &Property[T]{}
}

// Set stores v and calls every listener with it. It returns the listeners'
// errors, joined; the value is stored regardless, since each listener
// decides for itself what to keep (a RuleManager keeps its previous rules
// when v does not validate).
func (p *Property[T]) Set(v T) error { return p.SetFrom(v, RuleSource{}) }

// SetFrom is Set of a value read from src: a [RuleManager] registered on
// the property reports src in its [RuleEvent]. Datasources call it.
func (p *Property[T]) SetFrom(v T, src RuleSource) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.value, p.has, p.src = v, true, src
	var errs []error
	for _, l := range p.listeners.List() {
		if err := l.call(v, src); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Get returns the current value and whether one was ever set.
func (p *Property[T]) Get() (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.value, p.has
}

// Listen adds fn, calls it at once with the current value if there is one,
// and returns a function that removes it. The first call's error is not
// returned: a listener that cares reports it itself (a RuleManager records
// it and keeps its rules).
func (p *Property[T]) Listen(fn func(T) error) (cancel func()) {
	return p.listen(listener[T]{fn: fn})
}

// AcceptsPartial reports whether the property has listeners and every one
// of them applies the valid part of a value and reports the rest: a
// lenient [RuleManager] (see [RuleManager.SetLenient]) registered on it.
// A datasource then sets the valid rules of a document in which some rules
// are invalid, instead of rejecting the document whole, and reports the
// invalid ones. A listener added with Listen accepts only whole values.
func (p *Property[T]) AcceptsPartial() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := p.listeners.List()
	for _, l := range ls {
		if l.partial == nil || !l.partial() {
			return false
		}
	}
	return len(ls) > 0
}

func (p *Property[T]) listen(l listener[T]) (cancel func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	remove := p.listeners.Add(l)
	if p.has {
		_ = l.call(p.value, p.src)
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		remove()
	}
}

func (l listener[T]) call(v T, src RuleSource) error {
	if l.from != nil {
		return l.from(v, src)
	}
	return l.fn(v)
}

// Reject tells the listeners that a value read from src was refused before
// it could be set (its document did not decode): a [RuleManager] reports
// it as a rejected [RuleEvent]. The value does not change. Datasources call
// it.
func (p *Property[T]) Reject(src RuleSource, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.listeners.List() {
		if l.reject != nil {
			l.reject(src, err)
		}
	}
}
