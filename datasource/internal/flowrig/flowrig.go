// Package flowrig is the test rig that the backends' tests share: a real
// engine whose flow rules follow one datasource.Source through a
// Readable, the waits on what the engine runs, and the propagation
// measure (write to rule in force).
package flowrig

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
)

// Timeout bounds every wait of a Rig and its Start. Waits end as soon as
// their condition holds; the timeout only fails a stuck test.
const Timeout = 30 * time.Second

// Rig is an engine whose flow rules come from a Readable.
type Rig struct {
	Engine *core.Engine
	DS     *datasource.Readable[[]flow.Rule]
}

// Start makes an engine and a Readable over src with the flow-rule codec,
// named after the test, with quick retries (backoff 50 ms to 500 ms, reads
// bounded by 2 s) and then opts (which win), registers the Readable with
// the engine and starts it: Start must succeed. Both are closed at the
// test's cleanup, and their Close must succeed.
func Start(tb testing.TB, src datasource.Source, opts ...datasource.Option) *Rig {
	tb.Helper()
	e := core.NewEngine()
	all := append([]datasource.Option{
		datasource.WithName(tb.Name()),
		datasource.WithBackoff(50*time.Millisecond, 500*time.Millisecond),
		datasource.WithReadTimeout(2 * time.Second),
	}, opts...)
	ds := datasource.NewReadable(src, converter.FlowRules(), all...)
	e.Flow().Register(ds.Property())
	tb.Cleanup(func() {
		require.NoError(tb, ds.Close(), "Readable.Close")
		require.NoError(tb, e.Close(), "Engine.Close")
	})
	ctx, cancel := context.WithTimeout(tb.Context(), Timeout)
	defer cancel()
	require.NoError(tb, ds.Start(ctx), "Readable.Start")
	return &Rig{Engine: e, DS: ds}
}

// Count returns the threshold of resource's first flow rule, or -1 when
// no rule names resource.
func (r *Rig) Count(resource string) float64 {
	for _, rule := range r.Engine.Flow().Rules() {
		if rule.Resource == resource {
			return rule.Count
		}
	}
	return -1
}

// WaitCount waits until resource's rule has the threshold want (-1: no
// rule for resource).
func (r *Rig) WaitCount(tb testing.TB, resource string, want float64) {
	tb.Helper()
	require.Eventually(tb, func() bool { return r.Count(resource) == want }, Timeout, 2*time.Millisecond,
		"rule %s count %v; rules %v; status %+v", resource, want, r.Engine.Flow().Rules(), r.DS.Status())
}

// WaitNoRules waits until the engine runs no flow rule.
func (r *Rig) WaitNoRules(tb testing.TB) {
	tb.Helper()
	require.Eventually(tb, func() bool { return len(r.Engine.Flow().Rules()) == 0 }, Timeout, 2*time.Millisecond,
		"no rules; rules %v; status %+v", r.Engine.Flow().Rules(), r.DS.Status())
}

// WaitStatus waits until the Readable's Status satisfies cond; what names
// the condition in the failure.
func (r *Rig) WaitStatus(tb testing.TB, what string, cond func(datasource.Status) bool) {
	tb.Helper()
	require.Eventually(tb, func() bool { return cond(r.DS.Status()) }, Timeout, 2*time.Millisecond,
		"status: %s; status %+v", what, r.DS.Status())
}

// WaitWatching waits until a Watch of the Readable runs.
func (r *Rig) WaitWatching(tb testing.TB) {
	tb.Helper()
	r.WaitStatus(tb, "watching", func(st datasource.Status) bool { return st.Watching })
}

// Propagation measures n updates made by write(i), for i from 2 to n+1:
// each from the moment write is called to the moment the engine's flow
// rules hold a rule for resource at count i (RuleManager.OnChange). The
// document in force when it is called must not have count i for any of
// them. It fails the test when an update is not in force within Timeout.
func (r *Rig) Propagation(tb testing.TB, resource string, n int, write func(i int)) []time.Duration {
	tb.Helper()
	applied := make(chan float64, 256)
	cancel := r.Engine.Flow().OnChange(func(c core.RuleChange[flow.Rule]) {
		for _, rule := range c.New {
			if rule.Resource == resource {
				select {
				case applied <- rule.Count:
				default: // never blocks the engine; a lost value is waited for in vain, and fails
				}
			}
		}
	})
	defer cancel()
	timeout := time.NewTimer(Timeout)
	defer timeout.Stop()
	lat := make([]time.Duration, 0, n)
	for i := 2; i < n+2; i++ {
		start := time.Now()
		write(i)
		timeout.Reset(Timeout)
		for got := 0.0; got != float64(i); {
			select {
			case got = <-applied:
			case <-timeout.C:
				tb.Fatalf("update %d not in force within %v; rules %v; status %+v", i, Timeout, r.Engine.Flow().Rules(), r.DS.Status())
			}
		}
		lat = append(lat, time.Since(start))
	}
	return lat
}

// Doc is a Java Sentinel flow rule document: one QPS rule, resource at
// count.
func Doc(resource string, count int) string {
	return fmt.Sprintf(`[{"resource":%q,"count":%d}]`, resource, count)
}

// SetCount returns an update function (for Writable.Update) that sets
// resource's threshold to n, adding a QPS rule for it if there is none.
func SetCount(resource string, n float64) func([]flow.Rule) ([]flow.Rule, error) {
	return func(rules []flow.Rule) ([]flow.Rule, error) {
		rules = slices.Clone(rules)
		for i := range rules {
			if rules[i].Resource == resource {
				rules[i].Count = n
				return rules, nil
			}
		}
		return append(rules, flow.Rule{Resource: resource, Grade: flow.GradeQPS, Count: n, LimitApp: "default"}), nil
	}
}
