// Package kvcheck is the check of reads and compare-and-set writes that
// the tests of the key-value backends whose revision is the key's
// modification number (etcd's mod revision, Consul's ModifyIndex) share:
// the same calls on a fresh key, the same conflicts with the same words,
// and what a closed Source refuses. The conformance suite
// (datasourcetest) checks what every backend promises; this checks what
// these backends say beyond it.
package kvcheck

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
)

// Source is a backend's Source under check: a Source, Watcher and Sink.
type Source interface {
	datasource.Source
	datasource.Watcher
	datasource.Sink
}

// Key is the key a Source reads, as another client of the store reaches
// it.
type Key struct {
	// Revision returns the key's modification number as the store reports
	// it, formatted as the Source's revisions are; the key exists.
	Revision func(ctx context.Context) string
	// Delete removes the key.
	Delete func(ctx context.Context) error
}

// ReadWrite checks src over a key that does not exist yet, then closes
// it:
//
//   - a Read of the absent key is a missing document;
//   - Write at "" creates it and returns the snapshot a Read then returns,
//     whose revision is the key's modification number;
//   - Write at "" over the key, at a revision that is not the key's, and at
//     one that is no revision at all are conflicts, named "key is at
//     revision R, expected absent" and "expected at revision 1";
//   - Write at the current revision succeeds with a new revision;
//   - if src has a Delete(ctx, expectRevision) method: Delete at a stale
//     revision is a conflict (and, with the key deleted by another client,
//     deleting it again is not an error);
//   - Write at a revision of a key that another client deleted is a
//     conflict, named "key is absent";
//   - after Close, Read, Write and Watch return datasource.ErrClosed.
func ReadWrite(t *testing.T, ctx context.Context, src Source, key Key) {
	t.Helper()
	snap, err := src.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, datasource.Snapshot{Missing: true}, snap)

	created, err := src.Write(ctx, []byte(`["a"]`), "")
	require.NoError(t, err)
	assert.Equal(t, key.Revision(ctx), created.Revision, "the revision is the key's modification number")
	assert.Equal(t, `["a"]`, string(created.Data))

	snap, err = src.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, created, snap, "Write returns what Read now returns")

	_, err = src.Write(ctx, []byte(`["b"]`), "")
	require.ErrorIs(t, err, datasource.ErrConflict, "create over an existing key")
	assert.ErrorContains(t, err, "key is at revision "+created.Revision+", expected absent")
	_, err = src.Write(ctx, []byte(`["b"]`), "1")
	require.ErrorIs(t, err, datasource.ErrConflict)
	assert.ErrorContains(t, err, "expected at revision 1")
	_, err = src.Write(ctx, []byte(`["b"]`), "not-a-revision")
	require.ErrorIs(t, err, datasource.ErrConflict)

	next, err := src.Write(ctx, []byte(`["b"]`), created.Revision)
	require.NoError(t, err)
	assert.NotEqual(t, created.Revision, next.Revision)

	d, canDelete := src.(interface {
		Delete(ctx context.Context, expectRevision string) error
	})
	if canDelete {
		require.ErrorIs(t, d.Delete(ctx, created.Revision), datasource.ErrConflict, "delete at a stale revision")
	}
	require.NoError(t, key.Delete(ctx))
	_, err = src.Write(ctx, []byte(`["c"]`), next.Revision)
	require.ErrorIs(t, err, datasource.ErrConflict, "update of a deleted key")
	assert.ErrorContains(t, err, "key is absent")
	if canDelete {
		require.NoError(t, d.Delete(ctx, next.Revision), "deleting an absent key is not an error")
	}

	require.NoError(t, src.Close())
	_, err = src.Read(ctx)
	require.ErrorIs(t, err, datasource.ErrClosed)
	_, err = src.Write(ctx, nil, "")
	require.ErrorIs(t, err, datasource.ErrClosed)
	require.ErrorIs(t, src.Watch(ctx, datasource.Snapshot{}, func(datasource.Snapshot) {}), datasource.ErrClosed)
}
