package core_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

// TestZeroOptionsKeepDefaults: an option given its zero value is the
// option left out. WithMaxRT(0) used to cap every recorded response time
// at zero, so no average RT ever exceeded a threshold.
func TestZeroOptionsKeepDefaults(t *testing.T) {
	for name, opts := range map[string][]core.Option{
		"no options": nil,
		"zero values": {core.WithClock(nil), core.WithLogger(nil), core.WithMaxRT(0), core.WithMaxResources(0),
			core.WithColdFactor(0), core.WithOccupyTimeout(0), core.WithSystemCollector(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			clk := testclock.New()
			e := core.NewEngine(append(slices.Clone(opts), core.WithClock(clk))...)
			defer e.Close()
			require.NoError(t, e.System().Load([]system.Rule{{AvgRT: 100}}))
			en, err := e.Enter(bg, "r", core.Inbound())
			require.NoError(t, err)
			clk.Advance(200 * time.Millisecond)
			en.Exit()
			_, err = e.Enter(bg, "r", core.Inbound())
			assert.ErrorIs(t, err, core.ErrBlocked, "the average RT, 200 ms, is above 100 ms")
		})
	}
}
