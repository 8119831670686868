package datasource_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
)

// The author of a Writable's write reaches the rule event of the revision
// that holds it; a change by another client names nobody.
func TestWritableAuthorReachesTheRuleEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.json")
	require.NoError(t, os.WriteFile(path, []byte(`[]`), 0o644))
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	r := datasource.NewReadable(file.New(path), converter.FlowRules(), datasource.WithName("flow"))
	e.Flow().Register(r.Property())
	require.NoError(t, r.Start(t.Context()))
	t.Cleanup(func() { _ = r.Close() })

	w := datasource.NewWritable(file.New(path), converter.FlowRules(),
		datasource.WaitApplied(r, 10*time.Second), datasource.WithAuthor("alice"))
	require.NoError(t, w.Update(t.Context(), func(rs []flow.Rule) ([]flow.Rule, error) {
		return append(rs, flow.Rule{Resource: "GET /orders", Count: 5}), nil
	}))
	ev := lastEvent(t, e, func(ev core.RuleEvent) bool { return len(ev.Added) == 1 })
	assert.Equal(t, "alice", ev.Source.Author)
	assert.Equal(t, "flow", ev.Source.Name)
	assert.Equal(t, r.Status().Revision, ev.Source.Revision)

	// Another client's edit: no author.
	require.NoError(t, os.WriteFile(path+".tmp", []byte(`[{"resource":"GET /orders","count":7}]`), 0o644))
	require.NoError(t, os.Rename(path+".tmp", path))
	ev = lastEvent(t, e, func(ev core.RuleEvent) bool { return len(ev.Changed) == 1 })
	assert.Empty(t, ev.Source.Author)
	assert.Equal(t, []string{"GET /orders: count 5 → 7"}, ev.Changed)
}

// lastEvent waits for a rule event that match accepts and returns the
// newest such.
func lastEvent(t *testing.T, e *core.Engine, match func(core.RuleEvent) bool) core.RuleEvent {
	t.Helper()
	var got core.RuleEvent
	require.Eventually(t, func() bool {
		evs := e.RuleEvents()
		for j := len(evs) - 1; j >= 0; j-- {
			if match(evs[j]) {
				got = evs[j]
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	return got
}
