package stat

import (
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"
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
	// Slots of a line beyond the events.
	slotMinRT = int(numEvents) // smallest RT of the bucket's stripe
	slotGauge = slotMinRT + 1  // a shard of a gauge that resets never touch
)

// line is one stripe of one bucket: the event counters, the minimum RT and
// a gauge shard, exactly one 64-byte cache line.
type line [8]atomic.Int64

// Window is a ring of time buckets covering a sliding interval. The zero
// value is not usable: create one with [NewWindow]. All methods are safe for
// concurrent use and never block one another beyond the few instructions a
// writer spends resetting a stale bucket.
//
// Each bucket is split into stripes, one cache line each; a writer adds to
// a stripe picked at random and a reader sums them. With one stripe per
// core or more, writers on different cores seldom touch the same line, so
// Enter/Exit on one hot resource scales across cores instead of bouncing a
// counter between them. The bucket starts live together in one slice that
// writers only read, except once per bucket length.
type Window struct {
	intervalMs int64
	bucketMs   int64
	starts     []atomic.Int64 // per bucket: its window start, ms
	lines      []line         // bucket i, stripe s at i*stripes+s
	stripes    int
	mask       int64 // len(starts)-1 when that is a power of two, else -1
	// borrowed holds counts that prioritized entries reserved in a future
	// bucket (see [Window.Borrow]); a bucket starts from them when reset.
	borrowed []borrow
}

type borrow struct {
	start atomic.Int64
	n     atomic.Int64
}

// NewWindow returns a window of sampleCount buckets spanning intervalMs,
// each split into stripes cache lines (rounded up to a power of two).
// intervalMs must be a positive multiple of sampleCount.
func NewWindow(sampleCount int, intervalMs int64, stripes int) *Window {
	if sampleCount <= 0 || intervalMs <= 0 || intervalMs%int64(sampleCount) != 0 {
		panic("stat: interval must be a positive multiple of the sample count")
	}
	s := 1
	for s < stripes {
		s <<= 1
	}
	w := &Window{
		intervalMs: intervalMs,
		bucketMs:   intervalMs / int64(sampleCount),
		starts:     make([]atomic.Int64, sampleCount),
		lines:      make([]line, sampleCount*s),
		stripes:    s,
		mask:       -1,
	}
	if sampleCount&(sampleCount-1) == 0 {
		w.mask = int64(sampleCount - 1)
	}
	for i := range w.starts {
		w.starts[i].Store(emptyStart)
	}
	for i := range w.lines {
		w.lines[i][slotMinRT].Store(math.MaxInt64)
	}
	return w
}

// IntervalMs returns the length of the window in milliseconds.
func (w *Window) IntervalMs() int64 { return w.intervalMs }

// BucketMs returns the length of one bucket in milliseconds.
func (w *Window) BucketMs() int64 { return w.bucketMs }

// current returns a stripe of the bucket for time now, resetting the bucket
// when it is left over from an older round of the ring.
func (w *Window) current(now int64) *line {
	q := now / w.bucketMs // one division: start and slot both come from it
	start := q * w.bucketMs
	i := w.slot(q)
	st := &w.starts[i]
	for {
		s := st.Load()
		switch {
		case s == start:
			return w.stripe(i)
		case s == resettingStart:
			runtime.Gosched()
		case s < start:
			if !st.CompareAndSwap(s, resettingStart) {
				continue
			}
			for k := i * w.stripes; k < (i+1)*w.stripes; k++ {
				l := &w.lines[k]
				for e := range numEvents {
					l[e].Store(0)
				}
				l[slotMinRT].Store(math.MaxInt64)
			}
			w.lines[i*w.stripes][Pass].Store(w.takeBorrowed(start))
			st.Store(start)
			return w.stripe(i)
		default:
			// The bucket already belongs to a newer round: this writer read
			// the clock before another one moved on. Count it there.
			return w.stripe(i)
		}
	}
}

// index returns the ring slot of time t (ms), also for times before zero
// (the bucket before the engine started).
func (w *Window) index(t int64) int {
	q := t / w.bucketMs
	if t < 0 && t%w.bucketMs != 0 {
		q-- // floor, so bucket starts below zero are still multiples of bucketMs
	}
	return w.slot(q)
}

// slot returns the ring slot of bucket number q.
func (w *Window) slot(q int64) int {
	if w.mask >= 0 {
		return int(q & w.mask) // two's complement: also right for q < 0
	}
	n := int64(len(w.starts))
	return int((q%n + n) % n)
}

func (w *Window) stripe(i int) *line {
	if w.stripes == 1 {
		return &w.lines[i]
	}
	return &w.lines[i*w.stripes+goroutineStripe(w.stripes)]
}

// goroutineStripe picks a stripe from the address of the calling
// goroutine's stack: the same goroutine keeps writing the same cache lines,
// and goroutines running at once on different cores (different stacks,
// at least 8 KiB apart) mostly write different ones. A random stripe per
// write would make every core pull lines the others just dirtied.
func goroutineStripe(stripes int) int {
	var probe byte
	a := uint64(uintptr(unsafe.Pointer(&probe))) >> 13
	a *= 0x9E3779B97F4A7C15 // spread neighbouring stacks over the stripes
	return int(a>>59) & (stripes - 1)
}

