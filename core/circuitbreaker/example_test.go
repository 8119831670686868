package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
)

// An error-count breaker: more than 2 failed calls in a second open it
// for 10 seconds.
func Example() {
	e := core.NewEngine()
	defer e.Close()
	e.OnBreakerStateChange(func(c circuitbreaker.StateChange) {
		fmt.Printf("%s: %s -> %s (%g errors)\n", c.Rule.Resource, c.From, c.To, c.Value)
	})
	err := e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource:         "inventory",
		Grade:            circuitbreaker.ErrorCount,
		Count:            2,
		TimeWindow:       10,
		MinRequestAmount: 1,
		StatIntervalMs:   1000,
	}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	unavailable := errors.New("inventory unavailable")
	for range 4 {
		err := e.Do(ctx, "inventory", func(context.Context) error { return unavailable })
		fmt.Println(err)
	}
	// Output:
	// inventory unavailable
	// inventory unavailable
	// inventory: CLOSED -> OPEN (3 errors)
	// inventory unavailable
	// core: inventory blocked by degrade rule errorCount 2 timeWindow=10s (breaker OPEN)
}
