package zookeeper_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/zookeeper"
)

// TestRegistryEphemeral: an instance's record is an ephemeral node, so
// ZooKeeper removes it when the session of the connection that registered
// it ends (a crashed process), without a beat or a Close.
func TestRegistryEphemeral(t *testing.T) {
	srv := startZK(t)
	path := nodePath(t)
	ctx := testCtx(t, 30*time.Second)
	crashing := connect(t, srv.Addr(), connConfig{})
	src := zookeeper.New(crashing, path)
	_, err := src.Register(ctx, datasource.Instance{ID: "crashing", App: "orders"})
	require.NoError(t, err)
	viewer := zookeeper.New(connect(t, srv.Addr(), connConfig{}), path)
	defer viewer.Close()

	list, err := viewer.Instances(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "orders", list[0].App)

	crashing.Close() // ends the session: the server deletes its ephemeral nodes
	require.Eventually(t, func() bool {
		list, err := viewer.Instances(ctx)
		return err == nil && len(list) == 0
	}, 20*time.Second, 10*time.Millisecond, "the record of a closed session is removed")
	_ = src.Close() // its Delete fails: the connection is closed
}
