package main

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// instance is an engine following the rules at a source, as a service
// would, in a canary group or not.
type instance struct {
	name string
	e    *core.Engine
}

// startInstance starts an engine whose flow rules follow src (through the
// client code of this command), in the overlay of group when group is set.
func startInstance(t *testing.T, src, group string) *instance {
	t.Helper()
	ctx := context.Background()
	ctr, err := rulechange.Open(ctx, src, rulechange.Options{Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ctr.Close() })
	opts := []datasource.Option{datasource.WithReconcileInterval(ctr.Reconcile())}
	if group != "" {
		opts = append(opts, datasource.WithOverlay(group))
	}
	ds := datasource.NewReadable(ctr.Document(), converter.FlowRules(), opts...)
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	e.Flow().Register(ds.Property())
	t.Cleanup(func() { _ = ds.Close() })
	// Start keeps trying in the background when its first read fails.
	_ = ds.Start(ctx)
	name := "base instance"
	if group != "" {
		name = "instance of " + group
	}
	return &instance{name: name, e: e}
}

// count is the count of the flow rule of "GET /orders" in force, -1 when
// there is none.
func (in *instance) count() float64 {
	for _, r := range in.e.Flow().Rules() {
		if r.Resource == "GET /orders" {
			return r.Count
		}
	}
	return -1
}

// waitCount waits until every instance has count in force.
func waitCount(t *testing.T, count float64, ins ...*instance) {
	t.Helper()
	for _, in := range ins {
		require.Eventually(t, func() bool { return in.count() == count }, 30*time.Second, 20*time.Millisecond,
			"%s never had count %v (has %v)", in.name, count, in.count())
	}
}

// overlays returns bulwark status --json for groups, or for the overlays
// status lists when no group is named.
func overlays(t *testing.T, src string, groups ...string) map[string]rulechange.OverlayStatus {
	t.Helper()
	args := []string{"status", "--json"}
	if len(groups) > 0 {
		args = append(args, "--groups", strings.Join(groups, ","))
	}
	r := bulwark(t, append(args, src)...)
	require.Equal(t, 0, r.code, r)
	var sts []rulechange.OverlayStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sts), r)
	out := map[string]rulechange.OverlayStatus{}
	for _, st := range sts {
		out[st.Group] = st
	}
	return out
}

// listed waits until bulwark status SOURCE (no --groups) lists exactly
// groups, and returns its text output.
func listed(t *testing.T, src string, groups ...string) result {
	t.Helper()
	var last result
	require.Eventually(t, func() bool {
		sts := overlays(t, src)
		got := make([]string, 0, len(sts))
		for g, st := range sts {
			if !st.Exists {
				return false
			}
			got = append(got, g)
		}
		slices.Sort(got)
		if !slices.Equal(got, groups) {
			return false
		}
		last = bulwark(t, "status", src)
		return last.code == 0
	}, 30*time.Second, 100*time.Millisecond, "status never listed %q; last:\n%s", groups, &last)
	return last
}

// listsFromHistory says whether status answers from the history at src: a
// Nacos-protocol server without config search (the test server,
// PolarisMesh), and only there.
func listsFromHistory(src string) bool { return strings.HasPrefix(src, "nacos://") }

