// Package listeners is the one registry of callbacks that bulwark's
// extension points share: a Property's listeners, a RuleManager's OnChange
// callbacks, the engine's breaker state-change listeners and the Nacos
// backend's per-config SDK listener.
//
// Adding and removing take a lock and publish a fresh slice; reading the
// callbacks (List) is one atomic load, so a hot path (a breaker changing
// state on an Enter) can notify without locking or allocating.
package listeners

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Set is a set of callbacks of type F, kept in the order they were added.
// The zero Set is empty and ready to use; a Set must not be copied after
// first use.
type Set[F any] struct {
	mu      sync.Mutex
	next    uint64
	entries []entry[F]
	fns     atomic.Pointer[[]F] // the fns of entries, published on change
}

type entry[F any] struct {
	id uint64
	fn F
}

// Add adds fn and returns a function that removes it; calling that
// function again does nothing.
func (s *Set[F]) Add(fn F) (remove func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	s.entries = append(s.entries, entry[F]{id, fn})
	s.publish()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if i := slices.IndexFunc(s.entries, func(e entry[F]) bool { return e.id == id }); i >= 0 {
			s.entries = slices.Delete(s.entries, i, i+1)
			s.publish()
		}
	}
}

// List returns the callbacks in the order they were added. It does not
// lock or allocate; the caller must not modify the slice.
func (s *Set[F]) List() []F {
	if p := s.fns.Load(); p != nil {
		return *p
	}
	return nil
}

// Len returns the number of callbacks.
func (s *Set[F]) Len() int { return len(s.List()) }

// publish stores a fresh slice of the callbacks; s.mu is held.
func (s *Set[F]) publish() {
	fns := make([]F, len(s.entries))
	for i, e := range s.entries {
		fns[i] = e.fn
	}
	s.fns.Store(&fns)
}
