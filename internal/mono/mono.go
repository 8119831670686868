// Package mono is the one representation of time inside the engine's
// mechanisms: a [Time] is a reading of the engine's monotonic clock, in
// nanoseconds since the engine was created, and lengths of time are
// [time.Duration]s. Statistics windows, flow controllers, circuit
// breakers, system checks and hot-parameter limiters all take their "now"
// as a Time, so passing a count of milliseconds where an instant is
// expected (or a duration where an instant is) no longer compiles. An
// untyped constant still converts implicitly, so tests write instants with
// [FromMillis] rather than as bare numbers.
//
// A Time is not a [time.Time] on purpose: it is one machine word, so it
// costs no allocation, is copied and compared as an integer and can be kept
// in a [sync/atomic.Int64]; and it is already relative to the engine's
// epoch, taken from the monotonic reading of the engine's clock, so a wall
// clock set back never moves it. The engine turns a Time into a time.Time
// only where users see it.
//
// Mechanisms whose buckets are whole milliseconds convert once, with
// [Time.Millis], where the Time enters them.
package mono

import "time"

// Time is an instant on the engine's clock: nanoseconds since the engine's
// epoch.
type Time int64

// FromMillis returns the instant ms milliseconds after the epoch: the start
// of a millisecond bucket, for mechanisms that count in milliseconds.
func FromMillis(ms int64) Time { return Time(ms * int64(time.Millisecond)) }

// Millis returns t in whole milliseconds since the epoch, truncated toward
// zero.
func (t Time) Millis() int64 { return int64(t) / int64(time.Millisecond) }

// Add returns t + d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t − u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }
