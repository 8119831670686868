package core

import (
	"sync/atomic"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/bulwark-go/bulwark/internal/mono"
)

// minCoarseResolution is the finest resolution WithCoarseClock accepts:
// below it the ticking goroutine would cost more than the clock reads it
// saves.
const minCoarseResolution = 100 * time.Microsecond

// WithCoarseClock makes entries read a clock that one goroutine of the
// engine ticks every resolution, instead of reading the clock themselves
// (twice per entry: at Enter and at Exit). Java Sentinel reads a
// millisecond clock ticked the same way. It is off by default: a
// resolution <= 0 keeps it off, and one below 100 µs is raised to 100 µs.
// The goroutine is owned by the engine and stopped by [Engine.Close]; from
// then on entries read the clock themselves again.
//
// The ticking goroutine reads the engine's [Clock] (WithClock's, or the
// time package) and publishes the reading; everything the engine measures
// then takes its time from the latest reading. So with WithClock too, the
// injected clock is still the source of time, sampled every resolution of
// real time (of a testing/synctest bubble's time, inside one): a change of
// the injected clock reaches entries at the next tick. Waiting (pacing, an
// occupied window) still goes through the Clock's Sleep, or a timer.
//
// What it changes in exactness, with the engine's time trailing the clock
// by less than resolution plus however long the ticking goroutine waits to
// be scheduled (the lag):
//
//   - Counting stays exact in engine time: a QPS limit holds within every
//     window as documented, but window edges (buckets, breaker recovery
//     timeouts, warm-up) move later by up to the lag.
//   - Response times are differences of two readings, so each is off by
//     less than resolution, either way; a call shorter than the resolution
//     may read 0. Response times are counted in whole milliseconds anyway,
//     so a resolution up to 1 ms costs no precision that was there.
//   - A slow-call threshold (a slow-ratio breaker's count, an average-RT
//     breaker's count, a system rule's average RT) within the resolution
//     of a call's true response time may classify the call either way;
//     thresholds below the resolution mean nothing. Keep the resolution
//     well under the smallest such threshold.
//   - Pacing (the rate limiter) and prioritized entries wait the time the
//     rule asks on a real timer, measured from a reading up to one lag old:
//     pacing is never faster than the rule, and may be slower by the lag.
func WithCoarseClock(resolution time.Duration) Option {
	return func(cfg *config) {
		if resolution > 0 {
			cfg.coarse = max(resolution, minCoarseResolution)
		} else {
			cfg.coarse = 0
		}
	}
}

// coarseClock is the engine time one goroutine publishes for entries to
// read.
type coarseClock struct {
	t          atomic.Int64 // the latest reading
	stop, done chan struct{}
}

// startCoarse starts the goroutine that publishes the engine's time every
// resolution.
func (e *Engine) startCoarse(resolution time.Duration) {
	c := &coarseClock{stop: make(chan struct{}), done: make(chan struct{})}
	c.t.Store(int64(e.read()))
	e.coarse.Store(c)
	go everyUntil(c.stop, c.done, resolution, func() { c.t.Store(int64(e.read())) })
}

// stopCoarse stops the coarse clock's goroutine, waits for it, and sends
// readers back to the engine's clock. It runs under e.mu.
func (e *Engine) stopCoarse() {
	c := e.coarse.Swap(nil)
	if c == nil {
		return
	}
	close(c.stop)
	<-c.done
}

// now returns the engine's time: nanoseconds since its creation, from the
// coarse clock while it runs. Enter and Exit call it: the two clocks they
// nearly always read (the coarse one, the runtime's) are read in its body,
// an injected or a bubble's through read, a call more.
func (e *Engine) now() mono.Time {
	if c := e.coarse.Load(); c != nil {
		return mono.Time(c.t.Load())
	}
	if e.runtimeClock {
		return mono.Time(nanotime() - e.runtimeEpoch)
	}
	return e.read()
}

// read reads the engine's clock, whether or not the coarse clock runs.
func (e *Engine) read() mono.Time {
	if e.runtimeClock {
		return mono.Time(nanotime() - e.runtimeEpoch)
	}
	if e.clock == nil {
		return mono.Time(time.Since(e.epoch))
	}
	return mono.Time(e.clock.Now().Sub(e.epoch))
}

// nanotime is the runtime's monotonic clock, the reading time.Since takes
// (the runtime keeps it reachable for packages outside the standard library,
// see go.dev/issue/67401). Read directly, it spares each of an entry's two
// readings time.Since's test for a testing/synctest bubble and its
// conversions, a few percent of Enter+Exit; the engine reads it so only
// where no bubble can be (see [Engine.startClock]).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// startClock takes the engine's epoch. Without WithClock the engine reads
// the runtime's clock directly, unless it is created inside a
// testing/synctest bubble, where time.Since reads the bubble's clock and
// must be kept. Time stands still in a bubble until every goroutine of it
// blocks, so a clock that reads the same twice in a row is a bubble's; a
// clock too coarse to move between two readings reads so too, and costs
// that engine only the direct read.
func (e *Engine) startClock() {
	if e.clock != nil {
		e.epoch = e.clock.Now()
		return
	}
	e.epoch = time.Now()
	if d := time.Since(e.epoch); d > 0 {
		e.runtimeClock, e.runtimeEpoch = true, nanotime()-int64(d)
	}
}
