package core_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// One name per kind wherever a person reads it: a block kind, a rule
// event's kind and a kind's statistics are named as the user's rule-set
// document names its sections.
func TestKindNamesAreTheRuleSetSections(t *testing.T) {
	set := core.RuleSet{
		Flow:           []flow.Rule{{Resource: "a", Count: 1}},
		CircuitBreaker: []circuitbreaker.Rule{{Resource: "a", Grade: circuitbreaker.ErrorCount, Count: 1, TimeWindow: 1}},
		System:         []system.Rule{{HighestSystemLoad: 10}},
		Authority:      []authority.Rule{{Resource: "a", LimitApp: "x"}},
		Hotspot:        []hotspot.Rule{{Resource: "a", Count: 1, DurationInSec: 1}},
	}
	doc, err := converter.RuleSet().Encode(set)
	require.NoError(t, err)
	var sections map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc, &sections))
	want := slices.Sorted(maps.Keys(sections))
	require.Equal(t, []string{"authority", "degrade", "flow", "paramFlow", "system"}, want)

	var blockKinds []string
	for _, k := range []core.BlockKind{core.BlockAuthority, core.BlockSystem, core.BlockHotspot, core.BlockFlow, core.BlockCircuitBreaker} {
		blockKinds = append(blockKinds, k.String())
	}
	assert.ElementsMatch(t, want, blockKinds, "BlockKind.String")

	e := core.NewEngine()
	defer e.Close()
	var events []string
	defer e.OnRuleEvent(func(ev core.RuleEvent) { events = append(events, ev.Kind) })()
	require.NoError(t, e.LoadRuleSet(set))
	assert.ElementsMatch(t, want, events, "RuleEvent.Kind")

	var stats []string
	for _, k := range e.Stats().Rules {
		stats = append(stats, k.Kind)
	}
	assert.ElementsMatch(t, want, stats, "RuleStats.Kind")

	set.Hotspot[0].Count = -1
	var verr *core.ValidationError
	require.ErrorAs(t, e.LoadRuleSet(set), &verr)
	assert.Equal(t, "paramFlow", verr.Kind, "ValidationError.Kind")
}
