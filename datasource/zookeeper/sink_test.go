package zookeeper_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	sizelimit "github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/zookeeper"
)

// A create races another writer that sets the node as soon as it exists.
// Write must return what it wrote, with the revision of its own write: a
// compare-and-set with that revision then fails, because the other writer
// changed the node after it. (Reading the node back after the create
// reported the other writer's document as its own: 196 of 200.)
func TestCreateReportsOnlyItsOwnWrite(t *testing.T) {
	srv := startZK(t)
	ctx := testCtx(t, 2*time.Minute)
	base := nodePath(t)
	conn := connect(t, srv.Addr(), connConfig{})
	racer := connect(t, srv.Addr(), connConfig{})
	require.NoError(t, putNode(conn, base, nil))

	const rounds = 200
	var foreign, overwrote int
	for i := range rounds {
		path := fmt.Sprintf("%s/n%d", base, i)
		mine := fmt.Appendf(nil, `[{"resource":"mine","count":%d}]`, i)
		theirs := fmt.Appendf(nil, `[{"resource":"theirs","count":%d}]`, i)
		// The other writer: set the node the moment it exists.
		racing := make(chan error, 1)
		go func() {
			for ctx.Err() == nil {
				_, err := racer.Set(path, theirs, -1)
				if !errors.Is(err, zk.ErrNoNode) {
					racing <- err
					return
				}
			}
			racing <- ctx.Err()
		}()
		src := zookeeper.New(conn, path)
		snap, err := src.Write(ctx, mine, "")
		require.NoError(t, err, "round %d: create", i)
		require.NoError(t, <-racing, "round %d: the other writer's set", i)
		if string(snap.Data) != string(mine) {
			foreign++
		}
		// The other writer set the node after the create: the create's
		// revision is no longer the node's.
		_, err = src.Write(ctx, []byte(`[]`), snap.Revision)
		if !errors.Is(err, datasource.ErrConflict) {
			require.NoError(t, err, "round %d: compare-and-set", i)
			overwrote++
		}
	}
	t.Logf("%d creates racing a writer: %d returned the other writer's document, %d compare-and-sets with the returned revision overwrote it", rounds, foreign, overwrote)
	assert.Zero(t, foreign, "creates that returned the other writer's document")
	assert.Zero(t, overwrote, "compare-and-sets with the create's revision that overwrote the other writer")
}

// A create with no racer returns the same snapshot a Read returns, and its
// revision works for the next compare-and-set.
func TestCreateRevisionIsReadRevision(t *testing.T) {
	srv := startZK(t)
	ctx := testCtx(t, time.Minute)
	path := nodePath(t) + "/deep/node" // parents created too
	src := zookeeper.New(connect(t, srv.Addr(), connConfig{}), path)
	created, err := src.Write(ctx, flowDoc(1), "")
	require.NoError(t, err)
	read, err := src.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, read, created)
	_, err = src.Write(ctx, flowDoc(2), "")
	require.ErrorIs(t, err, datasource.ErrConflict, "a second create")
	next, err := src.Write(ctx, flowDoc(3), created.Revision)
	require.NoError(t, err)
	assert.Equal(t, string(flowDoc(3)), string(next.Data))
}

// A node larger than the read limit is refused before its data is
// fetched; one at the limit is read.
func TestReadLimit(t *testing.T) {
	srv := startZK(t)
	ctx := testCtx(t, time.Minute)
	path := nodePath(t)
	conn := connect(t, srv.Addr(), connConfig{})
	src := zookeeper.New(conn, path)
	const limit = 100
	at := make([]byte, limit)
	for i := range at {
		at[i] = 'x'
	}
	require.NoError(t, putNode(conn, path, at))
	snap, err := src.Read(sizelimit.With(ctx, limit))
	require.NoError(t, err)
	assert.Len(t, snap.Data, limit)

	require.NoError(t, putNode(conn, path, append(at, 'x')))
	_, err = src.Read(sizelimit.With(ctx, limit))
	require.ErrorIs(t, err, datasource.ErrTooLarge)
	assert.ErrorContains(t, err, path)
	t.Logf("over the limit: %v", err)

	// No limit in the context: the default (4 MiB) applies.
	snap, err = src.Read(ctx)
	require.NoError(t, err)
	assert.Len(t, snap.Data, limit+1)
}

func TestString(t *testing.T) {
	a := zookeeper.New(nil, "/bulwark/flow", zookeeper.WithServers("zk2.example:2181", "zk1.example"))
	assert.Equal(t, "zk://zk1.example:2181,zk2.example:2181/bulwark/flow", a.String())
	b := zookeeper.New(nil, "/bulwark/flow", zookeeper.WithServers("zk3.example:2181"))
	assert.NotEqual(t, a.String(), b.String(), "one path on two ensembles")
	assert.Equal(t, "zk:///bulwark/flow", zookeeper.New(nil, "/bulwark/flow").String())
}
