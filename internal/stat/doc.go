// Package stat holds bulwark's sliding-window statistics: a ring of time
// buckets (Sentinel's LeapArray) and the nodes built on it.
//
// A [Window] splits an interval into sampleCount buckets of equal length.
// A write finds its bucket from the timestamp; a bucket left over from an
// older round of the ring is reset and reused by whichever writer gets there
// first (a compare-and-swap on the bucket's start, never a global lock).
// Reads sum the buckets whose start lies within the interval, so a read at
// time t covers (t-interval, t] rounded to whole buckets, exactly as
// Sentinel's LeapArray does.
//
// A [Node] is the statistics of one resource (Sentinel's ClusterNode), of a
// (resource, origin) pair, of a (context, resource) pair, or the engine-wide
// inbound total: a second window (2 × 500 ms by default), the current
// concurrency, and a minute window (60 × 1 s) that is created on first use
// (see [Node.Minute]) so that a resource nobody looks at by the minute costs
// two buckets, not sixty.
//
// Buckets are striped per processor (the scheduler's P), one cache line
// per stripe, so cores entering one hot resource write lines of their own;
// a striped window keeps its passes apart from the other counters and
// publishes them in quanta, so that a limit check ([Window.PassFits],
// [Node.PassFits]) reads its own stripe and one shared total while the
// window is far from the limit (see [Window] for how, and for the bound).
// Writers name their P with a [Proc] taken once by [Here], so that an
// entry that checks and counts asks the scheduler once.
//
// Time is always passed in, as a [mono.Time] on the engine's clock, and
// response times as [time.Duration]s: this package never reads a clock.
// Buckets are whole milliseconds, so each method converts the time once
// where it enters and counts in milliseconds from there.
package stat
