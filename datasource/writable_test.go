package datasource_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
)

func TestWriteReadsFirstThenCAS(t *testing.T) {
	f := &fake{}
	f.set(doc("a"), "r1")
	w := datasource.NewWritable(f, codec{})
	require.NoError(t, w.Write(t.Context(), []string{"b"}))
	got, err := w.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, got)

	f.set(doc("external"), "r9")
	err = w.Write(t.Context(), []string{"c"})
	require.ErrorIs(t, err, datasource.ErrConflict)
	assert.ErrorContains(t, err, "datasource: ")
	// After a conflict the Writable reads again: the next Write is a
	// conscious overwrite.
	require.NoError(t, w.Write(t.Context(), []string{"c"}))
}

func TestWriteCreatesMissing(t *testing.T) {
	f := &fake{}
	f.setMissing()
	w := datasource.NewWritable(f, codec{})
	require.NoError(t, w.Write(t.Context(), []string{"new"}))
	snap, _ := f.Read(t.Context())
	assert.JSONEq(t, `["new"]`, string(snap.Data))
}

func TestUpdateGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		calls := 0
		w := datasource.NewWritable(conflicting{f}, codec{}, datasource.WithUpdateAttempts(3))
		err := w.Update(t.Context(), func(v []string) ([]string, error) { calls++; return append(v, "x"), nil })
		require.ErrorIs(t, err, datasource.ErrConflict)
		assert.ErrorContains(t, err, "gave up after 3 attempts")
		assert.Equal(t, 3, calls)
	})
}

func TestUpdateFnErrorAndNoop(t *testing.T) {
	f := &fake{}
	f.set(doc("a"), "1")
	w := datasource.NewWritable(f, codec{})
	boom := errors.New("boom")
	require.ErrorIs(t, w.Update(t.Context(), func([]string) ([]string, error) { return nil, boom }), boom)
	require.NoError(t, w.Update(t.Context(), func(v []string) ([]string, error) { return v, nil }))
	snap, _ := f.Read(t.Context())
	assert.Equal(t, "1", snap.Revision, "an unchanged value writes nothing")
}

func TestWritableNeedsCodecAndSource(t *testing.T) {
	f := &fake{}
	w := datasource.NewWritable[[]string](f, encoderOnly{})
	require.ErrorIs(t, w.Update(t.Context(), func(v []string) ([]string, error) { return v, nil }), datasource.ErrNoDecoder)
	_, err := w.Read(t.Context())
	require.ErrorIs(t, err, datasource.ErrNoDecoder)

	wo := datasource.NewWritable(writeOnly{}, codec{})
	require.ErrorIs(t, wo.Write(t.Context(), []string{"a"}), datasource.ErrNotReadable)
}

func TestWaitApplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		r := datasource.NewReadable(f, codec{}, datasource.WithPollInterval(time.Hour))
		errBad := errors.New("invalid rule")
		r.Property().Listen(func(v []string) error {
			if len(v) == 1 && v[0] == "bad" {
				return errBad
			}
			return nil
		})
		require.NoError(t, r.Start(t.Context()))
		w := datasource.NewWritable(f, codec{}, datasource.WaitApplied(r, time.Minute))

		require.NoError(t, w.Write(t.Context(), []string{"b"}))
		assert.Equal(t, []string{"b"}, value(t, r), "applied when Write returns")

		err := w.Write(t.Context(), []string{"bad"})
		require.ErrorIs(t, err, datasource.ErrNotApplied)
		require.ErrorIs(t, err, errBad)

		require.NoError(t, w.Update(t.Context(), func([]string) ([]string, error) { return []string{"c"}, nil }))
		assert.Equal(t, []string{"c"}, value(t, r))

		f.fail(0, true) // the Readable cannot see the write: time out
		f2 := &fake{}
		f2.set(doc("x"), "1")
		w2 := datasource.NewWritable(f2, codec{}, datasource.WaitApplied(r, 5*time.Second))
		err = w2.Write(t.Context(), []string{"y"})
		require.ErrorIs(t, err, datasource.ErrNotApplied)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, r.Close())

		require.ErrorIs(t, w.Write(t.Context(), []string{"d"}), datasource.ErrClosed)
	})
}
