package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

// scripted is a token service whose budgets answer what the test sets:
// the faults (Fail) no real service can be made to give on cue. Package
// cluster/redis tests the engine with a real Redis.
type scripted struct {
	mu       sync.Mutex
	answer   cluster.Result
	budgets  map[int64]int // Budget calls per flow id
	released map[int64]int
	asked    []request
}

type request struct {
	flowID      int64
	acquire     int64
	prioritized bool
}

func newScripted() *scripted {
	return &scripted{budgets: map[int64]int{}, released: map[int64]int{}}
}

func (s *scripted) set(r cluster.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = r
}

func (s *scripted) Budget(r flow.Rule) cluster.Budget {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budgets[r.ClusterConfig.FlowID]++
	return &scriptedBudget{s: s, id: r.ClusterConfig.FlowID}
}

type scriptedBudget struct {
	s  *scripted
	id int64
}

func (b *scriptedBudget) RequestToken(_ context.Context, acquire int64, prioritized bool) cluster.Result {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	b.s.asked = append(b.s.asked, request{b.id, acquire, prioritized})
	return b.s.answer
}

func (b *scriptedBudget) Release() {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	b.s.released[b.id]++
}

func clusterFlow(resource string, id int64, count float64, fallback bool) flow.Rule {
	return flow.Rule{Resource: resource, Count: count, ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{FlowID: id, ThresholdType: 1, FallbackToLocalWhenFail: fallback}}
}

// admitted enters resource n times in one instant and counts the passes.
func admitted(t *testing.T, e *core.Engine, resource string, n int, opts ...core.EntryOption) int {
	t.Helper()
	ok := 0
	for range n {
		en, err := e.Enter(context.Background(), resource, opts...)
		if err == nil {
			ok++
			en.Exit()
			continue
		}
		require.ErrorIs(t, err, core.ErrBlocked)
		var be *core.BlockError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, core.BlockFlow, be.Kind)
	}
	return ok
}

func TestClusterRuleAnswers(t *testing.T) {
	clk := testclock.New()
	ts := newScripted()
	e := core.NewEngine(core.WithClock(clk), core.WithTokenService(ts))
	require.NoError(t, e.Flow().Load([]flow.Rule{
		clusterFlow("fb", 1, 2, true),
		clusterFlow("pass", 2, 2, false),
	}))

	// The service decides, whatever the rule's count says locally.
	ts.set(cluster.Result{Status: cluster.OK})
	assert.Equal(t, 5, admitted(t, e, "fb", 5))
	ts.set(cluster.Result{Status: cluster.Blocked})
	assert.Equal(t, 0, admitted(t, e, "pass", 3))

	// Fail: Java's fallback. The local check with the rule's count (the
	// 5 entries the service admitted in this second count), or a pass.
	ts.set(cluster.Result{Status: cluster.Fail})
	assert.Equal(t, 0, admitted(t, e, "fb", 3))
	clk.Advance(time.Second)
	assert.Equal(t, 2, admitted(t, e, "fb", 5))
	assert.Equal(t, 5, admitted(t, e, "pass", 5))

	// ShouldWait: the entry waits, then runs.
	ts.set(cluster.Result{Status: cluster.ShouldWait, Wait: 300 * time.Millisecond})
	before := clk.Now()
	assert.Equal(t, 1, admitted(t, e, "pass", 1, core.WithPriority(), core.WithCount(3)))
	assert.Equal(t, 300*time.Millisecond, clk.Now().Sub(before))
	last := ts.asked[len(ts.asked)-1]
	assert.Equal(t, request{2, 3, true}, last, "count and priority reach the service")
}

func TestClusterBudgetsFollowRules(t *testing.T) {
	ts := newScripted()
	e := core.NewEngine(core.WithTokenService(ts))
	a, b := clusterFlow("a", 1, 5, true), clusterFlow("b", 2, 5, false)
	local := flow.Rule{Resource: "a", Count: 100}
	require.NoError(t, e.Flow().Load([]flow.Rule{a, b, local}))
	assert.Equal(t, map[int64]int{1: 1, 2: 1}, ts.budgets, "one budget per cluster rule, none for local rules")

	// An unchanged rule keeps its budget; a changed one gets a new one
	// and its old budget is released; a removed one is released.
	a2 := a
	a2.Count = 6
	require.NoError(t, e.Flow().Load([]flow.Rule{a2, local}))
	assert.Equal(t, map[int64]int{1: 2, 2: 1}, ts.budgets)
	assert.Equal(t, map[int64]int{1: 1, 2: 1}, ts.released)
	require.NoError(t, e.Flow().Load([]flow.Rule{a2, local, b}))
	assert.Equal(t, map[int64]int{1: 2, 2: 2}, ts.budgets)
	assert.Equal(t, map[int64]int{1: 1, 2: 1}, ts.released)
	require.NoError(t, e.Flow().Load(nil))
	assert.Equal(t, map[int64]int{1: 2, 2: 2}, ts.released)
}

