package stat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/mono"
)

// ms is the instant n milliseconds after the epoch.
func ms(n int64) mono.Time { return mono.FromMillis(n) }

func TestWindowSlides(t *testing.T) {
	w := NewWindow(2, 1000, 1)
	w.Add(ms(100), Pass, 3) // bucket [0,500)
	w.Add(ms(600), Pass, 4) // bucket [500,1000)
	assert.Equal(t, int64(7), w.Sum(ms(999), Pass))
	// At 1200 the bucket [0,500) is outside the interval; [500,1000) counts.
	assert.Equal(t, int64(4), w.Sum(ms(1200), Pass))
	// At 1600 the ring reuses the slot of [500,1000) for [1500,2000).
	assert.Equal(t, int64(0), w.Sum(ms(1600), Pass))
	w.Add(ms(1600), Pass, 2)
	assert.Equal(t, int64(2), w.Sum(ms(1700), Pass))
	assert.Equal(t, int64(0), w.Sum(ms(5000), Pass), "everything expires")
}

func TestWindowBucketLookup(t *testing.T) {
	w := NewWindow(4, 1000, 1)
	for t := int64(0); t < 1000; t += 250 {
		w.Add(ms(t+10), Block, t/250+1)
	}
	assert.Equal(t, int64(1+2+3+4), w.Sum(ms(999), Block))
	assert.Equal(t, int64(3), w.BucketSum(ms(500), Block))
	assert.Equal(t, int64(3), w.Previous(ms(760), Block))
	assert.Equal(t, int64(4), w.MaxBucket(ms(999), Block))
	assert.Equal(t, int64(0), w.BucketSum(ms(1500), Block), "a bucket not in the ring reads 0")
}

func TestWindowMinRT(t *testing.T) {
	w := NewWindow(2, 1000, 4)
	assert.Equal(t, time.Duration(-1), w.MinRT(ms(0), -1))
	for _, rt := range []int64{30, 7, 12} {
		w.complete(100, 1, rt, false, false, 0)
	}
	assert.Equal(t, 7*time.Millisecond, w.MinRT(ms(200), -1))
	assert.Equal(t, int64(49), w.Sum(ms(200), RT))
	assert.Equal(t, time.Duration(-1), w.MinRT(ms(3000), -1), "expired")
}

func TestWindowStripesSumAndGauge(t *testing.T) {
	w := NewWindow(2, 1000, 3)
	require.Equal(t, 4, w.Stripes(), "rounded up to a power of two")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				w.enter(int64(i%1000), 1, Here())
				w.complete(int64(i%1000), 1, 1, i%2 == 0, true, Here())
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(8000), w.Sum(ms(999), Pass))
	assert.Equal(t, int64(8000), w.Sum(ms(999), Success))
	assert.Equal(t, int64(4000), w.Sum(ms(999), Exception))
	assert.Equal(t, int64(0), w.gauge(), "every add has its completion")
}

func TestWindowGaugeSurvivesReset(t *testing.T) {
	w := NewWindow(2, 1000, 1)
	w.enter(0, 1, 0)
	w.enter(10_000, 1, 0) // resets the slot of bucket 0
	assert.Equal(t, int64(2), w.gauge())
	w.complete(20_000, 1, 5, false, true, 0)
	assert.Equal(t, int64(1), w.gauge())
}

func TestWindowBorrow(t *testing.T) {
	w := NewWindow(2, 1000, 1)
	w.EnableBorrow()
	w.Add(ms(100), Pass, 10)
	w.Borrow(ms(1000), 2)
	w.Borrow(ms(1000), 1)
	assert.Equal(t, int64(3), w.Borrowed(ms(600)))
	assert.Equal(t, int64(10), w.Sum(ms(600), Pass))
	// When [1000,1500) begins it starts with the borrowed passes.
	assert.Equal(t, int64(3), w.Sum(ms(1100), Pass))
	assert.Equal(t, int64(0), w.Borrowed(ms(1100)))
}

func TestNewWindowRejectsBadShape(t *testing.T) {
	assert.Panics(t, func() { NewWindow(3, 1000, 1) })
	assert.Panics(t, func() { NewWindow(0, 1000, 1) })
}

func TestNodeRates(t *testing.T) {
	n := NewNode(2)
	for i := 0; i < 5; i++ {
		n.AddPass(ms(100), 2, 0)
	}
	n.AddBlock(ms(100), 3)
	assert.Equal(t, int64(5), n.Concurrency())
	for i := 0; i < 5; i++ {
		n.AddCompletion(ms(300), 2, time.Duration(10*(i+1))*time.Millisecond+time.Millisecond/2, i == 0, 0)
	}
	assert.Equal(t, int64(0), n.Concurrency())
	assert.InDelta(t, 10.0, n.PassQPS(ms(400)), 1e-9)
	assert.InDelta(t, 3.0, n.BlockQPS(ms(400)), 1e-9)
	assert.InDelta(t, 10.0, n.SuccessQPS(ms(400)), 1e-9)
	assert.InDelta(t, 2.0, n.ExceptionQPS(ms(400)), 1e-9)
	assert.InDelta(t, 15.0, n.AvgRT(ms(400)), 1e-9, "RT sum 150 over 10 completions, each in whole ms")
	assert.Equal(t, 10*time.Millisecond, n.MinRT(ms(400), -1))
	assert.InDelta(t, 20.0, n.MaxSuccessQPS(ms(400)), 1e-9, "10 in one 500 ms bucket")
}

