package datasource_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func value(t *testing.T, r *datasource.Readable[[]string]) []string {
	t.Helper()
	v, ok := r.Property().Get()
	require.True(t, ok, "no value set")
	return v
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		f.fail(0, true)
		r := datasource.NewReadable(f, codec{}, datasource.WithBackoff(100*time.Millisecond, 800*time.Millisecond))
		err := r.Start(t.Context())
		require.ErrorIs(t, err, errDown, "nothing could be applied")
		assert.Equal(t, 1, r.Status().Failures)

		time.Sleep(10 * time.Second)
		reads := f.readTimes()
		require.Greater(t, len(reads), 8)
		for i := 1; i < len(reads); i++ {
			gap := reads[i].Sub(reads[i-1])
			want := min(100*time.Millisecond<<(i-1), 800*time.Millisecond)
			assert.GreaterOrEqual(t, gap, want/2, "retry %d", i)
			assert.LessOrEqual(t, gap, want, "retry %d", i)
		}
		st := r.Status()
		assert.Equal(t, len(reads), st.Failures)
		assert.ErrorIs(t, st.Err, errDown)
		_, has := r.Property().Get()
		assert.False(t, has, "a read error never sets a value")

		f.fail(0, false)
		time.Sleep(time.Second)
		assert.Equal(t, []string{"a"}, value(t, r))
		st = r.Status()
		assert.NoError(t, st.Err)
		assert.Zero(t, st.Failures)
		require.NoError(t, r.Close())
	})
}

func TestReadErrorKeepsRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		r := datasource.NewReadable(f, codec{}, datasource.WithPollInterval(time.Second))
		require.NoError(t, r.Start(t.Context()))
		f.fail(0, true)
		time.Sleep(5 * time.Second)
		assert.Equal(t, []string{"a"}, value(t, r))
		st := r.Status()
		assert.ErrorIs(t, st.Err, errDown)
		assert.Positive(t, st.Failures)
		assert.Equal(t, "1", st.Revision)
		require.NoError(t, r.Close())
	})
}

func TestReconcileCatchesMissedPush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		silent := watching{fake: f, watch: func(ctx context.Context, _ datasource.Snapshot, _ func(datasource.Snapshot)) error {
			<-ctx.Done() // a watch that misses everything
			return ctx.Err()
		}}
		r := datasource.NewReadable(silent, codec{}, datasource.WithReconcileInterval(30*time.Second))
		require.NoError(t, r.Start(t.Context()))
		synctest.Wait()
		assert.True(t, r.Status().Watching)
		f.set(doc("b"), "2")
		time.Sleep(29 * time.Second)
		assert.Equal(t, []string{"a"}, value(t, r), "no poll while watching")
		time.Sleep(2 * time.Second)
		assert.Equal(t, []string{"b"}, value(t, r), "the reconcile read caught it")
		require.NoError(t, r.Close())
	})
}

func TestBrokenWatchReadsAgainBeforeWatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		var mu sync.Mutex
		var froms []string
		var readsAtWatch []int
		calls := 0
		w := watching{fake: f, watch: func(ctx context.Context, from datasource.Snapshot, _ func(datasource.Snapshot)) error {
			mu.Lock()
			calls++
			n := calls
			froms = append(froms, from.Revision)
			readsAtWatch = append(readsAtWatch, len(f.readTimes()))
			mu.Unlock()
			if n == 1 {
				f.set(doc("b"), "2") // changed while the watch is breaking
				return errors.New("connection reset")
			}
			<-ctx.Done()
			return ctx.Err()
		}}
		r := datasource.NewReadable(w, codec{}, datasource.WithBackoff(time.Second, 10*time.Second))
		require.NoError(t, r.Start(t.Context()))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, []string{"1", "2"}, froms, "the second watch starts from the read after the break")
		assert.Equal(t, 1, readsAtWatch[0])
		assert.Equal(t, 2, readsAtWatch[1], "one read between the break and the new watch")
		mu.Unlock()
		assert.Equal(t, []string{"b"}, value(t, r))
		st := r.Status()
		assert.True(t, st.Watching)
		assert.ErrorContains(t, st.WatchErr, "connection reset")
		require.NoError(t, r.Close())
	})
}

func TestUnsupportedWatchPolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		w := watching{fake: f, watch: func(context.Context, datasource.Snapshot, func(datasource.Snapshot)) error {
			return errors.Join(errors.New("inotify: too many instances"), datasource.ErrWatchUnsupported)
		}}
		r := datasource.NewReadable(w, codec{}, datasource.WithPollInterval(2*time.Second))
		require.NoError(t, r.Start(t.Context()))
		synctest.Wait()
		st := r.Status()
		assert.False(t, st.Watching)
		assert.ErrorIs(t, st.WatchErr, datasource.ErrWatchUnsupported)
		f.set(doc("b"), "2")
		time.Sleep(2*time.Second + time.Millisecond)
		assert.Equal(t, []string{"b"}, value(t, r))
		require.NoError(t, r.Close())
	})
}