// Without a token service a cluster rule is checked as if the service
// had failed.
func TestClusterRuleWithoutService(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	require.NoError(t, e.Flow().Load([]flow.Rule{
		clusterFlow("fb", 1, 2, true),
		clusterFlow("pass", 2, 2, false),
	}))
	assert.Equal(t, 2, admitted(t, e, "fb", 5))
	assert.Equal(t, 5, admitted(t, e, "pass", 5))
}

func TestClusterRuleCancelledWait(t *testing.T) {
	ts := newScripted()
	e := core.NewEngine(core.WithTokenService(ts))
	require.NoError(t, e.Flow().Load([]flow.Rule{clusterFlow("r", 1, 2, true)}))
	ts.set(cluster.Result{Status: cluster.ShouldWait, Wait: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Enter(ctx, "r", core.WithPriority())
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// reporting is a token service that reports a health, as cluster/redis's
// does.
type reporting struct {
	*scripted
	health cluster.Health
}

func (r *reporting) Health() cluster.Health { return r.health }

func TestClusterHealthInStats(t *testing.T) {
	plain := core.NewEngine()
	defer plain.Close()
	assert.Nil(t, plain.Stats().Cluster, "no token service")

	silent := core.NewEngine(core.WithTokenService(newScripted()))
	defer silent.Close()
	assert.Nil(t, silent.Stats().Cluster, "a service without Health")

	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := cluster.Health{Err: errors.New("cluster/redis: dial tcp: refused"), Since: since, Failures: 3, Requests: 7, Fallbacks: 12}
	e := core.NewEngine(core.WithTokenService(&reporting{scripted: newScripted(), health: h}))
	defer e.Close()
	got := e.Stats().Cluster
	require.NotNil(t, got)
	assert.Equal(t, h, *got)
}

// A shadow cluster rule sharing the flowId of an enforcing cluster rule
// would spend its budget: the list is rejected, naming the shadow rule
// and the flowId; with a flowId of its own it is accepted.
func TestShadowClusterRuleNeedsItsOwnFlowID(t *testing.T) {
	ts := newScripted()
	e := core.NewEngine(core.WithTokenService(ts))
	defer e.Close()
	enforcing := clusterFlow("GET /orders", 7, 100, true)
	shadow := clusterFlow("GET /orders", 7, 50, true)
	shadow.Shadow = true

	err := e.Flow().Load([]flow.Rule{{Resource: "local", Count: 1}, enforcing, shadow})
	require.ErrorIs(t, err, core.ErrInvalidRules)
	var verr *core.ValidationError
	require.ErrorAs(t, err, &verr)
	require.Len(t, verr.Rules, 1)
	assert.Equal(t, 2, verr.Rules[0].Index)
	assert.Equal(t, `rules[2].clusterConfig.flowId: shadow cluster rule shares flowId 7 with enforcing cluster rule rules[1] ("GET /orders") `+
		`and would spend its budget; give the shadow rule a flowId of its own`, verr.Rules[0].Error())
	assert.Empty(t, e.Flow().Rules(), "nothing applied")
	assert.Empty(t, ts.budgets, "no budget asked for")
	evs := e.RuleEvents()
	require.Len(t, evs, 1)
	assert.True(t, evs[0].Rejected)
	assert.Equal(t, []string{verr.Rules[0].Error()}, evs[0].Errors)

	// The order does not matter, and a rule's own problems come first in
	// list order.
	bad := flow.Rule{Resource: "x", Count: -1}
	err = e.Flow().Load([]flow.Rule{shadow, bad, enforcing})
	require.ErrorAs(t, err, &verr)
	require.Len(t, verr.Rules, 2)
	assert.Equal(t, 0, verr.Rules[0].Index)
	assert.Contains(t, verr.Rules[0].Error(), "enforcing cluster rule rules[2]")
	assert.Equal(t, 1, verr.Rules[1].Index)

	// Lenient: the shadow rule is skipped, the rest applies.
	e.Flow().SetLenient(true)
	err = e.Flow().Load([]flow.Rule{enforcing, shadow})
	require.ErrorAs(t, err, &verr)
	assert.True(t, verr.Applied)
	assert.Equal(t, []flow.Rule{enforcing.WithDefaults()}, e.Flow().Rules())
	e.Flow().SetLenient(false)

	// Its own flowId, shared with another shadow rule or not; a local
	// shadow rule; an enforcing rule that fails its own validation does not
	// count.
	own := shadow
	own.ClusterConfig.FlowID = 8
	other := own
	other.Resource = "GET /items"
	localShadow := flow.Rule{Resource: "GET /orders", Count: 1, Shadow: true}
	require.NoError(t, e.Flow().Load([]flow.Rule{enforcing, own, other, localShadow}))
	assert.Len(t, e.Flow().Rules(), 4)
	invalid := enforcing
	invalid.Count = -1
	e.Flow().SetLenient(true)
	err = e.Flow().Load([]flow.Rule{invalid, shadow})
	require.ErrorAs(t, err, &verr)
	require.Len(t, verr.Rules, 1)
	assert.Equal(t, 0, verr.Rules[0].Index)
	assert.Equal(t, []flow.Rule{shadow.WithDefaults()}, e.Flow().Rules())
}