func TestNodeMinuteIsLazy(t *testing.T) {
	n := NewNode(1)
	n.AddPass(ms(500), 1, 0)
	assert.Nil(t, n.minute.Load())
	m := n.Minute()
	require.NotNil(t, m)
	assert.Same(t, m, n.Minute())
	n.AddPass(ms(1500), 4, 0)
	assert.InDelta(t, 4.0, n.PreviousPassQPS(ms(2500)), 1e-9, "passes of [1000,2000) read at 2500")
	assert.InDelta(t, 0.0, n.PreviousPassQPS(ms(1500)), 1e-9, "writes before the minute window existed are not in it")
}

// passFitsExact is what PassFits must answer when nothing runs
// concurrently: the exact sum.
func passFitsExact(w *Window, now mono.Time, acquire, limit int64) bool {
	return w.Sum(now, Pass)+acquire <= limit
}

func TestPassFitsAgreesWithTheSum(t *testing.T) {
	for _, stripes := range []int{1, 2, 4, 16} {
		w := NewWindow(2, 1000, stripes)
		var slack int64
		if w.split != nil {
			slack = w.split.slack
		}
		rng := rand.New(rand.NewPCG(1, uint64(stripes)))
		for step := 0; step < 3000; step++ {
			now := int64(step) // three seconds: buckets begin and expire
			i := w.bucket(now)
			// any stripe, as if written from any P
			w.addPass(i, rng.IntN(w.Stripes()), int64(1+rng.IntN(3)))
			sum := w.Sum(ms(now), Pass)
			for _, limit := range []int64{0, sum - 1, sum, sum + 1, sum + 2, sum + slack, sum + slack + 40, 1 << 40} {
				for _, acquire := range []int64{1, 2} {
					for p := range Proc(w.Stripes()) { // as if checked from any P
						require.Equal(t, passFitsExact(w, ms(now), acquire, limit), w.PassFits(ms(now), acquire, limit, p),
							"stripes %d, from %d, at %d ms: sum %d + %d <= %d", stripes, p, now, sum, acquire, limit)
					}
				}
			}
		}
	}
}

// checkPublished asserts the invariants a check relies on, at rest: every
// stripe holds fewer than a quantum unpublished, and the bucket's published
// total is the sum of what the stripes published.
func checkPublished(t *testing.T, w *Window, i int) {
	t.Helper()
	var sum int64
	for s := 0; s < w.Stripes(); s++ {
		k := s*w.split.passStride + 2*i
		c, p := w.split.passes[k].Load(), w.split.passes[k+1].Load()
		assert.Less(t, c-p, w.split.quantum, "stripe %d", s)
		assert.LessOrEqual(t, p, c, "stripe %d", s)
		sum += p
	}
	assert.Equal(t, sum, w.split.published[i].Load())
}

func TestPassesArePublishedInQuanta(t *testing.T) {
	w := NewWindow(2, 1000, 4)
	require.Equal(t, int64(256), w.split.quantum)
	var wg sync.WaitGroup
	var want atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000; i++ {
				w.Add(ms(100), Pass, 1+int64(i%3))
				want.Add(1 + int64(i%3))
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, want.Load(), w.Sum(ms(100), Pass))
	checkPublished(t, w, 0)

	// When the next bucket begins, the previous one is published in full:
	// checks read it as one number.
	w.Add(ms(600), Block, 1)
	assert.Equal(t, w.Sum(ms(100), Pass), w.split.published[0].Load())
	assert.Equal(t, int64(0), w.split.published[1].Load())
	checkPublished(t, w, 0)
}

func TestPassFitsUnderConcurrentWriters(t *testing.T) {
	// Entries check, then record, as the engine does. Whatever the
	// interleaving, no more than one entry per goroutine passes beyond the
	// limit, and at least the limit passes (every goroutine tries until it
	// is refused).
	const goroutines, limit = 32, 3000
	for _, stripes := range []int{1, 2, 8} {
		w := NewWindow(2, 1000, stripes)
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for w.PassFits(ms(100), 1, limit, Here()) {
					w.Add(ms(100), Pass, 1)
				}
			}()
		}
		wg.Wait()
		got := w.Sum(ms(100), Pass)
		assert.GreaterOrEqual(t, got, int64(limit), "stripes %d", stripes)
		assert.LessOrEqual(t, got, int64(limit+goroutines), "stripes %d", stripes)
	}
}