func TestUnchangedIsNotDecoded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var decodes atomic.Int64
		f := &fake{}
		f.set(doc("a"), "1")
		var sets atomic.Int64
		r := datasource.NewReadable(f, codec{decodes: &decodes}, datasource.WithPollInterval(time.Second))
		r.Property().Listen(func([]string) error { sets.Add(1); return nil })
		require.NoError(t, r.Start(t.Context()))
		time.Sleep(10 * time.Second)
		assert.Equal(t, int64(1), decodes.Load(), "same revision: not decoded again")
		f.set(doc("a"), "2") // a new revision, the same bytes (an etcd rewrite)
		time.Sleep(3 * time.Second)
		assert.Equal(t, int64(1), decodes.Load(), "same content: not decoded again")
		assert.Equal(t, int64(1), sets.Load())
		assert.Equal(t, "2", r.Status().Revision)
		require.NoError(t, r.Close())
	})
}

func TestHintsCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		release := make(chan struct{})
		w := watching{fake: f, watch: func(ctx context.Context, _ datasource.Snapshot, changed func(datasource.Snapshot)) error {
			<-release
			for i := range 1000 {
				f.set(doc("v", string(rune('a'+i%26))), "")
				changed(datasource.Snapshot{})
			}
			f.set(doc("last"), "")
			changed(datasource.Snapshot{})
			<-ctx.Done()
			return ctx.Err()
		}}
		var sets atomic.Int64
		r := datasource.NewReadable(w, codec{})
		r.Property().Listen(func([]string) error { sets.Add(1); return nil })
		require.NoError(t, r.Start(t.Context()))
		synctest.Wait()
		close(release)
		synctest.Wait()
		assert.Equal(t, []string{"last"}, value(t, r), "the latest wins")
		assert.Less(t, len(f.readTimes()), 1002, "hints coalesce")
		require.NoError(t, r.Close())
	})
}

func TestMissingClearsOrKeeps(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "clear", true: "keep"}[keep], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fake{}
				f.set(doc("a"), "1")
				var opts []datasource.Option
				if keep {
					opts = append(opts, datasource.WithKeepOnMissing())
				}
				r := datasource.NewReadable(f, codec{}, opts...)
				require.NoError(t, r.Start(t.Context()))
				f.setMissing()
				time.Sleep(2 * time.Second)
				st := r.Status()
				assert.True(t, st.Missing)
				assert.NoError(t, st.Err)
				if keep {
					assert.Equal(t, []string{"a"}, value(t, r))
				} else {
					assert.Nil(t, value(t, r))
					assert.Empty(t, st.Revision)
				}
				require.NoError(t, r.Close())
			})
		})
	}
}

func TestRejectedDocumentKeepsRulesAndCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		f := &fake{}
		f.set(doc("good"), "1")
		errBad := errors.New("rules[0].count: must be >= 0")
		r := datasource.NewReadable(f, codec{}, datasource.WithName("svc/flow"), datasource.WithCacheDir(dir))
		var kept []string
		r.Property().Listen(func(v []string) error {
			if len(v) > 0 && v[0] == "bad" {
				return errBad
			}
			kept = v
			return nil
		})
		require.NoError(t, r.Start(t.Context()))
		f.set(doc("bad"), "2")
		time.Sleep(2 * time.Second)
		st := r.Status()
		assert.ErrorIs(t, st.Err, errBad)
		assert.ErrorContains(t, st.Err, "rejected: ")
		assert.ErrorContains(t, st.Err, "(revision 2)")
		assert.Equal(t, 1, st.Failures)
		assert.Equal(t, "1", st.Revision)
		assert.Equal(t, []string{"good"}, kept)
		time.Sleep(5 * time.Second)
		assert.Equal(t, 1, r.Status().Failures, "the same rejected revision is not counted again")

		files, err := filepath.Glob(filepath.Join(dir, "*"))
		require.NoError(t, err)
		require.Len(t, files, 1)
		data, err := os.ReadFile(files[0])
		require.NoError(t, err)
		assert.JSONEq(t, `["good"]`, string(data), "a rejected document is not cached")
		require.NoError(t, r.Close())
	})
}

