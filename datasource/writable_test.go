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
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
)

// readWrite reads the document and writes v over the revision read.
func readWrite(t *testing.T, w *datasource.Writable[[]string], v []string) error {
	t.Helper()
	_, rev, err := w.Read(t.Context())
	require.NoError(t, err)
	return w.Write(t.Context(), v, rev)
}

func TestWriteCAS(t *testing.T) {
	f := &fake{}
	f.set(doc("a"), "r1")
	w := datasource.NewWritable(f, codec{})
	got, rev, err := w.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, got)
	assert.Equal(t, "r1", rev)
	require.NoError(t, w.Write(t.Context(), []string{"b"}, rev))
	got, rev2, err := w.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, got)

	f.set(doc("external"), "r9")
	err = w.Write(t.Context(), []string{"c"}, rev2)
	require.ErrorIs(t, err, datasource.ErrConflict)
	assert.ErrorContains(t, err, "datasource: ")
	err = w.Write(t.Context(), []string{"c"}, rev)
	require.ErrorIs(t, err, datasource.ErrConflict, "an old revision never matches again")
}

// Defect 8 of issue 9: the revision a Write expects is its caller's. One
// caller reads, another updates through the same Writable, and the first
// caller's write must fail instead of erasing the update.
func TestSharedWritableKeepsEveryEdit(t *testing.T) {
	f := &fake{}
	f.set(doc("a"), "1")
	w := datasource.NewWritable(f, codec{})
	_, rev, err := w.Read(t.Context())
	require.NoError(t, err)
	require.NoError(t, w.Update(t.Context(), func(v []string) ([]string, error) { return append(v, "updated"), nil }))
	err = w.Write(t.Context(), []string{"stale"}, rev)
	require.ErrorIs(t, err, datasource.ErrConflict)
	got, _, err := w.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "updated"}, got, "the update survives")
}

func TestWriteCreatesMissing(t *testing.T) {
	f := &fake{}
	f.setMissing()
	w := datasource.NewWritable(f, codec{})
	_, rev, err := w.Read(t.Context())
	require.NoError(t, err)
	assert.Empty(t, rev, "a missing document has no revision")
	require.NoError(t, w.Write(t.Context(), []string{"new"}, rev))
	snap, _ := f.Read(t.Context())
	assert.JSONEq(t, `["new"]`, string(snap.Data))
	require.ErrorIs(t, w.Write(t.Context(), []string{"again"}, ""), datasource.ErrConflict, "\"\" creates only")
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
	require.ErrorContains(t, w.Update(t.Context(), func(v []string) ([]string, error) { return v, nil }), "need an encoder that is also a converter.Converter")
	_, _, err := w.Read(t.Context())
	require.ErrorContains(t, err, "need an encoder that is also a converter.Converter")

	wo := datasource.NewWritable(writeOnly{}, codec{})
	require.ErrorContains(t, wo.Update(t.Context(), func(v []string) ([]string, error) { return v, nil }), "is not also a Source")
	wo2 := datasource.NewWritable[[]string](writeOnly{}, encoderOnly{})
	require.NoError(t, wo2.Write(t.Context(), []string{"a"}, "x"), "Write needs no Source")
}

// A Writable does not store what a Readable with the same size limit
// would refuse.
func TestWritableMaxSize(t *testing.T) {
	f := &fake{}
	w := datasource.NewWritable(f, codec{}, datasource.WithMaxSize(8))
	err := w.Write(t.Context(), []string{"a-long-value"}, "")
	require.ErrorIs(t, err, datasource.ErrTooLarge)
	snap, rerr := f.Read(t.Context())
	require.NoError(t, rerr)
	assert.Empty(t, snap.Data, "nothing was written")
	require.NoError(t, w.Write(t.Context(), []string{"a"}, ""))
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

		require.NoError(t, readWrite(t, w, []string{"b"}))
		assert.Equal(t, []string{"b"}, value(t, r), "applied when Write returns")

		err := readWrite(t, w, []string{"bad"})
		require.ErrorIs(t, err, datasource.ErrNotApplied)
		require.ErrorIs(t, err, errBad)

		require.NoError(t, w.Update(t.Context(), func([]string) ([]string, error) { return []string{"c"}, nil }))
		assert.Equal(t, []string{"c"}, value(t, r))

		f.fail(0, true) // the Readable cannot see the write: time out
		f2 := &fake{}
		f2.set(doc("x"), "1")
		w2 := datasource.NewWritable(f2, codec{}, datasource.WaitApplied(r, 5*time.Second))
		err = readWrite(t, w2, []string{"y"})
		require.ErrorIs(t, err, datasource.ErrNotApplied)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, r.Close())

		f.fail(0, false)
		require.ErrorIs(t, readWrite(t, w, []string{"d"}), datasource.ErrClosed)
	})
}

// A Source that reads its own writes: the wait costs the Readable one read.
func TestWaitAppliedReadAfterWriteOneRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		r := datasource.NewReadable(f, codec{}, datasource.WithPollInterval(time.Hour))
		require.NoError(t, r.Start(t.Context()))
		defer r.Close()
		w := datasource.NewWritable(f, codec{}, datasource.WaitApplied(r, time.Minute))
		require.NoError(t, readWrite(t, w, []string{"b"}))
		_, rev, err := w.Read(t.Context())
		require.NoError(t, err)
		before := len(f.readTimes())
		require.NoError(t, w.Write(t.Context(), []string{"c"}, rev))
		assert.Equal(t, []string{"c"}, value(t, r))
		assert.Len(t, f.readTimes(), before+1, "the first read after the write shows it")
	})
}

