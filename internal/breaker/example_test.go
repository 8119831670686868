package breaker_test

import (
	"fmt"
	"time"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/internal/breaker"
	"github.com/bulwark-go/bulwark/internal/mono"
)

// The breaker itself, driven by hand on the engine's time scale.
func ExampleBreaker() {
	b := breaker.New(circuitbreaker.Rule{
		Resource: "r", Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.5,
		TimeWindow: 5, MinRequestAmount: 2, StatIntervalMs: 1000,
	}, breaker.Options{})
	b.OnComplete(mono.FromMillis(0), 250*time.Millisecond, false, false) // slow
	b.OnComplete(mono.FromMillis(1), 300*time.Millisecond, false, false) // slow: 2 of 2
	fmt.Println(b.State())
	pass, probe := b.TryPass(mono.FromMillis(5_001), nil)
	fmt.Println(pass, probe, b.State())
	b.OnComplete(mono.FromMillis(5_020), 19*time.Millisecond, false, true) // a fast probe
	fmt.Println(b.State())
	// Output:
	// OPEN
	// true true HALF_OPEN
	// CLOSED
}
