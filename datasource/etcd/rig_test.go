package etcd_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/etcd"
)

// rig is a real engine whose flow rules follow one etcd key.
type rig struct {
	engine *core.Engine
	ds     *datasource.Readable[[]flow.Rule]
}

func flowCodec() converter.Codec[[]flow.Rule] { return converter.FlowRules() }

// newRig starts a Readable over key with quick retries (then opts) and
// registers it with a fresh engine; both are closed at cleanup.
func newRig(t *testing.T, cli *clientv3.Client, key string, opts ...datasource.Option) *rig {
	t.Helper()
	e := core.NewEngine()
	all := append([]datasource.Option{
		datasource.WithName(t.Name()),
		datasource.WithBackoff(50*time.Millisecond, time.Second),
		datasource.WithReadTimeout(2 * time.Second),
	}, opts...)
	ds := datasource.NewReadable(etcd.New(cli, key), flowCodec(), all...)
	e.Flow().Register(ds.Property())
	t.Cleanup(func() {
		require.NoError(t, ds.Close())
		require.NoError(t, e.Close())
	})
	require.NoError(t, ds.Start(testCtx(t)))
	return &rig{engine: e, ds: ds}
}

// count returns the threshold of resource's first flow rule, or -1.
func (r *rig) count(resource string) float64 {
	for _, rule := range r.engine.Flow().Rules() {
		if rule.Resource == resource {
			return rule.Count
		}
	}
	return -1
}

func (r *rig) waitCount(t *testing.T, resource string, want float64) {
	t.Helper()
	require.Eventually(t, func() bool { return r.count(resource) == want }, 30*time.Second, 2*time.Millisecond,
		"rule %s count %v; have %v; status %+v", resource, want, r.engine.Flow().Rules(), r.ds.Status())
}

func (r *rig) waitNoRules(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.engine.Flow().Rules()) == 0 }, 30*time.Second, 2*time.Millisecond,
		"no rules; have %v; status %+v", r.engine.Flow().Rules(), r.ds.Status())
}

// setCount returns an Update function that sets resource's threshold,
// adding the rule if needed.
func setCount(resource string, n float64) func([]flow.Rule) ([]flow.Rule, error) {
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

func flowDoc(resource string, count int) string {
	return fmt.Sprintf(`[{"resource":%q,"count":%d}]`, resource, count)
}