// An eventually consistent Source returns the replaced document for a
// while after a write: WaitApplied keeps reading until it sees the write.
func TestWaitAppliedEventuallyConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lag = time.Second
		l := newLagging(lag, datasource.Snapshot{Data: doc("a"), Revision: contentrev.Of(doc("a"))})
		r := datasource.NewReadable(l, codec{}, datasource.WithPollInterval(time.Hour))
		errBad := errors.New("invalid rule")
		r.Property().Listen(func(v []string) error {
			if len(v) == 1 && v[0] == "bad" {
				return errBad
			}
			return nil
		})
		require.NoError(t, r.Start(t.Context()))
		defer r.Close()
		w := datasource.NewWritable(l, codec{}, datasource.WaitApplied(r, time.Minute))

		require.NoError(t, readWrite(t, w, []string{"b"}))
		assert.Equal(t, []string{"b"}, value(t, r), "applied when Write returns, not merely read stale")
		assert.Greater(t, l.readCount(), 3, "stale reads were retried")

		err := readWrite(t, w, []string{"bad"})
		require.ErrorIs(t, err, datasource.ErrNotApplied, "a rejection is reported, not hidden by a stale read")
		require.ErrorIs(t, err, errBad)

		require.NoError(t, w.Update(t.Context(), func(v []string) ([]string, error) { return append(v, "c"), nil }))
		assert.Equal(t, []string{"bad", "c"}, value(t, r))
	})
}

func TestWaitAppliedEventuallyConsistentCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLagging(time.Second, datasource.Snapshot{Missing: true})
		r := datasource.NewReadable(l, codec{}, datasource.WithPollInterval(time.Hour))
		require.NoError(t, r.Start(t.Context()))
		defer r.Close()
		w := datasource.NewWritable(l, codec{}, datasource.WaitApplied(r, time.Minute))
		require.NoError(t, readWrite(t, w, []string{"created"}), "a stale \"missing\" is not the write")
		assert.Equal(t, []string{"created"}, value(t, r))
	})
}

// A read that returns neither the replaced document nor the written one
// shows a later write by someone else: the wait ends.
func TestWaitAppliedReplacedByLaterWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLagging(time.Second, datasource.Snapshot{Data: doc("a"), Revision: contentrev.Of(doc("a"))})
		r := datasource.NewReadable(l, codec{}, datasource.WithPollInterval(time.Hour))
		require.NoError(t, r.Start(t.Context()))
		defer r.Close()
		w := datasource.NewWritable(l, codec{}, datasource.WaitApplied(r, time.Minute))
		// Another client writes right after us, at the same instant, so no
		// read ever shows our write: only "other" ends the wait.
		go func() {
			synctest.Wait() // the write is stored and the wait reads stale "a"
			l.set(doc("other"))
		}()
		require.NoError(t, readWrite(t, w, []string{"mine"}))
		assert.Equal(t, []string{"other"}, value(t, r), "returned on the later document, not on a stale read")
	})
}

// A server that answers "missing" for a moment after an update (PolarisMesh
// does while it swaps releases): the wait reads on until it sees the write.
func TestWaitAppliedTransientMissing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLagging(time.Second, datasource.Snapshot{Data: doc("a"), Revision: contentrev.Of(doc("a"))})
		r := datasource.NewReadable(l, codec{}, datasource.WithPollInterval(time.Hour))
		require.NoError(t, r.Start(t.Context()))
		defer r.Close()
		w := datasource.NewWritable(l, codec{}, datasource.WaitApplied(r, time.Minute))
		_, rev, err := w.Read(t.Context())
		require.NoError(t, err)
		// Reads show a for a second, then missing for two, then the write.
		l.glitch()
		time.Sleep(2 * time.Second)
		require.NoError(t, w.Write(t.Context(), []string{"b"}, rev))
		assert.Equal(t, []string{"b"}, value(t, r))
	})
}

func TestWaitAppliedStaleUntilTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLagging(time.Hour, datasource.Snapshot{Data: doc("a"), Revision: contentrev.Of(doc("a"))})
		r := datasource.NewReadable(l, codec{}, datasource.WithPollInterval(time.Hour))
		require.NoError(t, r.Start(t.Context()))
		defer r.Close()
		w := datasource.NewWritable(l, codec{}, datasource.WaitApplied(r, 5*time.Second))
		err := readWrite(t, w, []string{"b"})
		require.ErrorIs(t, err, datasource.ErrNotApplied)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "still returned the replaced document")
		assert.Equal(t, []string{"a"}, value(t, r))
	})
}

// Consecutive Updates on an eventually consistent Source: each one's first
// read is stale (its CAS conflicts), and the growing pauses outlast the
// staleness within the default attempts. Nothing is lost.
func TestUpdateEventuallyConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLagging(time.Second, datasource.Snapshot{Data: doc(), Revision: contentrev.Of(doc())})
		w := datasource.NewWritable(l, codec{})
		for _, item := range []string{"a", "b", "c", "d"} {
			require.NoError(t, w.Update(t.Context(), func(v []string) ([]string, error) { return append(v, item), nil }))
		}
		time.Sleep(time.Second)
		got, _, err := w.Read(t.Context())
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "b", "c", "d"}, got)
	})
}
