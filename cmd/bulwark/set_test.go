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
	r = bulwark(t, "set", src, "GET /orders", "shadow=false", "--where", "shadow=true")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders")
	want := strings.Replace(besideOld, `"count":200,"shadow":true`, `"count":200`, 1) // false is left out
	waitDoc(t, src, want)
	r = bulwark(t, "set", src, "GET /orders", "count=1000", "--where", "count=300")
	require.Equal(t, 0, r.code, r)
	want = strings.Replace(want, `"count":300`, `"count":1000`, 1)
	waitDoc(t, src, want)

	// Nested fields, and a field left out holding its zero value.
	r = bulwark(t, "set", src, "GET /items", "count=20", "--where", "clusterConfig.flowId=7", "--where", "clusterMode=false")
	require.Equal(t, 0, r.code, r)
	want = strings.Replace(want, `"count":10,"clusterConfig"`, `"count":20,"clusterConfig"`, 1)
	waitDoc(t, src, want)

	r = bulwark(t, "set", src, "GET /orders", "count=5", "--where", "shadow=true")
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, `no rule of resource "GET /orders" matches the selection`)
	r = bulwark(t, "set", src, "GET /orders", "count=5", "--where", "shadow")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, `"shadow": want FIELD=VALUE`)
	r = bulwark(t, "get", src)
	assert.Equal(t, want, r.stdout, "nothing written by the failed sets")
}
