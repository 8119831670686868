package core_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// TestStatsCountFromNewEngine: the engine counts from when it is made, not
// from the first read. Ten seconds of traffic (passed, blocked, failed)
// run before anything reads the statistics; the first Stats then has all
// of it in the totals, and History and the minute its last 60 s.
func TestStatsCountFromNewEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		require.NoError(t, e.Flow().Load([]flow.Rule{qps("r", 8)}))
		var passed, blocked, failed int64
		start := time.Now()
		for i := range 10 {
			for j := range 10 {
				var err error
				if j == 0 {
					err = errors.New("boom")
				}
				if call(e, "r", time.Millisecond, err) {
					passed++
					if err != nil {
						failed++
					}
				} else {
					blocked++
				}
			}
			call(e, "quiet", 0, nil, core.Inbound())
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second)))
		}
		require.Equal(t, int64(80), passed)
		time.Sleep(2 * time.Second) // every entry is in a whole second

		st := e.Stats() // the first read
		r := resourceStats(t, st, "r")
		assert.Equal(t, passed, r.Total.Passed)
		assert.Equal(t, blocked, r.Total.Blocked)
		assert.Equal(t, blocked, r.Total.BlockedBy[core.BlockFlow])
		assert.Equal(t, passed, r.Total.Succeeded)
		assert.Equal(t, failed, r.Total.Failed)
		assert.Equal(t, passed*int64(time.Millisecond), int64(r.Total.RT))
		assert.Equal(t, r.Total.Passed, r.Minute.Passed, "the minute has the ten seconds too")
		assert.Equal(t, int64(10), resourceStats(t, st, "quiet").Total.Passed)
		assert.Equal(t, int64(10), st.System.Inbound.Total.Passed)

		var sum int64
		for _, f := range e.History("r") {
			sum += f.Passed
		}
		assert.Equal(t, passed, sum)
	})
}

// TestCloseStopsTheHarvest: the goroutine NewEngine starts is stopped, and
// waited for, by Close (and a second Close is harmless).
func TestCloseStopsTheHarvest(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e := core.NewEngine()
	require.True(t, call(e, "r", 0, nil))
	require.NoError(t, e.Close())
	require.NoError(t, e.Close())
	assert.Equal(t, int64(1), resourceStats(t, e.Stats(), "r").Second.Passed, "reads still work")
}
