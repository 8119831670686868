package core

import "github.com/bulwark-go/bulwark/internal/property"

// Property holds a value that changes over time and tells its listeners
// about every change: Sentinel's SentinelProperty, the link between a
// datasource (which calls Set) and a [RuleManager] (which listens).
//
// Set and Listen are serialised, so listeners see values in the order they
// were set, each exactly once. A listener must not call Set or Listen on the
// same property. The zero value is not usable: create one with
// [NewProperty].
//
// A datasource's Readable also tells a RuleManager registered on its
// Property where each value came from (the [RuleSource] of its
// [RuleEvent]s), and of documents that do not decode (rejected events);
// a lenient RuleManager (see [RuleManager.SetLenient]) makes the Readable
// apply the valid rules of a document in which some are invalid.
type Property[T any] property.Cell[T, RuleSource]

// NewProperty returns a property with no value and no listeners.
func NewProperty[T any]() *Property[T] {
	return &Property[T]{}
}

// cell is p as the mechanism it is defined as.
func (p *Property[T]) cell() *property.Cell[T, RuleSource] {
	return (*property.Cell[T, RuleSource])(p)
}

// Set stores v and calls every listener with it. It returns the listeners'
// errors, joined; the value is stored regardless, since each listener
// decides for itself what to keep (a RuleManager keeps its previous rules
// when v does not validate).
func (p *Property[T]) Set(v T) error { return p.cell().SetFrom(v, RuleSource{}) }

// Get returns the current value and whether one was ever set.
func (p *Property[T]) Get() (T, bool) { return p.cell().Get() }

// Listen adds fn, calls it at once with the current value if there is one,
// and returns a function that removes it. The first call's error is not
// returned: a listener that cares reports it itself (a RuleManager records
// it and keeps its rules).
func (p *Property[T]) Listen(fn func(T) error) (cancel func()) {
	return p.cell().Listen(property.Listener[T, RuleSource]{Fn: func(v T, _ RuleSource) error { return fn(v) }})
}