func TestStartFromCache(t *testing.T) {
	dir := seedCache(t, "svc", doc("cached"))
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.fail(0, true)
		r := datasource.NewReadable(f, codec{}, datasource.WithName("svc"), datasource.WithCacheDir(dir),
			datasource.WithBackoff(time.Second, time.Second))
		require.NoError(t, r.Start(t.Context()), "the cache was applied")
		assert.Equal(t, []string{"cached"}, value(t, r))
		st := r.Status()
		assert.True(t, st.FromCache)
		assert.ErrorIs(t, st.Err, errDown)

		f.set(doc("cached"), "1")
		f.fail(0, false)
		time.Sleep(2 * time.Second)
		st = r.Status()
		assert.False(t, st.FromCache, "the source answered with the same document")
		assert.NoError(t, st.Err)
		assert.Equal(t, "1", st.Revision)

		f.setMissing()
		time.Sleep(2 * time.Second)
		files, _ := filepath.Glob(filepath.Join(dir, "*.cache"))
		assert.Empty(t, files, "a deleted document is not revived from the cache")
		require.NoError(t, r.Close())
	})
}

func TestCacheNeedsName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.fail(0, true)
		r := datasource.NewReadable(f, codec{}, datasource.WithCacheDir(t.TempDir()))
		err := r.Start(t.Context())
		require.ErrorIs(t, err, errDown)
		assert.ErrorContains(t, err, "WithName")
		require.NoError(t, r.Close())
	})
}

func TestStartKeepsRetryingAfterError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("late"), "1")
		f.fail(3, false)
		r := datasource.NewReadable(f, codec{}, datasource.WithBackoff(time.Second, time.Second))
		require.Error(t, r.Start(t.Context()))
		time.Sleep(5 * time.Second)
		assert.Equal(t, []string{"late"}, value(t, r))
		require.NoError(t, r.Close())
	})
}

func TestStartBoundedByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{block: make(chan struct{})}
		f.set(doc("slow"), "1")
		r := datasource.NewReadable(f, codec{})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := r.Start(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		close(f.block)
		synctest.Wait()
		assert.Equal(t, []string{"slow"}, value(t, r), "the first read finished in the background")
		require.NoError(t, r.Close())
	})
}

func TestCloseIsIdempotentAndClosesSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		r := datasource.NewReadable(f, codec{})
		require.NoError(t, r.Start(t.Context()))
		require.ErrorContains(t, r.Start(t.Context()), "already started")
		require.NoError(t, r.Close())
		require.NoError(t, r.Close())
		assert.Equal(t, 1, f.closes)
		require.ErrorIs(t, r.Start(t.Context()), datasource.ErrClosed)

		// Close without Start closes the Source too.
		g := &fake{}
		require.NoError(t, datasource.NewReadable(g, codec{}).Close())
		assert.Equal(t, 1, g.closes)
	})
}

func TestCloseInterruptsBlockedRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{block: make(chan struct{})}
		r := datasource.NewReadable(f, codec{}, datasource.WithReadTimeout(0))
		errc := make(chan error, 1)
		go func() { errc <- r.Start(context.Background()) }()
		synctest.Wait()
		require.NoError(t, r.Close())
		require.ErrorIs(t, <-errc, datasource.ErrClosed)
	})
}

func TestReadTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{block: make(chan struct{})}
		r := datasource.NewReadable(f, codec{}, datasource.WithReadTimeout(5*time.Second))
		err := r.Start(t.Context())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, r.Close())
	})
}

func TestStatusName(t *testing.T) {
	f := &fake{}
	r := datasource.NewReadable(f, codec{}, datasource.WithName("order/flow"))
	assert.Equal(t, "order/flow", r.Status().Name)
	require.NoError(t, r.Close())
}

func TestLenientPartialApplyCountsAsApplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		f := &fake{}
		f.set(doc("a", "bad"), "1")
		r := datasource.NewReadable(f, codec{}, datasource.WithName("lenient"), datasource.WithCacheDir(dir))
		partial := &core.ValidationError{Kind: "flow", Applied: true,
			Rules: []core.RuleError{{Index: 1, Err: errors.New("count: must be >= 0")}}}
		r.Property().Listen(func(v []string) error {
			if len(v) > 1 {
				return partial
			}
			return nil
		})
		require.NoError(t, r.Start(t.Context()))
		st := r.Status()
		assert.Equal(t, "1", st.Revision, "applied in part is applied")
		assert.Zero(t, st.Failures)
		require.ErrorIs(t, st.Err, core.ErrInvalidRules)
		assert.ErrorContains(t, st.Err, "applied in part")
		time.Sleep(3 * time.Second) // polls of the same revision keep the warning
		assert.ErrorIs(t, r.Status().Err, core.ErrInvalidRules)
		files, _ := filepath.Glob(filepath.Join(dir, "*.cache"))
		assert.Len(t, files, 1, "cached")
		require.NoError(t, r.Close())
	})
}
