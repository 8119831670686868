package core_test

import (
	"cmp"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// TestQPSLimitBound checks the documented exactness bound of a QPS rule
// (see the package doc): many goroutines hammer one resource at its
// threshold, bucket after bucket on an injected clock, read at every entry
// or through the coarse clock, and every window of one second admits
//
//   - at most threshold + the counts of the entries that were inside Enter
//     at the same time (each goroutine has at most one), and
//   - at least threshold − (count − 1): an entry is refused only when the
//     passes recorded already leave no room for it.
func TestQPSLimitBound(t *testing.T) {
	// A threshold well above what the engine's stripes may hold unpublished
	// ((stripes−1) × 64 × stripes, stripes = GOMAXPROCS rounded up to a
	// power of two, at most 16), so that checks take the fast path first.
	high := func(procs int) int64 {
		s := 1
		for s < min(procs, 16) {
			s *= 2
		}
		return max(1000, 4*int64(s-1)*64*int64(s))
	}
	procs := runtime.GOMAXPROCS(0)
	cases := []struct {
		name      string
		procs     int // GOMAXPROCS while the engine is made and run; 0: as is
		threshold int64
		count     int
		opts      []core.EntryOption
		buckets   int // of 500 ms; 24 when 0
	}{
		{name: "plain", threshold: high(procs), count: 1},
		{name: "inbound", threshold: high(procs), count: 1, opts: []core.EntryOption{core.Inbound()}},
		{name: "count3", threshold: high(procs), count: 3, opts: []core.EntryOption{core.WithCount(3)}},
		{name: "low", threshold: 20, count: 1},
		// More Ps than cores: more stripes, more goroutines descheduled
		// inside Enter.
		{name: "8procs", procs: 8, threshold: high(8), count: 1, buckets: 12},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.procs > 0 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			}
			eachClock(t, func(t *testing.T, clk *engineClock) {
				const goroutines = 64
				buckets := cmp.Or(tc.buckets, 24)
				e := clk.engine(t)
				require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "hot", Grade: flow.GradeQPS, Count: float64(tc.threshold)}}))

				admitted := make([]int64, buckets)   // entries admitted per bucket (× count)
				concurrent := make([]int64, buckets) // most goroutines inside Enter at once
				full := make([]bool, buckets)        // entries were refused in the bucket
				for b := range buckets {
					// Every third bucket takes only part of the threshold, so
					// that the next window starts part full.
					budget := int64(math.MaxInt64)
					if b%3 == 0 {
						budget = tc.threshold / 3
					}
					var passed, inside, most, refusals atomic.Int64
					var wg sync.WaitGroup
					for range goroutines {
						wg.Go(func() {
							// Keep entering until refused three times: the
							// window is full for everyone by then.
							for refused := 0; refused < 3 && passed.Load() < budget; {
								n := inside.Add(1)
								for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
								}
								en, err := e.Enter(bg, "hot", tc.opts...)
								inside.Add(-1)
								if err != nil {
									assert.ErrorIs(t, err, core.ErrBlocked)
									refused++
									refusals.Add(1)
									continue
								}
								passed.Add(int64(tc.count))
								en.Exit()
							}
						})
					}
					wg.Wait()
					admitted[b], concurrent[b], full[b] = passed.Load(), most.Load(), refusals.Load() > 0
					clk.Advance(500 * time.Millisecond)
				}

				// A window at bucket b covers buckets b-1 and b.
				worst := int64(0)
				for b := range buckets {
					window := admitted[b]
					inFlight := concurrent[b]
					if b > 0 {
						window += admitted[b-1]
						inFlight = max(inFlight, concurrent[b-1])
					}
					over := window - tc.threshold
					worst = max(worst, over)
					assert.LessOrEqual(t, over, inFlight*int64(tc.count),
						"bucket %d: %d admitted in a window, threshold %d, at most %d goroutines inside Enter at once", b, window, tc.threshold, inFlight)
					assert.LessOrEqual(t, over, int64(goroutines*tc.count), "bucket %d", b)
					if full[b] {
						assert.GreaterOrEqual(t, window, tc.threshold-int64(tc.count-1), "bucket %d: a window that refused entries is full", b)
					}
				}
				t.Logf("admitted per bucket %v; worst excess over %d in a window: %d", admitted, tc.threshold, worst)
			})
		})
	}
}