// testStatusLists: bulwark status SOURCE lists the overlays that exist,
// sorted, each with its diff against the document, and says when there is
// none; --groups shows only the groups named, with or without an overlay.
func testStatusLists(t *testing.T, src string) {
	seed(t, src, flowA)
	r := bulwark(t, "status", src)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, "no overlays beside "+src+"\n", r.stdout)
	assert.Equal(t, "[]\n", bulwark(t, "status", "--json", src).stdout)

	dir := t.TempDir()
	b := writeFile(t, dir, "b.json", flowB)
	v2 := writeFile(t, dir, "v2.json", `[{"resource":"GET /orders","count":111},{"resource":"POST /orders","count":5}]`)
	r = bulwark(t, "apply", "--canary", "canary", "--yes", src, b)
	require.Equal(t, 0, r.code, r)
	r = bulwark(t, "apply", "--canary", "eu-west_1", "--yes", src, v2)
	require.Equal(t, 0, r.code, r)
	r = listed(t, src, "canary", "eu-west_1")
	assert.Regexp(t, `^canary: overlay revision \S+: 1 rule: 1 changed\n~ GET /orders: count 111 → 222\n`+
		`eu-west_1: overlay revision \S+: 1 rule: 1 added\n\+ POST /orders: count 5\n$`, r.stdout)
	if listsFromHistory(src) {
		assert.Contains(t, r.stderr, "bulwark status: note: nacos: list the overlays of SENTINEL_GROUP/status-flow-rules: the server has no config search")
		assert.Contains(t, r.stderr, "\nbulwark status: note: showing the groups recorded in SENTINEL_GROUP/status-flow-rules.history ")
	} else {
		assert.Empty(t, r.stderr)
	}
	st := overlays(t, src)
	assert.Equal(t, []string{"+ POST /orders"}, rulechange.Lines(st["eu-west_1"].Changes))

	// An aborted group is no longer listed (from the history too: its
	// overlay is read, and gone).
	r = bulwark(t, "abort", "--yes", src, "canary")
	require.Equal(t, 0, r.code, r)
	r = listed(t, src, "eu-west_1")
	assert.NotContains(t, r.stdout, "canary")
	r = bulwark(t, "status", "--groups", "canary,eu-west_1", src)
	require.Equal(t, 0, r.code, r)
	assert.Regexp(t, `^canary: no overlay\neu-west_1: overlay revision \S+: 1 rule: 1 added\n`, r.stdout)
	assert.Empty(t, r.stderr, "--groups lists nothing")

	r = bulwark(t, "promote", "--yes", src, "eu-west_1")
	require.Equal(t, 0, r.code, r)
	listed(t, src)
	r = bulwark(t, "status", src)
	assert.Equal(t, "no overlays beside "+src+"\n", r.stdout)
}

// waitOverlay waits until the overlay of group exists or not.
func waitOverlay(t *testing.T, src, group string, exists bool) {
	t.Helper()
	require.Eventually(t, func() bool { return overlays(t, src, group)[group].Exists == exists },
		30*time.Second, 100*time.Millisecond, "the overlay of %s never had exists=%v", group, exists)
}

