package redis_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// enterAt returns once the wall clock is at least ms milliseconds into a
// second (Redis's windows are aligned to its clock, which is this
// machine's).
func enterAt(t *testing.T, ms int64) {
	t.Helper()
	require.Eventually(t, func() bool { return time.Now().UnixMilli()%1000 >= ms }, 2*time.Second, time.Millisecond)
}

func tryEnter(e *core.Engine, resource string, opts ...core.EntryOption) bool {
	en, err := e.Enter(context.Background(), resource, opts...)
	if err != nil {
		return false
	}
	en.Exit()
	return true
}

// WithCount(n) takes n tokens of the flow's budget.
func TestWithCount(t *testing.T) {
	srv := startRedis(t)
	in := newInstance(t, srv.Addr(), []flow.Rule{clusterRule("r", nextFlow(), 10, true, false)}, redis.WithTimeout(accuracyTimeout))
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 5, "could not run the entries within one second")
		waitSecond(t, time.Now().Unix())
		sec := time.Now().Unix()
		got := []bool{
			tryEnter(in.eng, "r", core.WithCount(4)),
			tryEnter(in.eng, "r", core.WithCount(4)),
			tryEnter(in.eng, "r", core.WithCount(4)),
			tryEnter(in.eng, "r", core.WithCount(2)),
			tryEnter(in.eng, "r"),
		}
		if time.Now().Unix() != sec {
			continue // a window boundary fell in between: again
		}
		assert.Equal(t, []bool{true, true, false, true, false}, got)
		break
	}
	assert.Zero(t, in.ts.Health().Fallbacks)
}

// A prioritized entry refused in this window takes a token of the next one
// when that is at most 500 ms away, and waits for it.
func TestPrioritized(t *testing.T) {
	srv := startRedis(t)
	in := newInstance(t, srv.Addr(), []flow.Rule{clusterRule("r", nextFlow(), 5, true, false)}, redis.WithTimeout(accuracyTimeout))
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 5, "could not spend a window's budget in time")
		waitSecond(t, time.Now().Unix())
		enterAt(t, 600)
		sec := time.Now().Unix()
		n := 0
		for range 8 {
			if tryEnter(in.eng, "r") {
				n++
			}
		}
		if time.Now().Unix() != sec || time.Now().UnixMilli()%1000 > 950 {
			continue
		}
		require.Equal(t, 5, n)
		assert.False(t, tryEnter(in.eng, "r"), "an ordinary entry is refused")
		assert.True(t, tryEnter(in.eng, "r", core.WithPriority()), "a prioritized entry waits for the next window")
		assert.Greater(t, time.Now().Unix(), sec, "it ran in the next window")
		n = 0
		for range 8 {
			if tryEnter(in.eng, "r") {
				n++
			}
		}
		if time.Now().Unix() == sec+1 {
			assert.Equal(t, 4, n, "the prioritized entry's token came out of this window")
		}
		break
	}
	assert.Zero(t, in.ts.Health().Fallbacks)
}

// A flow's keys carry the prefix and the flow id as a hash tag; services
// with different prefixes never share a budget.
func TestKeyPrefix(t *testing.T) {
	srv := startRedis(t)
	id := nextFlow()
	rules := []flow.Rule{clusterRule("r", id, 3, true, false)}
	a := newInstance(t, srv.Addr(), rules, redis.WithTimeout(accuracyTimeout), redis.WithKeyPrefix("svc-a"))
	b := newInstance(t, srv.Addr(), rules, redis.WithTimeout(accuracyTimeout), redis.WithKeyPrefix("svc-b"))
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 5, "could not run the entries within one second")
		waitSecond(t, time.Now().Unix())
		sec := time.Now().Unix()
		na, nb := 0, 0
		for range 5 {
			if tryEnter(a.eng, "r") {
				na++
			}
			if tryEnter(b.eng, "r") {
				nb++
			}
		}
		if time.Now().Unix() != sec {
			continue
		}
		assert.Equal(t, 3, na)
		assert.Equal(t, 3, nb)
		break
	}
	keys, err := a.client.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	tag := "{" + strconv.FormatInt(id, 10) + "}"
	assert.ElementsMatch(t, []string{
		"svc-a:" + tag + ":tokens", "svc-a:" + tag + ":instances",
		"svc-b:" + tag + ":tokens", "svc-b:" + tag + ":instances",
	}, keys)
}

// After Close the budgets answer Fail at once: the rules fall back.
func TestClosedServiceFallsBack(t *testing.T) {
	srv := startRedis(t)
	in := newInstance(t, srv.Addr(), []flow.Rule{
		clusterRule("fb", nextFlow(), 2, true, true),
		clusterRule("pass", nextFlow(), 2, true, false),
	})
	require.NoError(t, in.ts.Close())
	require.NoError(t, in.ts.Close(), "Close is idempotent")
	n := 0
	for range 5 {
		if tryEnter(in.eng, "pass") {
			n++
		}
	}
	assert.Equal(t, 5, n, "no fallback: every entry passes")
	n = 0
	for range 5 {
		if tryEnter(in.eng, "fb") {
			n++
		}
	}
	// 2 per second, unless the five entries straddle a window boundary.
	assert.True(t, n >= 2 && n <= 4, "fallback: the local check with the rule's count; admitted %d of 5", n)
	assert.Equal(t, uint64(10), in.ts.Health().Fallbacks)
}
