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

// procStripe returns the stripe of the calling goroutine's P among
// stripes (a power of two). Goroutines running at the same moment run on
// different Ps, so with at least GOMAXPROCS stripes they write different
// cache lines; a goroutine that migrates between taking the id and writing
// only shares a line for that one write (every write is atomic).
func procStripe(stripes int) int {
	if stripes == 1 {
		return 0
	}
	id := procPin()
	procUnpin()
	return id & (stripes - 1)
}
