package stat

import (
	"math"

	"github.com/bulwark-go/bulwark/internal/mono"
)

// Bucket is what one or more buckets of a window counted, summed over
// their stripes: what a reader copies out to keep (history, totals) without
// holding the window.
type Bucket struct {
	Pass, Block, Success, Exception, RT int64
	// MinRT is the smallest response time recorded, math.MaxInt64 when
	// nothing completed.
	MinRT int64
}

// Add adds o's counts to b (and keeps the smaller MinRT).
func (b *Bucket) Add(o Bucket) {
	b.Pass += o.Pass
	b.Block += o.Block
	b.Success += o.Success
	b.Exception += o.Exception
	b.RT += o.RT
	b.MinRT = min(b.MinRT, o.MinRT)
}

// read sums every counter of bucket i over its stripes.
func (w *Window) read(i int) Bucket {
	b := Bucket{Pass: w.bucketSum(i, Pass), Success: w.bucketSum(i, Success), MinRT: math.MaxInt64}
	lines := w.bucketLines(i)
	for k := range lines {
		l := &lines[k]
		b.Block += l[Block].Load()
		b.Exception += l[Exception].Load()
		b.RT += l[RT].Load()
		b.MinRT = min(b.MinRT, l[slotMinRT].Load())
	}
	return b
}

// BucketAt returns the counters of the bucket that starts at start, and
// false when that bucket is not in the ring (never written, or reused since
// for a later start). It never writes: a reader does not disturb writers.
// A bucket being reset while it is read is reported as not in the ring.
func (w *Window) BucketAt(start mono.Time) (Bucket, bool) {
	ms := start.Millis()
	i := w.index(ms)
	if w.starts[i].Load() != ms {
		return Bucket{}, false
	}
	b := w.read(i)
	if w.starts[i].Load() != ms {
		return Bucket{}, false
	}
	return b, true
}

// Totals returns every counter summed over the buckets within the interval
// ending at now: Sum of each event, and MinRT, read in one pass. Unlike
// Sum it never writes, so readers do not reset buckets.
func (w *Window) Totals(now mono.Time) Bucket {
	t := Bucket{MinRT: math.MaxInt64}
	ms := now.Millis()
	for i := range w.starts {
		if w.valid(w.starts[i].Load(), ms) {
			t.Add(w.read(i))
		}
	}
	return t
}

// Tally counts events of up to five kinds, numbered 1 to 5, over a second
// window (2 × 500 ms), striped as a node's: the engine counts blocked
// entries by the kind of rule that blocked them.
type Tally struct{ w *Window }

// TallyKinds is one more than the largest kind a Tally counts.
const TallyKinds = 6

// NewTally returns a tally whose buckets are split into stripes cache lines.
func NewTally(stripes int) *Tally {
	return &Tally{w: NewWindow(SecondSampleCount, SecondIntervalMs, stripes)}
}

// Add records n events of kind k (1 to 5) at now; other kinds are
// ignored.
func (t *Tally) Add(now mono.Time, k int, n int64) {
	if k > 0 && k < TallyKinds {
		// Kind k is slot k of the caller's line: the window's events do
		// not apply (a striped window keeps its passes and completions
		// elsewhere).
		t.w.line(t.w.bucket(now.Millis()), Here())[k].Add(n)
	}
}

// Counts is a tally's count per kind; index 0 is unused.
type Counts [TallyKinds]int64

// Add adds o's counts to c.
func (c *Counts) Add(o Counts) {
	for k := range o {
		c[k] += o[k]
	}
}

// BucketMs returns the length of a bucket in ms.
func (t *Tally) BucketMs() int64 { return t.w.bucketMs }

// BucketAt returns the counts of the bucket that starts at start, as
// [Window.BucketAt] does.
func (t *Tally) BucketAt(start mono.Time) (Counts, bool) {
	ms := start.Millis()
	i := t.w.index(ms)
	if t.w.starts[i].Load() != ms {
		return Counts{}, false
	}
	c := t.counts(i)
	if t.w.starts[i].Load() != ms {
		return Counts{}, false
	}
	return c, true
}

// Totals returns the counts over the second ending at now.
func (t *Tally) Totals(now mono.Time) Counts {
	var c Counts
	ms := now.Millis()
	for i := range t.w.starts {
		if t.w.valid(t.w.starts[i].Load(), ms) {
			c.Add(t.counts(i))
		}
	}
	return c
}

func (t *Tally) counts(i int) Counts {
	var c Counts
	lines := t.w.bucketLines(i)
	for j := range lines {
		l := &lines[j]
		for k := 1; k < TallyKinds; k++ {
			c[k] += l[k].Load()
		}
	}
	return c
}
