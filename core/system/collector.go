package system

// Collector provides the machine metrics system rules read. The engine
// calls it from one goroutine, about once a second, only while a rule with
// a load or CPU threshold is in force; implementations need not be safe
// for concurrent use. An error disables the check that needs the metric
// until a later call succeeds; it never blocks traffic.
//
// Tests inject a Collector that returns chosen values.
type Collector interface {
	// Load1 returns the 1-minute load average.
	Load1() (float64, error)
	// CPUUsage returns the CPU usage since the previous call, a ratio in
	// [0, 1] (the first call may measure since boot or process start).
	CPUUsage() (float64, error)
}
