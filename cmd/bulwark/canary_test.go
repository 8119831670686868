package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
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
	ctr, err := openCenter(ctx, src, &options{timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(ctr.Close)
	opts := []datasource.Option{datasource.WithReconcileInterval(ctr.reconcile)}
	if group != "" {
		opts = append(opts, datasource.WithOverlay(group))
	}
	ds := datasource.NewReadable(ctr.doc, converter.FlowRules(), opts...)
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

// overlays returns bulwark status --json for groups.
func overlays(t *testing.T, src string, groups ...string) map[string]overlayStatus {
	t.Helper()
	r := bulwark(t, "status", "--json", "--groups", strings.Join(groups, ","), src)
	require.Equal(t, 0, r.code, r)
	var sts []overlayStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sts), r)
	out := map[string]overlayStatus{}
	for _, st := range sts {
		out[st.Group] = st
	}
	return out
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
	assert.Equal(t, []string{"~ GET /orders: count 111 → 222"}, diffLines(st["canary"].Changes))
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
	r = bulwark(t, "status", src)
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "--groups is required")
}
