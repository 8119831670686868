package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/property"
)

func TestRuleEventsDescribeChanges(t *testing.T) {
	var logs bytes.Buffer
	e := core.NewEngine(core.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	var got []core.RuleEvent
	cancel := e.OnRuleEvent(func(ev core.RuleEvent) { got = append(got, ev) })

	require.NoError(t, e.Flow().Load([]flow.Rule{
		{Resource: "GET /orders", Count: 100},
		{Resource: "GET /items", Grade: flow.GradeThread, Count: 2},
	}))
	require.NoError(t, e.Flow().Load([]flow.Rule{
		{Resource: "GET /orders", Count: 200, ControlBehavior: flow.WarmUp, WarmUpPeriodSec: 20},
		{Resource: "POST /orders", Count: 5, LimitApp: "web"},
	}))
	err := e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: -1}})
	require.ErrorIs(t, err, core.ErrInvalidRules)

	require.Len(t, got, 3)
	first := got[0]
	assert.Equal(t, "flow", first.Kind)
	assert.False(t, first.Rejected)
	assert.Equal(t, core.RuleSource{}, first.Source)
	assert.ElementsMatch(t, []string{"GET /orders: count=100", "GET /items: grade=thread count=2"}, first.Added)
	assert.Equal(t, 2, first.Rules)

	second := got[1]
	assert.Equal(t, []string{`GET /orders: count 100 → 200, controlBehavior reject → warmUp, warmUpPeriodSec 10 → 20`}, second.Changed)
	assert.Equal(t, []string{"GET /items: grade=thread count=2"}, second.Removed)
	assert.Equal(t, []string{`POST /orders: limitApp="web" count=5`}, second.Added)

	third := got[2]
	assert.True(t, third.Rejected)
	assert.Equal(t, []string{"rules[0].count: must be >= 0"}, third.Errors)
	assert.Equal(t, 2, third.Rules, "the rules in force stay")

	assert.Equal(t, got, e.RuleEvents())

	// One structured log record per event.
	var records []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(line, &rec))
		records = append(records, rec)
	}
	require.Len(t, records, 3)
	assert.Equal(t, "rules changed", records[1]["msg"])
	assert.Equal(t, []any{second.Changed[0]}, records[1]["changed"])
	assert.Equal(t, "WARN", records[2]["level"])
	assert.Equal(t, []any{"rules[0].count: must be >= 0"}, records[2]["errors"])

	cancel()
	require.NoError(t, e.Flow().Load(nil))
	assert.Len(t, got, 3, "cancelled")
	assert.Len(t, e.RuleEvents(), 4)
}

// TestRuleEventsCarryTheSource sets values with their source as a
// datasource's Readable does, through the mechanism a Property is.
func TestRuleEventsCarryTheSource(t *testing.T) {
	e := core.NewEngine()
	p := core.NewProperty[[]flow.Rule]()
	e.Flow().Register(p)
	src := core.RuleSource{Name: "etcd /bulwark/flow", Revision: "42"}
	require.NoError(t, (*property.Cell[[]flow.Rule, core.RuleSource])(p).SetFrom([]flow.Rule{{Resource: "r", Count: 1}}, src))
	rs := core.NewProperty[core.RuleSet]()
	cancel := e.RegisterRuleSet(rs)
	defer cancel()
	src2 := core.RuleSource{Name: "file rules.json", Revision: "7"}
	err := (*property.Cell[core.RuleSet, core.RuleSource])(rs).SetFrom(core.RuleSet{
		Flow:      []flow.Rule{{Resource: "r", Count: 2}},
		Authority: []authority.Rule{{Resource: "r"}}, // no limitApp: invalid
	}, src2)
	require.ErrorIs(t, err, core.ErrInvalidRules)

	evs := e.RuleEvents()
	require.Len(t, evs, 2)
	assert.Equal(t, src, evs[0].Source)
	assert.Equal(t, "authority", evs[1].Kind)
	assert.True(t, evs[1].Rejected)
	assert.Equal(t, src2, evs[1].Source)

	st := e.Stats()
	defer e.Close()
	require.Len(t, st.Rules, 5)
	assert.Equal(t, core.RuleStats{Kind: "flow", Rules: 1, Source: src, Applied: 1}, st.Rules[0])
	assert.Equal(t, core.RuleStats{Kind: "authority", Rejected: 1}, st.Rules[3])
}

func TestRuleEventsKeepTheLast100(t *testing.T) {
	e := core.NewEngine()
	for i := range 130 {
		require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: float64(i + 1)}}))
	}
	evs := e.RuleEvents()
	require.Len(t, evs, 100)
	assert.Equal(t, []string{"r: count 30 → 31"}, evs[0].Changed)
	assert.Equal(t, []string{"r: count 129 → 130"}, evs[99].Changed)
}

func ExampleEngine_OnRuleEvent() {
	e := core.NewEngine()
	cancel := e.OnRuleEvent(func(ev core.RuleEvent) {
		fmt.Println(ev.Kind, "added", ev.Added, "changed", ev.Changed)
	})
	defer cancel()
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 100}})
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 200}})
	// Output:
	// flow added [GET /orders: count=100] changed []
	// flow added [] changed [GET /orders: count 100 → 200]
}

func TestRuleEventSubscribersMayReadTheEngine(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	var seen []int
	e.OnRuleEvent(func(ev core.RuleEvent) {
		seen = append(seen, len(e.RuleEvents()))
		assert.Equal(t, ev.Rules, e.Stats().Rules[0].Rules)
	})
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: 1}}))
	require.Error(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: -1}}))
	assert.Equal(t, []int{1, 2}, seen, "each event is recorded before it is delivered")
}

func TestRuleEventsOfLargeChangesAreBounded(t *testing.T) {
	e := core.NewEngine()
	list := func(count float64) []flow.Rule {
		rs := make([]flow.Rule, 500)
		for i := range rs {
			rs[i] = flow.Rule{Resource: fmt.Sprintf("r%03d", i), Count: count}
		}
		return rs
	}
	require.NoError(t, e.Flow().Load(list(1)))
	require.NoError(t, e.Flow().Load(list(2)))
	evs := e.RuleEvents()
	require.Len(t, evs, 2)
	require.Len(t, evs[0].Added, 51)
	assert.Equal(t, "r000: count=1", evs[0].Added[0])
	assert.Equal(t, "… and 450 more", evs[0].Added[50])
	require.Len(t, evs[1].Changed, 51)
	assert.Equal(t, "r049: count 1 → 2", evs[1].Changed[49])
	assert.Equal(t, "… and 450 more", evs[1].Changed[50])
	assert.Empty(t, evs[1].Added)
	assert.Empty(t, evs[1].Removed)
	assert.Equal(t, 500, evs[1].Rules)
}
