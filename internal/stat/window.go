package stat

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bulwark-go/bulwark/internal/mono"
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
	// curSlotBits is how many low bits of Window.cur hold a slot.
	curSlotBits    = 16
	noCur          = math.MinInt64     // Window.cur before any bucket
	emptyStart     = math.MinInt64     // bucket never used
	resettingStart = math.MinInt64 + 1 // a writer is zeroing the bucket
	// Slots of a line beyond the events.
	slotMinRT = int(numEvents) // smallest RT of the bucket's stripe
	// slotEntries is a shard of what the concurrency needs beyond passes
	// and completions: entries that counted other than one pass each
	// (see [Window.gauge]). Resets never touch it.
	slotEntries = slotMinRT + 1
)

// line is one stripe of one bucket: the event counters, the minimum RT and
// a shard of the concurrency's corrections, exactly one 64-byte cache line.
type line [8]atomic.Int64

// cacheLine is the size of a cache line, lineInts how many int64s fill one.
const (
	cacheLine = 64
	lineInts  = cacheLine / 8
)

// Window is a ring of time buckets covering a sliding interval. The zero
// value is not usable: create one with [NewWindow]. All methods are safe for
// concurrent use and never block one another beyond the few instructions a
// writer spends resetting a stale bucket.
//
// Methods take the time as a [mono.Time]; buckets are whole milliseconds,
// so each method converts it once, with [mono.Time.Millis], and works in
// milliseconds from there.
//
// # Stripes
//
// Each bucket is split into stripes, one cache line each. A writer adds to
// the stripe of the processor (the scheduler's P) its goroutine runs on, so
// with one stripe per P, writers on different cores never write the same
// line and a hot resource does not bounce a counter between them. Readers
// sum the stripes. The bucket starts live together (in a striped window,
// on a line of their own); writers only read them, except once per bucket
// length.
//
// # Passes of a striped window
//
// A window of more than one stripe keeps its passes and completions apart
// from the other counters, a line per stripe, so that checking a limit
// ([Window.PassFits]) or the concurrency reads only lines that entries
// write as they pass and complete: blocks, response times and failures go
// elsewhere. Each stripe counts its passes and publishes them to a
// per-bucket total in steps of at least a quantum (64 × stripes): the
// published total is read by every check and written once per quantum
// passes of a stripe. A check then knows, from its own stripe and the
// published total alone, an upper bound of the bucket's passes: published
// + its own unpublished passes + (stripes−1) × (quantum−1) for what the
// other stripes have not published yet. While that bound is within the
// limit the check passes without reading another core's line; near the
// limit it sums the stripes. When a bucket begins, the buckets before it
// are published in full, so the previous buckets of the interval are read
// as one published total each.
//
// The answer of PassFits is therefore exact for passes that were recorded
// before the check began; what it cannot see is passes whose entries are
// between their check and their record at that moment, exactly as with
// Sentinel's check-then-add (see [Window.PassFits]).
//
// # Concurrency
//
// The number of entries admitted and not yet completed is not a counter of
// its own: it is the passes minus the completions, over every bucket of the
// ring, plus what the ring forgot. A reset takes a bucket's passes and
// completions with atomic swaps and carries their difference over, so
// every add lands either in what a reset carried or in the bucket's new
// round. An entry then costs one atomic add at its pass and one at its
// completion, not two each. Entries that count more or less than one pass
// (a count above one, an entry whose pass was counted ahead) add the
// difference to a shard of corrections; passes counted ahead are
// subtracted from the carry when their bucket takes them. Readers sum
// between resets (see [Window.gauge]).
type Window struct {
	windowFields
	// Every write reads the fields: whole lines of their own, so that no
	// write to a neighbouring object makes other cores miss them.
	_ [cacheLine - unsafe.Sizeof(windowFields{})%cacheLine]byte
}

type windowFields struct {
	intervalMs int64
	bucketMs   int64
	starts     []atomic.Int64 // per bucket: its window start, ms
	// cur is the newest bucket a writer found live: its start (ms) <<
	// curSlotBits | its slot, so that writers within it skip the division
	// and the starts. noCur before the first.
	cur     atomic.Int64
	lines   []line // bucket i, stripe s at i*stripes+s
	stripes int
	mask    int64 // len(starts)-1 when that is a power of two, else -1

	// split holds the passes and completions of a striped window, nil
	// with one stripe (they are then the Pass and Success slots of lines).
	split *split

	// borrowed holds counts that prioritized entries reserved in a future
	// bucket (see [Window.Borrow]); a bucket starts from them when reset.
	borrowed []borrow

	// carry is the passes minus the completions of the rounds that resets
	// cleared, less the passes counted ahead that they started from.
	// resetting counts the resets under way and resets the ones done, so
	// that a reader can tell it summed between them (see [Window.gauge]).
	carry, resetting, resets atomic.Int64
}

