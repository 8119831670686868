package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// besideOld is a flow document trying a tighter threshold in shadow beside
// the enforcing rule of the same resource.
const besideOld = `[
{"resource":"GET /orders","count":300},
{"resource":"GET /orders","count":200,"shadow":true},
{"resource":"GET /items","count":10,"clusterConfig":{"flowId":7}}
]
`

// TestSetWhere: --where picks one of the rules of a resource by a field's
// value, a field a rule leaves out matching its zero value, nested fields
// included; a selection that matches nothing writes nothing.
func TestSetWhere(t *testing.T) {
	src := filepath.Join(t.TempDir(), "flow.json")
	seed(t, src, besideOld)

	r := bulwark(t, "set", src, "GET /orders", "shadow=false")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "2 rules match")
	assert.Contains(t, r.stderr, "--where")

	// Turn the shadow rule on, then drop the old one's threshold out of the
	// way: each --where picks one rule.
	r = bulwark(t, "set", "--yes", src, "GET /orders", "shadow=false", "--where", "shadow=true")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders")
	want := strings.Replace(besideOld, `"count":200,"shadow":true`, `"count":200`, 1) // false is left out
	waitDoc(t, src, want)
	r = bulwark(t, "set", "--yes", src, "GET /orders", "count=1000", "--where", "count=300")
	require.Equal(t, 0, r.code, r)
	want = strings.Replace(want, `"count":300`, `"count":1000`, 1)
	waitDoc(t, src, want)

	// Nested fields, and a field left out holding its zero value.
	r = bulwark(t, "set", "--yes", src, "GET /items", "count=20", "--where", "clusterConfig.flowId=7", "--where", "clusterMode=false")
	require.Equal(t, 0, r.code, r)
	want = strings.Replace(want, `"count":10,"clusterConfig"`, `"count":20,"clusterConfig"`, 1)
	waitDoc(t, src, want)

	r = bulwark(t, "set", "--yes", src, "GET /orders", "count=5", "--where", "shadow=true")
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, `no rule of resource "GET /orders" matches the selection`)
	r = bulwark(t, "set", "--yes", src, "GET /orders", "count=5", "--where", "shadow")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, `"shadow": want FIELD=VALUE`)
	r = bulwark(t, "get", src)
	assert.Equal(t, want, r.stdout, "nothing written by the failed sets")
}

// TestWritesAskOrRefuse: one rule for every command that writes. At a
// terminal it shows the change and asks; on a standard input that is not
// a terminal (a pipe, CI) it refuses without --yes, says so, and writes
// nothing. set asks like the others.
func TestWritesAskOrRefuse(t *testing.T) {
	dir := t.TempDir()
	doc := writeFile(t, dir, "flow.json", goodFlow)
	v2 := writeFile(t, t.TempDir(), "v2.json", flowV2)
	r := bulwark(t, "apply", "--yes", doc, v2) // a history to roll back
	require.Equal(t, 0, r.code, r)
	r = bulwark(t, "apply", "--yes", "--canary", "c", doc, writeFile(t, t.TempDir(), "c.json", goodFlow))
	require.Equal(t, 0, r.code, r)
	overlay := doc + ".overlay.c"

	for _, args := range [][]string{
		{"apply", doc, writeFile(t, t.TempDir(), "a.json", flowA)},
		{"set", doc, "GET /orders", "count=7"},
		{"rollback", doc, "1"},
		{"promote", doc, "c"},
		{"abort", doc, "c"},
	} {
		r := bulwark(t, args...)
		assert.Equal(t, 2, r.code, r)
		assert.Contains(t, r.stderr, "standard input is not a terminal", args)
		assert.Contains(t, r.stderr, "pass --yes", args)
		assert.Contains(t, r.stdout, "\n+++ ", "the change is shown first")
		waitDoc(t, doc, flowV2)
		assert.FileExists(t, overlay)
	}

	r = tty(t, "n\n", nil, "set", doc, "GET /orders", "count=7")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "write this to "+doc+"? [y/N]")
	assert.Contains(t, r.stderr, "not confirmed: nothing written")
	waitDoc(t, doc, flowV2)
	r = tty(t, "y\n", nil, "set", doc, "GET /orders", "count=7")
	require.Equal(t, 0, r.code, r)
	waitDoc(t, doc, strings.Replace(flowV2, `"count": 200`, `"count": 7`, 1))
}
