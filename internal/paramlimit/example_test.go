package paramlimit_test

import (
	"fmt"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/internal/paramlimit"
)

// A limiter on its own: time is in nanoseconds.
func ExampleLimiter() {
	l := paramlimit.NewLimiter(hotspot.Rule{Grade: flow.GradeQPS, ParamIdx: -1, Count: 1, BurstCount: 1, DurationInSec: 1})
	for range 3 {
		fmt.Println(l.Check([]any{"ctx", "alice"}, 0, 1).Blocked)
	}
	// Output:
	// false
	// false
	// true
}
