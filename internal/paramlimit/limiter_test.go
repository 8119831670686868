package paramlimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/internal/mono"
)

// ms is the instant n milliseconds after the epoch.
func ms(n int64) mono.Time { return mono.FromMillis(n) }

func qpsRule(count float64) hotspot.Rule {
	return hotspot.Rule{Resource: "r", Grade: flow.GradeQPS, ParamIdx: 0, Count: count, DurationInSec: 1}
}

// passes counts how many of n entries with arg pass at now.
func passes(l *Limiter, now mono.Time, n int, args ...any) int {
	k := 0
	for range n {
		if !l.Check(args, now, 1).Blocked {
			k++
		}
	}
	return k
}

func TestTokenBucket(t *testing.T) {
	l := NewLimiter(qpsRule(5))
	now := ms(1000)
	assert.Equal(t, 5, passes(l, now, 10, "a"))
	assert.Equal(t, 5, passes(l, now, 10, "b"), "each value has its own budget")
	// Java's bucket refills only once a whole duration has passed.
	assert.Equal(t, 0, passes(l, now.Add(1000*time.Millisecond), 1, "a"))
	assert.Equal(t, 5, passes(l, now.Add(1001*time.Millisecond), 10, "a"))
	// After 2.5 s: 5 × 2.5 tokens, capped at count.
	assert.Equal(t, 5, passes(l, now.Add(3600*time.Millisecond), 10, "a"))
}

func TestTokenBucketBurstAndDuration(t *testing.T) {
	r := qpsRule(4)
	r.BurstCount, r.DurationInSec = 2, 2
	l := NewLimiter(r)
	now := ms(1000)
	assert.Equal(t, 6, passes(l, now, 10, 7))
	assert.Equal(t, 0, passes(l, now.Add(2000*time.Millisecond), 1, 7), "duration is 2 s")
	// 3 s later: 3 × 4/2 = 6 tokens.
	assert.Equal(t, 6, passes(l, now.Add(3000*time.Millisecond), 10, 7))
	// acquire above count + burst never passes
	assert.True(t, l.Check([]any{8}, now, 7).Blocked)
	assert.False(t, l.Check([]any{8}, now, 6).Blocked)
}

func TestZeroCountBlocks(t *testing.T) {
	l := NewLimiter(qpsRule(0))
	assert.True(t, l.Check([]any{"x"}, 0, 1).Blocked)
}

func TestItemsByClassType(t *testing.T) {
	r := qpsRule(1)
	r.ParamFlowItemList = []hotspot.ParamFlowItem{
		{Object: "42", Count: 3, ClassType: "int"},
		{Object: "7", Count: 0, ClassType: "java.lang.Long"},
		{Object: "1.5", Count: 4, ClassType: "double"},
		{Object: "true", Count: 5, ClassType: "boolean"},
		{Object: "x", Count: 6, ClassType: "char"},
		{Object: "vip", Count: 7, ClassType: "String"},
	}
	require.NoError(t, r.Validate())
	l := NewLimiter(r)
	tests := []struct {
		arg  any
		want int64
	}{
		{42, 3}, {int64(42), 3}, {int8(42), 3}, {uint16(42), 3}, {int32(42), 3},
		{7, 0}, {43, 1}, {"42", 1},
		{1.5, 4}, {float32(1.5), 4}, {2.5, 1},
		{true, 5}, {false, 1},
		{'x', 6}, {"x", 1},
		{"vip", 7}, {"VIP", 1},
		{struct{ A int }{42}, 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, l.Threshold(tt.arg), "%T %v", tt.arg, tt.arg)
	}
	now := ms(5000)
	assert.Equal(t, 3, passes(l, now, 10, 42))
	assert.Equal(t, 0, passes(l, now, 10, 7))
	assert.Equal(t, 7, passes(l, now, 10, "vip"))
	assert.Equal(t, 1, passes(l, now, 10, "other"))
}

func TestParamIdx(t *testing.T) {
	r := qpsRule(1)
	r.ParamIdx = -1
	l := NewLimiter(r)
	assert.Equal(t, 1, passes(l, 0, 3, "a", "last"))
	v, ok := l.Value([]any{"a", "last"})
	assert.True(t, ok)
	assert.Equal(t, "last", v)

	r.ParamIdx = -3
	l = NewLimiter(r)
	assert.Equal(t, 3, passes(l, 0, 3, "a", "b"), "index before the first argument: passes")
	r.ParamIdx = 2
	l = NewLimiter(r)
	assert.Equal(t, 3, passes(l, 0, 3, "a", "b"), "missing argument passes")
	r.ParamIdx = 0
	l = NewLimiter(r)
	assert.Equal(t, 3, passes(l, 0, 3, nil), "nil argument passes")
	assert.Equal(t, 3, passes(l, 0, 3), "no arguments pass")
	assert.Equal(t, 3, passes(l, 0, 3, map[string]int{}), "a value that cannot be a key passes")
}

func TestSliceArgument(t *testing.T) {
	l := NewLimiter(qpsRule(2))
	assert.False(t, l.Check([]any{[]string{"a", "b"}}, 0, 1).Blocked)
	assert.False(t, l.Check([]any{[]any{"a", nil}}, 0, 1).Blocked)
	assert.True(t, l.Check([]any{[]string{"b", "a"}}, 0, 1).Blocked, "a is spent")
	assert.False(t, l.Check([]any{[2]int{1, 2}}, 0, 1).Blocked)
}