// split holds a striped window's passes and completions: stripe s keeps,
// for bucket i of n, its pass count at s*passStride+2i, how much of it is
// published at s*passStride+2i+1, and its completions at
// s*passStride+2n+i. A stripe's are one line for the default two buckets,
// written by the entries of one core: the concurrency (see [Window.gauge])
// reads one line per other core that its entries keep writing, and a check
// near the limit reads the same.
type split struct {
	splitFields
	// Every check reads the fields: a line of their own.
	_ [cacheLine - unsafe.Sizeof(splitFields{})%cacheLine]byte
}

type splitFields struct {
	passes     []atomic.Int64
	passStride int
	// published holds, per bucket, passes the stripes published: never
	// less than the sum of their published counts.
	published []atomic.Int64
	quantum   int64 // a stripe publishes once this many passes are unpublished
	slack     int64 // (stripes-1)*(quantum-1): unpublished passes of the others
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
	w := &Window{windowFields: windowFields{
		intervalMs: intervalMs,
		bucketMs:   intervalMs / int64(sampleCount),
		starts:     make([]atomic.Int64, sampleCount),
		lines:      make([]line, sampleCount*s),
		stripes:    s,
		mask:       -1,
	}}
	if s > 1 {
		// Writers on every core read the starts on every write: a line
		// of their own.
		w.starts = make([]atomic.Int64, roundLine(sampleCount))[:sampleCount]
	}
	if sampleCount&(sampleCount-1) == 0 {
		w.mask = int64(sampleCount - 1)
	}
	for i := range w.starts {
		w.starts[i].Store(emptyStart)
	}
	w.cur.Store(noCur)
	for i := range w.lines {
		w.lines[i][slotMinRT].Store(math.MaxInt64)
	}
	if s > 1 {
		stride, quantum := roundLine(3*sampleCount), 64*int64(s)
		w.split = &split{splitFields: splitFields{
			passes:     make([]atomic.Int64, s*stride),
			passStride: stride,
			published:  make([]atomic.Int64, roundLine(sampleCount)),
			quantum:    quantum,
			slack:      int64(s-1) * (quantum - 1),
		}}
	}
	return w
}

// roundLine rounds n int64s up to whole cache lines.
func roundLine(n int) int { return (n + lineInts - 1) / lineInts * lineInts }

// IntervalMs returns the length of the window in milliseconds.
func (w *Window) IntervalMs() int64 { return w.intervalMs }

// BucketMs returns the length of one bucket in milliseconds.
func (w *Window) BucketMs() int64 { return w.bucketMs }

// bucket returns the ring slot of the bucket for time now, resetting the
// bucket when it is left over from an older round of the ring.
func (w *Window) bucket(now int64) int {
	if i, ok := w.newest(now); ok {
		return i
	}
	return w.bucketSlow(now)
}

// newest returns the slot of the newest bucket a writer found live, when
// now is within it, as nearly every write's time is: without a division,
// and small enough to be inlined where an entry writes (where bucket, which
// calls bucketSlow otherwise, would be a call). One unsigned comparison is
// start <= now < start+bucketMs: a time before start wraps around.
func (w *Window) newest(now int64) (int, bool) {
	c := w.cur.Load()
	return int(c & (1<<curSlotBits - 1)), uint64(now-c>>curSlotBits) < uint64(w.bucketMs)
}

// bucketSlow is bucket outside the newest bucket.
func (w *Window) bucketSlow(now int64) int {
	q := now / w.bucketMs // one division: start and slot both come from it
	start := q * w.bucketMs
	i := w.slot(q)
	st := &w.starts[i]
	for {
		s := st.Load()
		switch {
		case s == start:
			w.setCur(start, i)
			return i
		case s == resettingStart:
			runtime.Gosched()
		case s < start:
			if !st.CompareAndSwap(s, resettingStart) {
				continue
			}
			w.reset(i, start)
			st.Store(start)
			w.setCur(start, i)
			return i
		default:
			// The bucket already belongs to a newer round: this writer read
			// the clock before another one moved on. Count it there.
			return i
		}
	}
}

