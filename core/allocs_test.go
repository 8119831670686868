package core_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// TestPassPathAllocatesNothing enters and exits resources whose rules all
// pass, one kind at a time and all together: an admitted entry costs no
// allocation, whatever checks it goes through.
func TestPassPathAllocatesNothing(t *testing.T) {
	e := core.NewEngine(core.WithSystemCollector(constCollector{}))
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, e.Flow().Load([]flow.Rule{
		{Resource: "flow", Grade: flow.GradeQPS, Count: 1e12},
		{Resource: "origin", Grade: flow.GradeQPS, Count: 1e12, LimitApp: "app"},
		{Resource: "chain", Grade: flow.GradeQPS, Count: 1e12, Strategy: flow.Chain, RefResource: "entrance"},
		{Resource: "all", Grade: flow.GradeQPS, Count: 1e12},
	}))
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{
		{Resource: "breaker", Grade: circuitbreaker.SlowRequestRatio, Count: 1000, SlowRatioThreshold: 0.5,
			TimeWindow: 1, MinRequestAmount: 5, StatIntervalMs: 1000},
		{Resource: "all", Grade: circuitbreaker.ErrorRatio, Count: 0.5, TimeWindow: 1, MinRequestAmount: 5, StatIntervalMs: 1000},
	}))
	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{
		{Resource: "hotspot", Grade: flow.GradeQPS, ParamIdx: 0, Count: 1e9, DurationInSec: 1},
		{Resource: "all", Grade: flow.GradeQPS, ParamIdx: 0, Count: 1e9, DurationInSec: 1},
	}))
	require.NoError(t, e.System().Load([]system.Rule{
		{HighestSystemLoad: 1000, HighestCPUUsage: 1, QPS: 1e12, AvgRT: 1 << 40, MaxThread: 1 << 40},
	}))
	chain := core.WithContextName(context.Background(), "entrance")
	tests := []struct {
		name     string
		ctx      context.Context
		resource string
		opts     []core.EntryOption
	}{
		{"no rule", context.Background(), "free", nil},
		{"flow", context.Background(), "flow", nil},
		{"flow by origin", context.Background(), "origin", []core.EntryOption{core.WithOrigin("app")}},
		{"flow by chain", chain, "chain", nil},
		{"breaker", context.Background(), "breaker", nil},
		{"hotspot", context.Background(), "hotspot", []core.EntryOption{core.WithArgs("key")}},
		{"system", context.Background(), "free", []core.EntryOption{core.Inbound()}},
		{"every kind", chain, "all", []core.EntryOption{core.Inbound(), core.WithOrigin("app"), core.WithArgs("key"), core.WithCount(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(100, func() {
				en, err := e.Enter(tt.ctx, tt.resource, tt.opts...)
				if err != nil {
					t.Fatal(err)
				}
				en.Exit()
			})
			assert.Zero(t, allocs, "allocations per Enter and Exit")
		})
	}
}

// A flow rule's BlockError is made at its first block and returned as is
// from then on: blocking allocates nothing after that, and every block of
// one rule returns the same error, naming the rule as Load applied it.
func TestBlockedPathAllocatesNothing(t *testing.T) {
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	r := flow.Rule{Resource: "r", Grade: flow.GradeQPS, Count: 0}
	require.NoError(t, e.Flow().Load([]flow.Rule{r}))
	_, first := e.Enter(context.Background(), "r")
	var be *core.BlockError
	require.ErrorAs(t, first, &be)
	assert.Equal(t, r.WithDefaults(), be.Rule)
	allocs := testing.AllocsPerRun(100, func() {
		_, err := e.Enter(context.Background(), "r")
		if err != first {
			t.Fatalf("got %v, want the rule's error %p", err, first)
		}
	})
	assert.Zero(t, allocs, "allocations per blocked Enter")
}