// testCanary is issue 15's scenario: three instances, one in group canary;
// a change applied to the canary reaches it alone; promoted, it reaches
// all; a second change, aborted, leaves the canary on the base again. The
// base is unchanged until the promotion.
func testCanary(t *testing.T, src string) {
	seed(t, src, flowA) // count 111
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", flowA)
	b := writeFile(t, dir, "b.json", flowB) // count 222
	one, two := startInstance(t, src, ""), startInstance(t, src, "")
	canary := startInstance(t, src, "canary")
	waitCount(t, 111, one, two, canary)

	// Round 1: apply to the canary, then promote.
	r := bulwark(t, "apply", "--canary", "canary", "--yes", "--author", "alice", src, b)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders: count 111 → 222\n", "the first overlay of a group is diffed against the base")
	assert.Contains(t, r.stdout, "written: "+src+" (overlay canary) revision none → ")
	waitCount(t, 222, canary)
	assert.Equal(t, 111.0, one.count())
	assert.Equal(t, 111.0, two.count())
	waitDoc(t, src, flowA)
	waitOverlay(t, src, "canary", true)
	st := overlays(t, src, "canary", "other")
	assert.False(t, st["other"].Exists)
	assert.Equal(t, []string{"~ GET /orders: count 111 → 222"}, rulechange.Lines(st["canary"].Changes))
	r = bulwark(t, "status", "--groups", "canary,other", src)
	require.Equal(t, 0, r.code, r)
	assert.Regexp(t, `^canary: overlay revision \S+: 1 rule: 1 changed\n~ GET /orders: count 111 → 222\nother: no overlay\n$`, r.stdout)

	r = bulwark(t, "promote", "--dry-run", src, "canary")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "dry run: nothing written\n")
	r = cli(t, "n\n", nil, "promote", src, "canary")
	require.Equal(t, 2, r.code, r)
	r = bulwark(t, "promote", "--yes", "--author", "bob", src, "canary")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders: count 111 → 222\n")
	assert.Contains(t, r.stdout, "removed: "+src+" (overlay canary)")
	waitDoc(t, src, flowB)
	waitCount(t, 222, one, two, canary)
	waitOverlay(t, src, "canary", false)

	// Round 2: apply to the canary, then abort.
	r = bulwark(t, "apply", "--canary", "canary", "--yes", "--author", "carol", src, a)
	require.Equal(t, 0, r.code, r)
	waitCount(t, 111, canary)
	assert.Equal(t, 222.0, one.count())
	assert.Equal(t, 222.0, two.count())
	waitOverlay(t, src, "canary", true)
	r = cli(t, "n\n", nil, "abort", src, "canary")
	require.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "not confirmed: nothing removed")
	r = bulwark(t, "abort", "--yes", "--author", "dave", src, "canary")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders: count 111 → 222\n", "abort shows what the canary returns to")
	waitCount(t, 222, canary)
	waitOverlay(t, src, "canary", false)
	r = bulwark(t, "get", src)
	assert.Equal(t, flowB, r.stdout, "abort left the base alone")
	assert.Equal(t, 222.0, one.count())
	r = bulwark(t, "abort", "--yes", src, "canary")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "nothing to remove")

	// All of it in the base's history; a canary change is not rolled back
	// into the base.
	es := historyOf(t, src, 5)
	var cmds []string
	for _, en := range es {
		cmds = append(cmds, en.Author+": "+en.Command)
	}
	assert.Equal(t, []string{"seed: apply", "alice: apply --canary canary", "bob: promote canary", "carol: apply --canary canary", "dave: abort canary"}, cmds)
	assert.Equal(t, "canary", es[4].Overlay)
	assert.Empty(t, es[2].Overlay)
	require.NotNil(t, es[4].Previous)
	assert.Equal(t, flowA, *es[4].Previous, "abort records the overlay's document")
	r = bulwark(t, "rollback", "--yes", src)
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "was to the overlay of canary group canary")
}

// testPromoteConflict: the base changes between promote's read and its
// write: nothing is written, the overlay stays, exit code 3.
func testPromoteConflict(t *testing.T, src string) {
	seed(t, src, flowA)
	dir := t.TempDir()
	b := writeFile(t, dir, "b.json", flowB)
	r := bulwark(t, "apply", "--canary", "canary", "--yes", src, b)
	require.Equal(t, 0, r.code, r)
	waitOverlay(t, src, "canary", true)
	p := start(t, nil, "promote", src, "canary")
	require.Eventually(t, func() bool { return strings.Contains(p.errOut.String(), "write this to") }, 30*time.Second, 20*time.Millisecond,
		"stdout: %s\nstderr: %s", p.out, p.errOut)
	r = bulwark(t, "apply", "--yes", src, writeFile(t, dir, "v2.json", flowV2))
	require.Equal(t, 0, r.code, r)
	_, err := io.WriteString(p.stdin, "y\n")
	require.NoError(t, err)
	rp := p.wait(t)
	require.Equal(t, 3, rp.code, rp)
	assert.Contains(t, rp.stderr, "nothing written")
	waitDoc(t, src, flowV2)
	assert.True(t, overlays(t, src, "canary")["canary"].Exists, "the overlay stays")

	r = bulwark(t, "apply", "--canary", "bad/group", "--yes", src, b)
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, `canary group "bad/group": want 1 to 64 letters, digits, '-' or '_'`)
	r = listed(t, src, "canary")
	assert.Regexp(t, `^canary: overlay revision \S+: `, r.stdout)
	assert.Contains(t, r.stdout, "\n~ GET /orders: count 200 → 222\n")
}
