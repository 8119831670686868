package stat

import (
	"math"
	"runtime"
	"sync/atomic"
)

// Event is a counter kept per bucket.
type Event int

// The counters of a bucket.
const (
	Pass         Event = iota // entries admitted
	Block                     // entries rejected
	Success                   // entries completed (with or without error)
	Exception                 // entries completed with an error
	RT                        // sum of response times of completed entries, ms
	OccupiedPass              // prioritized entries admitted into a future window
	numEvents
)

// String returns the event's name.
func (e Event) String() string {
	switch e {
	case Pass:
		return "pass"
	case Block:
		return "block"
	case Success:
		return "success"
	case Exception:
		return "exception"
	case RT:
		return "rt"
	case OccupiedPass:
		return "occupiedPass"
	}
	return "unknown"
}

const (
	emptyStart     = math.MinInt64     // bucket never used
	resettingStart = math.MinInt64 + 1 // a writer is zeroing the bucket
)

// bucket is one slot of the ring: 64 bytes, one cache line.
type bucket struct {
	start atomic.Int64 // window start, ms; emptyStart or resettingStart
	c     [numEvents]atomic.Int64
	minRT atomic.Int64
}

// Window is a ring of time buckets covering a sliding interval. The zero
// value is not usable: create one with [NewWindow]. All methods are safe for
// concurrent use and never block one another beyond the few instructions a
// writer spends resetting a stale bucket.
type Window struct {
	intervalMs int64
	bucketMs   int64
	buckets    []bucket
	// borrowed holds counts that prioritized entries reserved in a future
	// bucket (see [Window.Borrow]); a bucket starts from them when it is reset.
	borrowed []borrow
}

type borrow struct {
	start atomic.Int64
	n     atomic.Int64
}

// NewWindow returns a window of sampleCount buckets spanning intervalMs.
// intervalMs must be a positive multiple of sampleCount.
func NewWindow(sampleCount int, intervalMs int64) *Window {
	if sampleCount <= 0 || intervalMs <= 0 || intervalMs%int64(sampleCount) != 0 {
		panic("stat: interval must be a positive multiple of the sample count")
	}
	w := &Window{
		intervalMs: intervalMs,
		bucketMs:   intervalMs / int64(sampleCount),
		buckets:    make([]bucket, sampleCount),
	}
	for i := range w.buckets {
		w.buckets[i].start.Store(emptyStart)
	}
	return w
}

// IntervalMs returns the length of the window in milliseconds.
func (w *Window) IntervalMs() int64 { return w.intervalMs }

// BucketMs returns the length of one bucket in milliseconds.
func (w *Window) BucketMs() int64 { return w.bucketMs }

// current returns the bucket for time now, resetting a stale one.
func (w *Window) current(now int64) *bucket {
	start := now - now%w.bucketMs
	b := &w.buckets[(now/w.bucketMs)%int64(len(w.buckets))]
	for {
		s := b.start.Load()
		switch {
		case s == start:
			return b
		case s == resettingStart:
			runtime.Gosched()
		case s < start:
			if !b.start.CompareAndSwap(s, resettingStart) {
				continue
			}
			for i := range b.c {
				b.c[i].Store(0)
			}
			b.c[Pass].Store(w.takeBorrowed(start))
			b.minRT.Store(math.MaxInt64)
			b.start.Store(start)
			return b
		default:
			// The bucket already belongs to a newer round: this writer read
			// the clock before another one moved on. Count it there.
			return b
		}
	}
}

// Add adds n to event e in the bucket of time now (ms).
func (w *Window) Add(now int64, e Event, n int64) {
	w.current(now).c[e].Add(n)
}

// AddRT records one completed entry's response time: it adds rt to the RT
// sum and lowers the bucket's minimum RT.
func (w *Window) AddRT(now int64, rt int64) {
	b := w.current(now)
	b.c[RT].Add(rt)
	for {
		m := b.minRT.Load()
		if rt >= m || b.minRT.CompareAndSwap(m, rt) {
			return
		}
	}
}

// valid reports whether a bucket that starts at s counts at time now.
func (w *Window) valid(s, now int64) bool {
	return s > resettingStart && s <= now && now-s < w.intervalMs
}

// Sum returns the total of event e over the buckets within the interval
// ending at now.
func (w *Window) Sum(now int64, e Event) int64 {
	w.current(now)
	var n int64
	for i := range w.buckets {
		b := &w.buckets[i]
		if w.valid(b.start.Load(), now) {
			n += b.c[e].Load()
		}
	}
	return n
}

// MinRT returns the smallest response time recorded within the interval
// ending at now, or def when nothing completed.
func (w *Window) MinRT(now int64, def int64) int64 {
	w.current(now)
	m := int64(math.MaxInt64)
	for i := range w.buckets {
		b := &w.buckets[i]
		if w.valid(b.start.Load(), now) {
			m = min(m, b.minRT.Load())
		}
	}
	if m == math.MaxInt64 {
		return def
	}
	return m
}

// MaxBucket returns the largest per-bucket value of event e within the
// interval ending at now (used for the highest success rate seen).
func (w *Window) MaxBucket(now int64, e Event) int64 {
	w.current(now)
	var m int64
	for i := range w.buckets {
		b := &w.buckets[i]
		if w.valid(b.start.Load(), now) {
			m = max(m, b.c[e].Load())
		}
	}
	return m
}

// BucketSum returns event e of the bucket that starts at start, or 0 when
// that bucket is no longer (or not yet) in the ring.
func (w *Window) BucketSum(start int64, e Event) int64 {
	b := &w.buckets[(start/w.bucketMs)%int64(len(w.buckets))]
	if b.start.Load() != start {
		return 0
	}
	return b.c[e].Load()
}

// Previous returns event e of the bucket just before the one of time now,
// or 0 when it is not in the ring (Sentinel's previousWindowPass).
func (w *Window) Previous(now int64, e Event) int64 {
	return w.BucketSum(now-now%w.bucketMs-w.bucketMs, e)
}

// Borrow reserves n passes in the future bucket that starts at start: the
// bucket begins its life with them already counted, so prioritized entries
// that occupied it are charged to the window they run in.
func (w *Window) Borrow(start int64, n int64) {
	if w.borrowed == nil {
		return
	}
	br := &w.borrowed[(start/w.bucketMs)%int64(len(w.borrowed))]
	for {
		s := br.start.Load()
		if s == start {
			br.n.Add(n)
			return
		}
		if s > start {
			return // slot already taken by a later window; drop (cannot happen within one interval)
		}
		if br.start.CompareAndSwap(s, start) {
			br.n.Store(n)
			return
		}
	}
}

// Borrowed returns the passes reserved in buckets that start after now.
func (w *Window) Borrowed(now int64) int64 {
	if w.borrowed == nil {
		return 0
	}
	var n int64
	for i := range w.borrowed {
		if s := w.borrowed[i].start.Load(); s > now {
			n += w.borrowed[i].n.Load()
		}
	}
	return n
}

func (w *Window) takeBorrowed(start int64) int64 {
	if w.borrowed == nil {
		return 0
	}
	br := &w.borrowed[(start/w.bucketMs)%int64(len(w.borrowed))]
	if br.start.Load() == start {
		return br.n.Swap(0)
	}
	return 0
}

// EnableBorrow makes the window accept [Window.Borrow]. It must be called
// before the window is shared.
func (w *Window) EnableBorrow() {
	if w.borrowed == nil {
		w.borrowed = make([]borrow, len(w.buckets))
		for i := range w.borrowed {
			w.borrowed[i].start.Store(emptyStart)
		}
	}
}
