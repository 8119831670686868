package core_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
)

// TestZeroOptionsKeepDefaults: an option given its zero value is the
// option left out. WithMaxRT(0) used to cap every response time at zero,
// so no call was ever slow.
func TestZeroOptionsKeepDefaults(t *testing.T) {
	for name, opts := range map[string][]core.Option{
		"no options": nil,
		"zero values": {core.WithClock(nil), core.WithLogger(nil), core.WithMaxRT(0), core.WithMaxResources(0),
			core.WithColdFactor(0), core.WithOccupyTimeout(0), core.WithSystemCollector(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			clk := newStepClock()
			e := core.NewEngine(append(slices.Clone(opts), core.WithClock(clk))...)
			defer e.Close()
			require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{Resource: "r", Count: 100, TimeWindow: 10, MinRequestAmount: 1}}))
			en, err := e.Enter(bg, "r")
			require.NoError(t, err)
			clk.Advance(200 * time.Millisecond)
			en.Exit()
			_, err = e.Enter(bg, "r")
			assert.ErrorIs(t, err, core.ErrBlocked, "a 200 ms call is slower than 100 ms: the breaker opened")
		})
	}
}