// Add adds n to event e in the bucket of time now (ms).
func (w *Window) Add(now int64, e Event, n int64) {
	w.current(now)[e].Add(n)
}

// addGauge adds n to event e (when n != 0) and d to the gauge, in one
// stripe of the bucket of time now.
func (w *Window) addGauge(now int64, e Event, n int64, d int64) {
	l := w.current(now)
	if n != 0 {
		l[e].Add(n)
	}
	l[slotGauge].Add(d)
}

// complete records count completed entries that took rt ms, whether they
// failed, and lowers the gauge by d.
func (w *Window) complete(now int64, count, rt int64, failed bool, d int64) {
	l := w.current(now)
	l[Success].Add(count)
	l[RT].Add(rt)
	if failed {
		l[Exception].Add(count)
	}
	if d != 0 {
		l[slotGauge].Add(d)
	}
	for {
		m := l[slotMinRT].Load()
		if rt >= m || l[slotMinRT].CompareAndSwap(m, rt) {
			return
		}
	}
}

// gauge returns the sum of the gauge shards: the adds of [Window.addGauge]
// and [Window.complete] net of one another, whatever bucket they landed in.
func (w *Window) gauge() int64 {
	var n int64
	for i := range w.lines {
		n += w.lines[i][slotGauge].Load()
	}
	return n
}

// valid reports whether a bucket that starts at s counts at time now.
func (w *Window) valid(s, now int64) bool {
	return s > resettingStart && s <= now && now-s < w.intervalMs
}

// bucketLines returns the stripes of bucket i.
func (w *Window) bucketLines(i int) []line {
	return w.lines[i*w.stripes : (i+1)*w.stripes]
}

// Sum returns the total of event e over the buckets within the interval
// ending at now.
func (w *Window) Sum(now int64, e Event) int64 {
	w.current(now)
	var n int64
	for i := range w.starts {
		if w.valid(w.starts[i].Load(), now) {
			n += w.bucketSum(i, e)
		}
	}
	return n
}

// MinRT returns the smallest response time recorded within the interval
// ending at now, or def when nothing completed.
func (w *Window) MinRT(now int64, def int64) int64 {
	w.current(now)
	m := int64(math.MaxInt64)
	for i := range w.starts {
		if w.valid(w.starts[i].Load(), now) {
			lines := w.bucketLines(i)
			for k := range lines {
				m = min(m, lines[k][slotMinRT].Load())
			}
		}
	}
	if m == math.MaxInt64 {
		return def
	}
	return m
}

// MaxBucket returns the largest per-bucket total of event e within the
// interval ending at now (used for the highest success rate seen).
func (w *Window) MaxBucket(now int64, e Event) int64 {
	w.current(now)
	var m int64
	for i := range w.starts {
		if w.valid(w.starts[i].Load(), now) {
			m = max(m, w.bucketSum(i, e))
		}
	}
	return m
}

func (w *Window) bucketSum(i int, e Event) int64 {
	var n int64
	lines := w.bucketLines(i)
	for k := range lines {
		n += lines[k][e].Load()
	}
	return n
}

// BucketSum returns event e of the bucket that starts at start, or 0 when
// that bucket is no longer (or not yet) in the ring.
func (w *Window) BucketSum(start int64, e Event) int64 {
	i := w.index(start)
	if w.starts[i].Load() != start {
		return 0
	}
	return w.bucketSum(i, e)
}

// Previous returns event e of the bucket just before the one of time now,
// or 0 when it is not in the ring (Sentinel's previousWindowPass).
func (w *Window) Previous(now int64, e Event) int64 {
	return w.BucketSum(now-now%w.bucketMs-w.bucketMs, e)
}

// Borrow reserves n passes in the future bucket that starts at start: the
// bucket begins its life with them already counted, so prioritized entries
// that occupied it are charged to the window they run in. It is a no-op
// unless [Window.EnableBorrow] was called.
func (w *Window) Borrow(start int64, n int64) {
	if w.borrowed == nil {
		return
	}
	br := &w.borrowed[w.index(start)]
	for {
		s := br.start.Load()
		if s == start {
			br.n.Add(n)
			return
		}
		if s > start {
			return // taken by a later window: cannot happen within one interval
		}
		if br.start.CompareAndSwap(s, start) {
			br.n.Store(n)
			return
		}
	}
}

// Borrowed returns the passes reserved in buckets that start after now.
func (w *Window) Borrowed(now int64) int64 {
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
	br := &w.borrowed[w.index(start)]
	if br.start.Load() == start {
		return br.n.Swap(0)
	}
	return 0
}

// EnableBorrow makes the window accept [Window.Borrow]. It must be called
// before the window is shared.
func (w *Window) EnableBorrow() {
	if w.borrowed == nil {
		w.borrowed = make([]borrow, len(w.starts))
		for i := range w.borrowed {
			w.borrowed[i].start.Store(emptyStart)
		}
	}
}

// Stripes returns how many cache lines each bucket is split into.
func (w *Window) Stripes() int { return w.stripes }
