package bulwarkprom_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/metrics/bulwarkprom"
)

// TestCountersCountFromTheEngine: the counters count from the engine's
// making, as Prometheus counters count from the process's start, not from
// the collector's making or the first scrape: five seconds of traffic
// before the collector exists are all in its first scrape.
func TestCountersCountFromTheEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 4}}))
		start := time.Now()
		for i := range 5 {
			for range 6 { // 4 pass, 2 blocked
				call(e, "GET /orders", 0, nil)
			}
			call(e, "GET /items", time.Millisecond, errors.New("down"))
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second)))
		}
		time.Sleep(time.Second)

		reg := prometheus.NewPedanticRegistry()
		require.NoError(t, reg.Register(bulwarkprom.NewCollector(e)))
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_passed_total Entries admitted.
# TYPE bulwark_passed_total counter
bulwark_passed_total{resource="GET /items"} 5
bulwark_passed_total{resource="GET /orders"} 20
# HELP bulwark_blocked_total Entries blocked, by kind of rule.
# TYPE bulwark_blocked_total counter
bulwark_blocked_total{kind="flow",resource="GET /orders"} 10
# HELP bulwark_errors_total Entries completed with an error.
# TYPE bulwark_errors_total counter
bulwark_errors_total{resource="GET /items"} 5
bulwark_errors_total{resource="GET /orders"} 0
`), "bulwark_passed_total", "bulwark_blocked_total", "bulwark_errors_total"))
	})
}
