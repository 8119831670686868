package breaker_test

import (
	"fmt"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/internal/breaker"
)

// The breaker itself, driven by hand: time is in milliseconds.
func ExampleBreaker() {
	b := breaker.New(circuitbreaker.Rule{
		Resource: "r", Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.5,
		TimeWindow: 5, MinRequestAmount: 2, StatIntervalMs: 1000,
	}, breaker.Options{})
	b.OnComplete(0, 250, false, false) // slow
	b.OnComplete(1, 300, false, false) // slow: 2 of 2
	fmt.Println(b.State())
	pass, probe := b.TryPass(5_001, nil)
	fmt.Println(pass, probe, b.State())
	b.OnComplete(5_020, 19, false, true) // a fast probe
	fmt.Println(b.State())
	// Output:
	// OPEN
	// true true HALF_OPEN
	// CLOSED
}
