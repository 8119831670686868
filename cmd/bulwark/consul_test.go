package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/integration"
)

// TestConsulToken: on an agent whose ACLs deny by default, the token is
// --password or BULWARK_PASSWORD, else CONSUL_HTTP_TOKEN; without one, the
// command fails and says that permission was denied, and no token is
// ever printed.
func TestConsulToken(t *testing.T) {
	srv := integration.StartConsul(t, integration.WithConsulACL("root-s3cret"))
	src := "consul://" + srv.Addr() + "/bulwark/svc/flow"
	f := writeFile(t, t.TempDir(), "flow.json", goodFlow)

	r := cli(t, "", []string{"BULWARK_PASSWORD=root-s3cret"}, "apply", "--yes", "--author", "ci", src, f)
	require.Equal(t, 0, r.code, r)

	r = bulwark(t, "get", "--password", "root-s3cret", src)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, goodFlow, r.stdout)

	r = cli(t, "", []string{"CONSUL_HTTP_TOKEN=root-s3cret"}, "get", src)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, goodFlow, r.stdout)

	r = cli(t, "", []string{"CONSUL_HTTP_TOKEN="}, "get", src)
	assert.NotEqual(t, 0, r.code, r)
	assert.Contains(t, r.stderr, "permission denied")
	assert.Contains(t, r.stderr, "bulwark/svc/flow")
	t.Log(r)

	r = cli(t, "", []string{"CONSUL_HTTP_TOKEN=wrong"}, "apply", "--yes", "--author", "ci", "--password", "wrong", src, f)
	assert.NotEqual(t, 0, r.code, r)
	for _, out := range []string{r.stdout, r.stderr} {
		assert.NotContains(t, out, "root-s3cret")
		assert.NotContains(t, out, "wrong")
	}
}
