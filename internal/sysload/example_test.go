package sysload_test

import (
	"fmt"

	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/sysload"
)

// Several rules combine by the minimum of each threshold.
func ExampleCombine() {
	a := system.Rule{HighestSystemLoad: 8, HighestCPUUsage: system.Unset, QPS: 1000, AvgRT: system.Unset, MaxThread: system.Unset}
	b := system.Rule{HighestSystemLoad: system.Unset, HighestCPUUsage: 0.9, QPS: 300, AvgRT: system.Unset, MaxThread: system.Unset}
	l := sysload.Combine([]system.Rule{a, b})
	fmt.Println(l.HighestSystemLoad, l.HighestCPUUsage, l.QPS, l.MaxThread)
	// Output: 8 0.9 300 -1
}
