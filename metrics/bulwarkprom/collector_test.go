package bulwarkprom_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/metrics/bulwarkprom"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

func call(e *core.Engine, resource string, rt time.Duration, err error, opts ...core.EntryOption) {
	en, berr := e.Enter(bg, resource, opts...)
	if berr != nil {
		return
	}
	time.Sleep(rt)
	en.SetError(err)
	en.Exit()
}

func TestCollectorExportsTheEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		reg := prometheus.NewPedanticRegistry()
		c := bulwarkprom.NewCollector(e)
		require.NoError(t, reg.Register(c))

		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 3}}))
		require.Error(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: -3}}))
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{Resource: "db", Grade: circuitbreaker.ErrorCount,
			Count: 1, TimeWindow: 10, MinRequestAmount: 1, StatIntervalMs: 1000}}))
		n, err := testutil.GatherAndCount(reg)
		require.NoError(t, err)
		assert.Positive(t, n)

		for range 5 {
			call(e, "GET /orders", 20*time.Millisecond, nil, core.Inbound())
		}
		call(e, "db", 10*time.Millisecond, errors.New("down"))
		call(e, "db", 30*time.Millisecond, errors.New("down"))
		call(e, "db", 0, nil) // blocked: the breaker is open
		in, err := e.Enter(bg, "slow")
		require.NoError(t, err)
		defer in.Exit()
		time.Sleep(time.Second) // the counts leave the current bucket

		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_passed_total Entries admitted.
# TYPE bulwark_passed_total counter
bulwark_passed_total{resource="GET /orders"} 3
bulwark_passed_total{resource="db"} 2
bulwark_passed_total{resource="slow"} 1
# HELP bulwark_blocked_total Entries blocked, by kind of rule.
# TYPE bulwark_blocked_total counter
bulwark_blocked_total{kind="degrade",resource="db"} 1
bulwark_blocked_total{kind="flow",resource="GET /orders"} 2
# HELP bulwark_errors_total Entries completed with an error.
# TYPE bulwark_errors_total counter
bulwark_errors_total{resource="GET /orders"} 0
bulwark_errors_total{resource="db"} 2
bulwark_errors_total{resource="slow"} 0
# HELP bulwark_response_time_seconds Response times of completed entries (whole ms, capped by the engine's max RT).
# TYPE bulwark_response_time_seconds summary
bulwark_response_time_seconds_sum{resource="GET /orders"} 0.06
bulwark_response_time_seconds_count{resource="GET /orders"} 3
bulwark_response_time_seconds_sum{resource="db"} 0.04
bulwark_response_time_seconds_count{resource="db"} 2
bulwark_response_time_seconds_sum{resource="slow"} 0
bulwark_response_time_seconds_count{resource="slow"} 0
# HELP bulwark_concurrency Entries in flight.
# TYPE bulwark_concurrency gauge
bulwark_concurrency{resource="GET /orders"} 0
bulwark_concurrency{resource="db"} 0
bulwark_concurrency{resource="slow"} 1
# HELP bulwark_circuit_breaker_state Circuit breakers of the resource in each state.
# TYPE bulwark_circuit_breaker_state gauge
bulwark_circuit_breaker_state{resource="db",state="CLOSED"} 0
bulwark_circuit_breaker_state{resource="db",state="HALF_OPEN"} 0
bulwark_circuit_breaker_state{resource="db",state="OPEN"} 1
# HELP bulwark_circuit_breaker_transitions_total Circuit breaker state transitions.
# TYPE bulwark_circuit_breaker_transitions_total counter
bulwark_circuit_breaker_transitions_total{from="CLOSED",resource="db",to="OPEN"} 1
# HELP bulwark_rules Rules in force.
# TYPE bulwark_rules gauge
bulwark_rules{kind="authority"} 0
bulwark_rules{kind="degrade"} 1
bulwark_rules{kind="flow"} 1
bulwark_rules{kind="paramFlow"} 0
bulwark_rules{kind="system"} 0
# HELP bulwark_rule_changes_total Rule changes, applied or rejected.
# TYPE bulwark_rule_changes_total counter
bulwark_rule_changes_total{kind="authority",result="applied"} 0
bulwark_rule_changes_total{kind="authority",result="rejected"} 0
bulwark_rule_changes_total{kind="degrade",result="applied"} 1
bulwark_rule_changes_total{kind="degrade",result="rejected"} 0
bulwark_rule_changes_total{kind="flow",result="applied"} 1
bulwark_rule_changes_total{kind="flow",result="rejected"} 1
bulwark_rule_changes_total{kind="paramFlow",result="applied"} 0
bulwark_rule_changes_total{kind="paramFlow",result="rejected"} 0
bulwark_rule_changes_total{kind="system",result="applied"} 0
bulwark_rule_changes_total{kind="system",result="rejected"} 0
`), "bulwark_passed_total", "bulwark_blocked_total", "bulwark_errors_total", "bulwark_response_time_seconds",
			"bulwark_concurrency", "bulwark_circuit_breaker_state", "bulwark_circuit_breaker_transitions_total",
			"bulwark_rules", "bulwark_rule_changes_total"))

		// Inbound QPS covers the sliding second: the entries are a second old.
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_system_inbound_qps Inbound entries admitted in the last second.
# TYPE bulwark_system_inbound_qps gauge
bulwark_system_inbound_qps 0
`), "bulwark_system_inbound_qps", "bulwark_system_load1"))
		call(e, "GET /orders", 0, nil, core.Inbound())
		assert.InDelta(t, 1, gaugeValue(t, reg, "bulwark_system_inbound_qps"), 0)
	})
}

