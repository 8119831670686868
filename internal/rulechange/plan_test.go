package rulechange

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
)

const (
	docA = `[{"resource":"GET /orders","count":111}]`
	docB = `[{"resource":"GET /orders","count":222}]`
)

// apply plans and carries next to c (group: to its overlay) by author.
func apply(t *testing.T, c *Center, next, group, author string) Result {
	t.Helper()
	ctx := context.Background()
	k, err := PickKind("", []byte(next), c.Name())
	require.NoError(t, err)
	p, err := PlanApply(ctx, c, k, []byte(next), "next.json", group)
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Carry(ctx, author, 0)
	require.NoError(t, err)
	require.NoError(t, res.HistoryErr)
	return res
}

// TestPlansOnAFile: apply, a conflicting write, history, rollback, and a
// canary group's apply, status, promote and abort, against a real file,
// as the CLI and the console both do them.
func TestPlansOnAFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orders-flow.json")
	c, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	defer c.Close()

	res := apply(t, c, docA, "", "alice")
	assert.Equal(t, 1, res.Seq)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, docA, string(got))

	// Two plans made from the same read: the second one conflicts.
	k, _ := KindNamed("flow")
	cur, err := c.Read(ctx)
	require.NoError(t, err)
	p1, err := NewPlan(c, k, cur, []byte(docB), "b.json", "edit")
	require.NoError(t, err)
	require.Len(t, p1.Changes, 1)
	assert.Equal(t, "changed", p1.Changes[0].Op)
	assert.Equal(t, []FieldChange{{Field: "count", From: []byte("111"), To: []byte("222")}}, p1.Changes[0].Fields)
	p2, err := NewPlan(c, k, cur, []byte(`[]`), "empty.json", "edit")
	require.NoError(t, err)
	_, err = p1.Carry(ctx, "bob", 0)
	require.NoError(t, err)
	_, err = p2.Carry(ctx, "carol", 0)
	require.ErrorIs(t, err, datasource.ErrConflict)

	es, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, es, 2, "the conflicting write is not recorded")
	assert.Equal(t, "bob", es[1].Author)
	assert.Equal(t, []string{"~ GET /orders: count 111 → 222"}, es[1].Diff)
	require.NotNil(t, es[1].Previous)
	assert.Equal(t, docA, *es[1].Previous)

	// Roll back bob's change.
	p, err := PlanRollback(ctx, c, "", 0)
	require.NoError(t, err)
	assert.Equal(t, "rollback 2", p.Command)
	_, err = p.Carry(ctx, "dave", 0)
	require.NoError(t, err)
	got, _ = os.ReadFile(path)
	assert.Equal(t, docA, string(got))
	_, err = PlanRollback(ctx, c, "", 99)
	require.ErrorIs(t, err, ErrArgument)

	// A canary group: its first overlay is diffed against the document.
	k, _ = KindNamed("flow")
	p, err = PlanApply(ctx, c, k, []byte(docB), "b.json", "canary")
	require.NoError(t, err)
	assert.Equal(t, []string{"~ GET /orders: count 111 → 222"}, Lines(p.Changes))
	_, err = p.Carry(ctx, "erin", 0)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	base, err := c.Read(ctx)
	require.NoError(t, err)
	st, err := c.Status(ctx, base, "canary", "")
	require.NoError(t, err)
	assert.True(t, st.Exists)
	assert.Equal(t, []string{"~ GET /orders: count 111 → 222"}, Lines(st.Changes))
	groups, _, err := c.OverlayGroups(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"canary"}, groups)

	p, err = PlanPromote(ctx, c, "canary", "")
	require.NoError(t, err)
	_, err = p.Carry(ctx, "frank", 0)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	got, _ = os.ReadFile(path)
	assert.Equal(t, docB, string(got))
	st, err = c.Status(ctx, base, "canary", "")
	require.NoError(t, err)
	assert.False(t, st.Exists, "promote removed the overlay")

	apply(t, c, docA, "canary", "gina")
	p, err = PlanAbort(ctx, c, "canary", "")
	require.NoError(t, err)
	assert.False(t, p.Empty())
	assert.Equal(t, []string{"~ GET /orders: count 111 → 222"}, Lines(p.Changes), "what the group returns to")
	_, err = p.Carry(ctx, "hal", 0)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	p, err = PlanAbort(ctx, c, "canary", "")
	require.NoError(t, err)
	assert.True(t, p.Empty(), "no overlay left")
	require.NoError(t, p.Close())

	es, err = c.History(ctx)
	require.NoError(t, err)
	var cmds []string
	for _, en := range es {
		cmds = append(cmds, en.Author+": "+en.Command)
	}
	assert.Equal(t, []string{"alice: apply", "bob: edit", "dave: rollback 2", "erin: apply --canary canary",
		"frank: promote canary", "gina: apply --canary canary", "hal: abort canary"}, cmds)

	_, err = c.Overlay("bad/group")
	require.ErrorIs(t, err, ErrArgument)
	_, err = PlanApply(ctx, c, k, []byte(`[{"resource":"a","count":-1}]`), "bad.json", "")
	require.ErrorIs(t, err, ErrInvalid)
}

// TestSet: PlanSet changes the fields of the rule selected and keeps the
// dashboard fields and the other rules' text.
func TestSet(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "flow.json")
	doc := "[\n{\"id\":3,\"resource\":\"GET /orders\",\"count\":50},\n{\"resource\":\"GET /items\",\"count\":10}\n]\n"
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	c, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	defer c.Close()
	as, err := ParseAssignments([]string{"count=250", "controlBehavior=warmUp"})
	require.NoError(t, err)
	p, err := PlanSet(ctx, c, "", Selector{Resource: "GET /orders"}, as, "after set", "set GET /orders count=250")
	require.NoError(t, err)
	assert.Equal(t, []string{"~ GET /orders: count 50 → 250, controlBehavior 0 → 1"}, Lines(p.Changes))
	_, err = p.Carry(ctx, "ivy", 0)
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	assert.Equal(t, "[\n{\"id\":3,\"resource\":\"GET /orders\",\"count\":250,\"controlBehavior\":1},\n{\"resource\":\"GET /items\",\"count\":10}\n]\n", string(got))

	_, err = PlanSet(ctx, c, "", Selector{Resource: "GET /nothing"}, as, "", "")
	require.ErrorIs(t, err, ErrInvalid)
	as, _ = ParseAssignments([]string{"count=-1"})
	_, err = PlanSet(ctx, c, "", Selector{Resource: "GET /orders"}, as, "", "")
	require.ErrorIs(t, err, ErrInvalid)
}

// TestOpenRefusesBadSources: malformed sources are ErrArgument and never
// echo credentials.
func TestOpenRefusesBadSources(t *testing.T) {
	for _, src := range []string{"etcd://user:s3cret@127.0.0.1:2379/k", "ftp://x/y", "etcd://127.0.0.1:2379", "redis://127.0.0.1:6379/k?db=x"} {
		_, err := Open(context.Background(), src, Options{})
		require.ErrorIs(t, err, ErrArgument, src)
		assert.NotContains(t, err.Error(), "s3cret")
	}
}
