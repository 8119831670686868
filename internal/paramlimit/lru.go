package paramlimit

import (
	"sync"
	"sync/atomic"
)

// valueState is what a rule keeps about one parameter value.
type valueState struct {
	key any
	ref atomic.Bool // used since the clock hand last passed

	tokens  atomic.Int64 // token bucket: tokens left
	last    atomic.Int64 // token bucket: last refill (ms); rate limiter: last pass (a mono.Time)
	threads atomic.Int64 // thread grade: entries in flight
}

// cache maps parameter values to their state, keeping at most capacity of
// them. It approximates LRU with the CLOCK algorithm (second chance): a hit
// only sets a flag, with no lock, and a miss, under a mutex, sweeps a ring
// of the values for one not used since the hand last passed (and with no
// entry in flight) and replaces it. A value that keeps being used is never
// evicted while a value not used since the last sweep is available; unused
// values go in ring order, which starts as insertion order.
//
// Exact LRU would reorder a list on every hit, which needs a lock on the
// hot path; CLOCK keeps hits lock-free (a sync.Map load and an atomic
// flag) at the price of ordering recency only to one sweep's precision.
type cache struct {
	m        sync.Map // key → *valueState
	capacity int

	mu   sync.Mutex
	ring []*valueState
	hand int
}

func newCache(capacity int) *cache { return &cache{capacity: max(capacity, 1)} }

// get returns the state of key, or nil.
func (c *cache) get(key any) *valueState {
	v, ok := c.m.Load(key)
	if !ok {
		return nil
	}
	s := v.(*valueState)
	if !s.ref.Load() {
		s.ref.Store(true)
	}
	return s
}

// getOrCreate returns the state of key, creating it with init when absent
// (init runs once, before the state is visible), evicting a value if the
// cache is full.
func (c *cache) getOrCreate(key any, init func(*valueState)) *valueState {
	if s := c.get(key); s != nil {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m.Load(key); ok {
		return v.(*valueState)
	}
	s := &valueState{key: key}
	init(s)
	if len(c.ring) < c.capacity {
		c.ring = append(c.ring, s)
	} else {
		c.ring[c.evict()] = s
	}
	c.m.Store(key, s)
	return s
}

// evict removes one value and returns its slot in the ring.
func (c *cache) evict() int {
	// Two full turns clear every flag; past them, take the slot under the
	// hand even if entries of its value are in flight.
	for range 2*len(c.ring) + 1 {
		i := c.hand
		c.hand = (c.hand + 1) % len(c.ring)
		s := c.ring[i]
		if s.ref.Load() {
			s.ref.Store(false)
			continue
		}
		if s.threads.Load() > 0 {
			continue
		}
		c.m.CompareAndDelete(s.key, s)
		return i
	}
	i := c.hand
	c.hand = (c.hand + 1) % len(c.ring)
	c.m.CompareAndDelete(c.ring[i].key, c.ring[i])
	return i
}

// len returns the number of values kept.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ring)
}