func TestSplitWindowBorrow(t *testing.T) {
	w := NewWindow(2, 1000, 4)
	w.EnableBorrow()
	w.Add(ms(100), Pass, 10)
	w.Borrow(ms(1000), 3)
	assert.Equal(t, int64(10), w.Sum(ms(600), Pass))
	assert.Equal(t, int64(3), w.Sum(ms(1100), Pass), "the bucket starts with the borrowed passes")
	assert.True(t, w.PassFits(ms(1100), 7, 10, 0))
	assert.False(t, w.PassFits(ms(1100), 8, 10, 0))
	checkPublished(t, w, w.index(1000))
}

func TestNodePassFits(t *testing.T) {
	n := NewNode(4)
	n.AddPass(ms(100), 5, 0)
	assert.True(t, n.PassFits(ms(200), 5, Limit(10), 0))
	assert.True(t, n.PassFits(ms(200), 5, Limit(10.9), 0), "a fraction of an entry admits nothing more")
	assert.False(t, n.PassFits(ms(200), 6, Limit(10.9), 0))
	assert.True(t, n.PassFits(ms(200), 1, Limit(math.Inf(1)), 0))
	assert.False(t, n.PassFits(ms(200), 1, Limit(0), 0))
	assert.True(t, n.PassFits(ms(1200), 10, Limit(10), 0), "expired")
}

// The concurrency counts entries, not passes: an entry of three passes is
// one, and one whose pass was counted ahead (count 0 now, borrowed passes
// when its bucket begins) is one before and after its bucket takes them;
// a borrow whose entry never came (its wait was cancelled) is none.
func TestWindowGaugeCountsEntries(t *testing.T) {
	for _, stripes := range []int{1, 4} {
		t.Run(fmt.Sprintf("stripes=%d", stripes), func(t *testing.T) {
			w := NewWindow(2, 1000, stripes)
			w.EnableBorrow()
			w.enter(100, 3, 1)
			assert.Equal(t, int64(1), w.gauge(), "one entry of three passes")
			assert.Equal(t, int64(3), w.Sum(ms(100), Pass))

			w.Borrow(ms(1000), 2) // two prioritized entries of one pass
			w.Borrow(ms(1000), 1) // and one whose wait is cancelled
			w.enter(600, 0, 2)
			w.enter(600, 0, 3)
			assert.Equal(t, int64(3), w.gauge())
			w.enter(1100, 1, 0) // [1000,1500) begins with the borrowed passes
			assert.Equal(t, int64(4), w.Sum(ms(1100), Pass), "three borrowed, one new")
			assert.Equal(t, int64(4), w.gauge(), "the borrowed passes' entries are counted once")

			w.complete(1200, 1, 0, false, true, 0)
			w.complete(1200, 1, 0, false, true, 3)
			w.complete(1700, 1, 0, false, true, 1)
			assert.Equal(t, int64(1), w.gauge())
			w.complete(9000, 3, 0, false, true, 2) // long after: resets between
			assert.Equal(t, int64(0), w.gauge())
			w.enter(20_000, 1, 0)
			w.enter(30_000, 1, 0)
			assert.Equal(t, int64(2), w.gauge(), "the entries of cleared rounds are carried")
		})
	}
}

// Entries held open stay counted while other goroutines enter and
// complete across hundreds of bucket resets, for every reading taken
// meanwhile, and the concurrency is back to the held entries after.
func TestWindowGaugeUnderResets(t *testing.T) {
	for _, stripes := range []int{1, 4} {
		t.Run(fmt.Sprintf("stripes=%d", stripes), func(t *testing.T) {
			w := NewWindow(2, 1000, stripes)
			w.EnableBorrow()
			const held, workers, rounds = 3, 4, 2000
			var clock atomic.Int64 // ms; advances a bucket every 20 rounds
			for range held {
				w.enter(0, 1, Here())
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			var readings, low atomic.Int64
			low.Store(math.MaxInt64)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					g := w.gauge()
					readings.Add(1)
					for l := low.Load(); g < l && !low.CompareAndSwap(l, g); l = low.Load() {
					}
				}
			}()
			var workersWG sync.WaitGroup
			for g := range workers {
				workersWG.Add(1)
				go func() {
					defer workersWG.Done()
					for i := range rounds {
						if g == 0 && i%20 == 0 {
							clock.Add(500)
						}
						if i%5 == 0 {
							// A prioritized entry: its pass is counted
							// ahead, in the next bucket, which may begin
							// while it runs or never.
							now := clock.Load()
							w.Borrow(ms(now-now%500+500), 1)
							w.enter(now, 0, Here())
							w.complete(clock.Load(), 1, 0, false, true, Here())
							continue
						}
						count := int64(1 + i%3) // some entries count more
						w.enter(clock.Load(), count, Here())
						w.complete(clock.Load(), count, 0, false, true, Here())
					}
				}()
			}
			workersWG.Wait()
			close(stop)
			wg.Wait()
			require.Positive(t, readings.Load())
			assert.GreaterOrEqual(t, low.Load(), int64(held), "a held entry was read as done")
			assert.Equal(t, int64(held), w.gauge())
			assert.Greater(t, w.resets.Load(), int64(100), "the rounds crossed many resets")
		})
	}
}