func gaugeValue(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	require.Failf(t, "metric not gathered", name)
	return 0
}

func TestCollectorCountersOnlyGrow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: 2}}))
		reg := prometheus.NewRegistry()
		reg.MustRegister(bulwarkprom.NewCollector(e))
		var lastPassed, lastBlocked float64
		for i := range 20 {
			for range 4 {
				call(e, "r", time.Millisecond, nil)
			}
			time.Sleep(time.Duration(150+61*i) * time.Millisecond)
			mfs, err := reg.Gather()
			require.NoError(t, err)
			for _, mf := range mfs {
				switch mf.GetName() {
				case "bulwark_passed_total":
					v := mf.GetMetric()[0].GetCounter().GetValue()
					assert.GreaterOrEqual(t, v, lastPassed)
					lastPassed = v
				case "bulwark_blocked_total":
					v := mf.GetMetric()[0].GetCounter().GetValue()
					assert.GreaterOrEqual(t, v, lastBlocked)
					lastBlocked = v
				}
			}
		}
		assert.Positive(t, lastPassed)
		assert.Positive(t, lastBlocked)
	})
}

// TestCollectorExportsDatasources follows two real file datasources: one
// healthy, one whose document is rejected.
func TestCollectorExportsDatasources(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(`[{"resource":"r","count":5}]`), 0o600))
	require.NoError(t, os.WriteFile(bad, []byte(`[{"resource":"r","count":-5}]`), 0o600))
	e := core.NewEngine()
	defer e.Close()
	goodDS := datasource.NewReadable(file.New(good), converter.FlowRules(), datasource.WithName("good"))
	badDS := datasource.NewReadable(file.New(bad), converter.FlowRules(), datasource.WithName("bad"), datasource.WithPollInterval(50*time.Millisecond))
	e.Flow().Register(goodDS.Property())
	other := core.NewEngine()
	defer other.Close()
	other.Flow().Register(badDS.Property())
	require.NoError(t, goodDS.Start(bg))
	defer goodDS.Close()
	require.Error(t, badDS.Start(bg))
	defer badDS.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(bulwarkprom.NewCollector(e, bulwarkprom.WithDatasources(goodDS, badDS)))
	applied := goodDS.Status().AppliedAt
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_datasource_up 1 when the datasource's last attempt succeeded.
# TYPE bulwark_datasource_up gauge
bulwark_datasource_up{datasource="bad"} 0
bulwark_datasource_up{datasource="good"} 1
`), "bulwark_datasource_up"))
	assert.Equal(t, float64(applied.UnixNano())/1e9, gaugeValue(t, reg, "bulwark_datasource_last_applied_timestamp_seconds"))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "bulwark_datasource_failures_total" {
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == "bad" {
					assert.GreaterOrEqual(t, m.GetCounter().GetValue(), 1.0)
				} else {
					assert.Equal(t, 0.0, m.GetCounter().GetValue())
				}
			}
		}
	}
	// The source name and revision reach the engine's rule events.
	evs := e.RuleEvents()
	require.Len(t, evs, 1)
	assert.Equal(t, "good", evs[0].Source.Name)
	assert.Equal(t, goodDS.Status().Revision, evs[0].Source.Revision)
	rej := other.RuleEvents()
	require.NotEmpty(t, rej)
	assert.True(t, rej[0].Rejected)
	assert.Equal(t, "bad", rej[0].Source.Name)
}

func TestCollectorLints(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	call(e, "r", 0, nil)
	problems, err := testutil.CollectAndLint(bulwarkprom.NewCollector(e))
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// TestCollectorExportsShadowBlocks: a shadow rule beside an enforcing one
// on a resource; the entries it would have blocked are their own series.
func TestCollectorExportsShadowBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		reg := prometheus.NewPedanticRegistry()
		require.NoError(t, reg.Register(bulwarkprom.NewCollector(e)))
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: 4}, {Resource: "r", Count: 1, Shadow: true}}))
		_, err := testutil.GatherAndCount(reg)
		require.NoError(t, err)
		for range 6 {
			call(e, "r", 0, nil)
		}
		time.Sleep(time.Second) // the counts leave the current bucket
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_blocked_total Entries blocked, by kind of rule.
# TYPE bulwark_blocked_total counter
bulwark_blocked_total{kind="flow",resource="r"} 2
# HELP bulwark_shadow_blocked_total Entries shadow rules would have blocked (and let through), by kind of rule.
# TYPE bulwark_shadow_blocked_total counter
bulwark_shadow_blocked_total{kind="flow",resource="r"} 3
`), "bulwark_blocked_total", "bulwark_shadow_blocked_total"))
	})
}
