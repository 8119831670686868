//go:build !unix

package core_test

import "time"

// cpuTime is not measured on this platform.
func cpuTime() time.Duration { return 0 }