func TestRateLimiter(t *testing.T) {
	r := qpsRule(10) // one entry per 100 ms per value
	r.ControlBehavior, r.MaxQueueingTimeMs = flow.RateLimiter, 250
	l := NewLimiter(r)
	now := ms(1000)
	var waits []time.Duration
	for range 5 {
		d := l.Check([]any{"a"}, now, 1)
		if d.Blocked {
			waits = append(waits, -1)
			continue
		}
		waits = append(waits, d.Wait)
	}
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, -1, -1}, waits)
	assert.Equal(t, time.Duration(0), l.Check([]any{"b"}, now, 1).Wait, "another value has its own timeline")
	// 300 ms later the queue has drained to one slot ahead.
	d := l.Check([]any{"a"}, now.Add(300*time.Millisecond), 1)
	assert.False(t, d.Blocked)
	assert.Equal(t, time.Duration(0), d.Wait)

	r.MaxQueueingTimeMs = 0
	l = NewLimiter(r)
	assert.False(t, l.Check([]any{"a"}, now, 1).Blocked)
	assert.True(t, l.Check([]any{"a"}, now.Add(50*time.Millisecond), 1).Blocked)
	assert.False(t, l.Check([]any{"a"}, now.Add(100*time.Millisecond), 1).Blocked)
}

func TestThreadGrade(t *testing.T) {
	r := hotspot.Rule{Resource: "r", Grade: flow.GradeThread, Count: 2, DurationInSec: 1,
		ParamFlowItemList: []hotspot.ParamFlowItem{{Object: "big", Count: 3, ClassType: "String"}}}
	l := NewLimiter(r)
	enter := func(v string) bool {
		if l.Check([]any{v}, 0, 1).Blocked {
			return false
		}
		l.Entered([]any{v})
		return true
	}
	assert.True(t, enter("a"))
	assert.True(t, enter("a"))
	assert.False(t, enter("a"))
	assert.True(t, enter("b"))
	l.Exited([]any{"a"})
	assert.True(t, enter("a"))
	for range 3 {
		assert.True(t, enter("big"))
	}
	assert.False(t, enter("big"))
	for range 10 {
		l.Exited([]any{"b"}) // never below zero
	}
	assert.True(t, enter("b"))
	assert.True(t, enter("b"))
	assert.False(t, enter("b"))
}

func TestCapacity(t *testing.T) {
	assert.Equal(t, 4000, Capacity(hotspot.Rule{DurationInSec: 1}))
	assert.Equal(t, 40_000, Capacity(hotspot.Rule{DurationInSec: 10}))
	assert.Equal(t, 200_000, Capacity(hotspot.Rule{DurationInSec: 50}))
	assert.Equal(t, 200_000, Capacity(hotspot.Rule{DurationInSec: 1 << 40}))
}

func TestLRUEviction(t *testing.T) {
	c := newCache(3)
	init := func(*valueState) {}
	a := c.getOrCreate("a", init)
	c.getOrCreate("b", init)
	c.getOrCreate("c", init)
	require.Equal(t, 3, c.len())
	c.get("a") // a is used again; b and c are not
	c.getOrCreate("d", init)
	assert.Equal(t, 3, c.len())
	assert.Nil(t, c.get("b"), "b, least recently used, was evicted")
	assert.Same(t, a, c.get("a"))
	assert.NotNil(t, c.get("c"))
	assert.NotNil(t, c.get("d"))
	// Every value was used since the last sweep: the sweep clears the
	// flags and evicts in ring order.
	c.getOrCreate("e", init)
	assert.Equal(t, 3, c.len())

	// A value with entries in flight is kept while another can go.
	c = newCache(2)
	busy := c.getOrCreate("busy", init)
	busy.threads.Store(1)
	c.getOrCreate("idle", init)
	c.getOrCreate("new", init)
	assert.NotNil(t, c.get("busy"))
	assert.Nil(t, c.get("idle"))
}

// The limiter forgets values beyond its capacity: a forgotten value comes
// back with a full budget.
func TestLimiterBoundedValues(t *testing.T) {
	l := NewLimiter(qpsRule(1))
	for i := range 10_000 {
		l.Check([]any{fmt.Sprint(i)}, 0, 1)
	}
	assert.Equal(t, 4000, l.Len())
	assert.Equal(t, 1, passes(l, 0, 2, "0"), "evicted long ago: full budget")
	assert.Equal(t, 0, passes(l, 0, 1, "9999"), "recent: spent")
}

func TestEach(t *testing.T) {
	type key struct{ a, b int }
	tests := []struct {
		name string
		v    any
		want []any
	}{
		{"scalar", "a", []any{"a"}},
		{"comparable struct", key{1, 2}, []any{key{1, 2}}},
		{"not a map key", map[string]int{"a": 1}, nil},
		{"[]any skips nil and slices", []any{"a", nil, []int{1}, 2}, []any{"a", 2}},
		{"[]string", []string{"a", "b"}, []any{"a", "b"}},
		{"[]int", []int{1, 2}, []any{1, 2}},
		{"[]int64", []int64{1, 2}, []any{int64(1), int64(2)}},
		{"other slice by reflection", []float32{1.5}, []any{float32(1.5)}},
		{"array by reflection", [2]int{1, 2}, []any{1, 2}},
		{"[]error skips nil interfaces", []error{nil, errBoom}, []any{errBoom}},
		{"slice of slices: no keys", [][]int{{1}}, nil},
	}
	for _, tt := range tests {
		var got []any
		each(tt.v, func(x any) bool { got = append(got, x); return true })
		assert.Equal(t, tt.want, got, tt.name)
	}
	for _, v := range []any{[]any{"a", "b"}, []string{"a", "b"}, []int{1, 2}, []int64{1, 2}, [2]int{1, 2}} {
		n := 0
		each(v, func(any) bool { n++; return false })
		assert.Equal(t, 1, n, "each stops when fn returns false: %T", v)
	}
}

var errBoom = fmt.Errorf("paramlimit: boom")