// setCur records that bucket slot i, starting at start, is live, unless
// a newer bucket is recorded already.
func (w *Window) setCur(start int64, i int) {
	v := start<<curSlotBits | int64(i)
	for {
		c := w.cur.Load()
		if c != noCur && c>>curSlotBits >= start {
			return
		}
		if w.cur.CompareAndSwap(c, v) {
			return
		}
	}
}

// reset zeroes bucket i for a new round starting at start, carrying its
// passes minus its completions over to the concurrency. In a striped
// window it first publishes the other buckets in full, so that checks read
// them as one number.
func (w *Window) reset(i int, start int64) {
	w.resetting.Add(1)
	defer func() {
		w.resets.Add(1)
		w.resetting.Add(-1)
	}()
	var carry int64
	for k := i * w.stripes; k < (i+1)*w.stripes; k++ {
		l := &w.lines[k]
		for e := range numEvents {
			switch e {
			case Pass:
				carry += l[e].Swap(0)
			case Success:
				carry -= l[e].Swap(0)
			default:
				l[e].Store(0)
			}
		}
		l[slotMinRT].Store(math.MaxInt64)
	}
	b := w.takeBorrowed(start)
	// The borrowed passes' entries raised the concurrency when they were
	// admitted: starting the bucket from them must not raise it again.
	carry -= b
	// The bucket starts from them with an add, not a store: a writer that
	// took the bucket before the reset and adds after its swap keeps its
	// pass in the new round, where the concurrency still finds it.
	if w.split == nil {
		w.lines[i*w.stripes][Pass].Add(b)
		w.carry.Add(carry)
		return
	}
	for j := range w.starts {
		if j != i && w.valid(w.starts[j].Load(), start) {
			for s := range w.stripes {
				k := s*w.split.passStride + 2*j
				w.publish(j, &w.split.passes[k], &w.split.passes[k+1], w.split.passes[k].Load(), 1)
			}
		}
	}
	for s := range w.stripes {
		k := s*w.split.passStride + 2*i
		carry += w.split.passes[k].Swap(0)
		w.split.passes[k+1].Store(0)
		carry -= w.completions(i, s).Swap(0)
	}
	w.carry.Add(carry)
	// The borrowed passes are stripe 0's, published at once.
	w.split.passes[2*i].Add(b)
	w.split.passes[2*i+1].Store(b)
	w.split.published[i].Store(b)
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

// addPass adds n passes to stripe s of bucket i.
func (w *Window) addPass(i, s int, n int64) {
	if w.split == nil {
		w.lines[i*w.stripes+s][Pass].Add(n)
		return
	}
	k := s*w.split.passStride + 2*i
	c := &w.split.passes[k]
	w.publish(i, c, &w.split.passes[k+1], c.Add(n), w.split.quantum)
}

// publish adds a stripe's unpublished passes of bucket i (count c, of
// which p are published; v is a reading of c) to the bucket's published
// total, when at least quantum of them are unpublished. The total grows
// before p does and shrinks back when another writer published first, so
// it is never less than the sum of the published counts.
func (w *Window) publish(i int, c, p *atomic.Int64, v, quantum int64) {
	for {
		old := p.Load()
		d := v - old
		if d < quantum {
			return
		}
		f := &w.split.published[i]
		f.Add(d)
		if p.CompareAndSwap(old, v) {
			return
		}
		f.Add(-d)
		v = c.Load()
	}
}

// completions returns stripe s's count of completions in bucket i.
func (w *Window) completions(i, s int) *atomic.Int64 {
	if w.split == nil {
		return &w.lines[i*w.stripes+s][Success]
	}
	return &w.split.passes[s*w.split.passStride+2*len(w.starts)+i]
}

// stripe returns p's stripe.
func (w *Window) stripe(p Proc) int { return stripeOf(p, w.stripes) }

// line returns p's stripe of bucket i.
func (w *Window) line(i int, p Proc) *line { return &w.lines[i*w.stripes+w.stripe(p)] }

// Add adds n to event e in the bucket of time now, in the caller's stripe.
func (w *Window) Add(now mono.Time, e Event, n int64) { w.add(now.Millis(), e, n, Here()) }

// add adds n to event e in p's stripe of the bucket of time now (ms).
func (w *Window) add(now int64, e Event, n int64, p Proc) {
	i := w.bucket(now)
	switch e {
	case Pass:
		w.addPass(i, w.stripe(p), n)
	case Success:
		w.completions(i, w.stripe(p)).Add(n)
	default:
		w.line(i, p)[e].Add(n)
	}
}

// enter records one admitted entry of count passes, in p's stripe of the
// bucket of time now. The concurrency counts it as one: count−1 of its
// passes go to the corrections (see [Window]), which an entry of one pass,
// nearly every entry, does not touch.
func (w *Window) enter(now int64, count int64, p Proc) {
	i, ok := w.newest(now)
	if !ok {
		i = w.bucketSlow(now)
	}
	s := w.stripe(p)
	if count != 0 {
		w.addPass(i, s, count)
	}
	if count != 1 {
		w.lines[i*w.stripes+s][slotEntries].Add(1 - count)
	}
}

// complete records count completed entries that took rt ms and whether they
// failed, in p's stripe. With entry set, they are one entry's, which the
// concurrency counts as one (see [Window.enter]). Adding a zero is left
// out: each add is an atomic read-modify-write, and calls under a
// millisecond, common, add 0 ms.
func (w *Window) complete(now int64, count, rt int64, failed, entry bool, p Proc) {
	i, ok := w.newest(now)
	if !ok {
		i = w.bucketSlow(now)
	}
	s := w.stripe(p)
	l := &w.lines[i*w.stripes+s]
	if entry && count != 1 {
		// Before the completions: a reader that sees these sees that.
		l[slotEntries].Add(count - 1)
	}
	w.completions(i, s).Add(count)
	if rt != 0 {
		l[RT].Add(rt)
	}
	if failed {
		l[Exception].Add(count)
	}
	for {
		m := l[slotMinRT].Load()
		if rt >= m || l[slotMinRT].CompareAndSwap(m, rt) {
			return
		}
	}
}

// gauge returns the entries recorded by [Window.enter] and not yet by
// [Window.complete]: the carry, plus the passes and corrections of every
// bucket, less their completions, summed while no reset moved any of them
// to the carry (a reset, once per bucket length, makes a reader sum again).
// It reads the completions, the corrections, then the passes, the reverse
// of the order an entry writes them in (enter adds its passes, then its
// correction; complete its correction, then its completions): an entry that
// enters or completes while it sums may count as running, never one that
// runs as done.
func (w *Window) gauge() int64 {
	for {
		done := w.resets.Load()
		if w.resetting.Load() == 0 {
			n := w.sumEntries()
			if w.resetting.Load() == 0 && w.resets.Load() == done {
				return n
			}
		}
		runtime.Gosched()
	}
}

// sumEntries is gauge's sum, correct when no reset runs meanwhile.
func (w *Window) sumEntries() int64 {
	var n int64
	for i := range w.starts {
		for s := range w.stripes {
			n -= w.completions(i, s).Load()
		}
	}
	n += w.carry.Load()
	for i := range w.lines {
		n += w.lines[i][slotEntries].Load()
	}
	if w.split == nil {
		for i := range w.lines {
			n += w.lines[i][Pass].Load()
		}
		return n
	}
	for s := range w.stripes {
		for k := range len(w.starts) {
			n += w.split.passes[s*w.split.passStride+2*k].Load()
		}
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
func (w *Window) Sum(now mono.Time, e Event) int64 {
	ms := now.Millis()
	w.bucket(ms)
	var n int64
	for i := range w.starts {
		if w.valid(w.starts[i].Load(), ms) {
			n += w.bucketSum(i, e)
		}
	}
	return n
}

// PassFits reports whether acquire more passes keep the passes within the
// interval ending at now at most limit, that is whether
// Sum(now, Pass)+acquire <= limit. It is how limits are checked.
//
// The answer is exact for the passes recorded before the call began.
// Passes recorded while it runs may be missed, so entries that check and
// then record, concurrently, can together exceed limit by at most what was
// being recorded, or checked and not yet recorded, during one another's
// checks: one entry per goroutine doing so. Sentinel's check, which sums
// the window and then adds, has the same bound. A striped window answers
// from its published totals and the caller's stripe while they show room
// (see [Window]), and sums the stripes only near limit; either way it
// never admits what the exact sum of the recorded passes would refuse. It
// refuses only what that sum refuses, but for one race: when a pass
// recorded late into the previous bucket (its entry read the clock before
// the bucket ended) is published just as the next bucket begins, the two
// publishes race and the previous bucket may read high for the few
// instructions that takes.
//
// p chooses the stripe the check reads first; any p gives the same answer.
func (w *Window) PassFits(now mono.Time, acquire, limit int64, p Proc) bool {
	ms := now.Millis()
	i, ok := w.newest(ms)
	if !ok {
		i = w.bucketSlow(ms)
	}
	rest := limit - acquire
	for j := range w.starts {
		if j != i && w.valid(w.starts[j].Load(), ms) {
			if w.split != nil {
				rest -= w.split.published[j].Load() // published in full when bucket i began
			} else {
				rest -= w.bucketSum(j, Pass)
			}
		}
	}
	if rest < 0 {
		return false
	}
	if w.split != nil {
		// Read the published count first and the count last: both only
		// grow, so own is at least this stripe's unpublished passes at the
		// moment the total is read.
		k := w.stripe(p)*w.split.passStride + 2*i
		p := w.split.passes[k+1].Load()
		f := w.split.published[i].Load()
		own := w.split.passes[k].Load() - p
		if f+own+w.split.slack <= rest {
			return true
		}
	}
	return w.bucketSum(i, Pass) <= rest
}

// MinRT returns the smallest response time recorded within the interval
// ending at now (in whole milliseconds, as recorded), or def when nothing
// completed.
func (w *Window) MinRT(now mono.Time, def time.Duration) time.Duration {
	ms := now.Millis()
	w.bucket(ms)
	m := int64(math.MaxInt64)
	for i := range w.starts {
		if w.valid(w.starts[i].Load(), ms) {
			lines := w.bucketLines(i)
			for k := range lines {
				m = min(m, lines[k][slotMinRT].Load())
			}
		}
	}
	if m == math.MaxInt64 {
		return def
	}
	return time.Duration(m) * time.Millisecond
}

// MaxBucket returns the largest per-bucket total of event e within the
// interval ending at now (used for the highest success rate seen).
func (w *Window) MaxBucket(now mono.Time, e Event) int64 {
	ms := now.Millis()
	w.bucket(ms)
	var m int64
	for i := range w.starts {
		if w.valid(w.starts[i].Load(), ms) {
			m = max(m, w.bucketSum(i, e))
		}
	}
	return m
}

func (w *Window) bucketSum(i int, e Event) int64 {
	var n int64
	if w.split != nil {
		switch e {
		case Pass:
			for k := 2 * i; k < len(w.split.passes); k += w.split.passStride {
				n += w.split.passes[k].Load()
			}
			return n
		case Success:
			for s := range w.stripes {
				n += w.completions(i, s).Load()
			}
			return n
		}
	}
	lines := w.bucketLines(i)
	for k := range lines {
		n += lines[k][e].Load()
	}
	return n
}

// BucketSum returns event e of the bucket that starts at start, or 0 when
// that bucket is no longer (or not yet) in the ring.
func (w *Window) BucketSum(start mono.Time, e Event) int64 {
	ms := start.Millis()
	i := w.index(ms)
	if w.starts[i].Load() != ms {
		return 0
	}
	return w.bucketSum(i, e)
}

// Previous returns event e of the bucket just before the one of time now,
// or 0 when it is not in the ring (Sentinel's previousWindowPass).
func (w *Window) Previous(now mono.Time, e Event) int64 {
	ms := now.Millis()
	return w.BucketSum(mono.FromMillis(ms-ms%w.bucketMs-w.bucketMs), e)
}

// Borrow reserves n passes in the future bucket that starts at start: the
// bucket begins its life with them already counted, so prioritized entries
// that occupied it are charged to the window they run in. It is a no-op
// unless [Window.EnableBorrow] was called.
func (w *Window) Borrow(start mono.Time, n int64) {
	if w.borrowed == nil {
		return
	}
	ms := start.Millis()
	br := &w.borrowed[w.index(ms)]
	for {
		s := br.start.Load()
		if s == ms {
			br.n.Add(n)
			return
		}
		if s > ms {
			return // taken by a later window: cannot happen within one interval
		}
		if br.start.CompareAndSwap(s, ms) {
			br.n.Store(n)
			return
		}
	}
}

// Borrowed returns the passes reserved in buckets that start after now.
func (w *Window) Borrowed(now mono.Time) int64 {
	ms := now.Millis()
	var n int64
	for i := range w.borrowed {
		if s := w.borrowed[i].start.Load(); s > ms {
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
