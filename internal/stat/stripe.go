package stat

import _ "unsafe" // for go:linkname

// procPin and procUnpin are the runtime's: procPin returns the id of the P
// (the scheduler's processor slot, 0 ≤ id < GOMAXPROCS) the goroutine runs
// on and keeps it there until procUnpin. sync.Pool shards by the same id.
// The runtime keeps both symbols reachable for packages outside the
// standard library (see go.dev/issue/67401).
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// Proc is the scheduler's processor slot (P) a goroutine ran on when it
// called [Here]: writers pass it to choose their stripe, so that an entry
// that writes several windows, or checks and then counts, asks the
// scheduler once. Goroutines running at the same moment run on different
// Ps, so with at least GOMAXPROCS stripes they write different cache lines;
// a goroutine that has migrated since it called Here only shares a line
// with another for its writes (every write is atomic), and any Proc is a
// correct one.
type Proc int

// Here returns the caller's Proc.
func Here() Proc {
	id := procPin()
	procUnpin()
	return Proc(id)
}

// stripeOf returns p's stripe among stripes (a power of two).
func stripeOf(p Proc, stripes int) int { return int(p) & (stripes - 1) }
