package datasource_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
)

// gated is a watching Source whose Read takes the document as it is when
// the read starts, then waits for the test to open the gate: a read in
// flight while the document changes again.
type gated struct {
	mu      sync.Mutex
	snap    datasource.Snapshot
	gate    chan struct{} // nil: reads return at once
	reads   int
	changed func(datasource.Snapshot)
	ready   chan struct{} // closed once Watch runs
}

func newGated(s datasource.Snapshot) *gated { return &gated{snap: s, ready: make(chan struct{})} }

func (g *gated) Read(ctx context.Context) (datasource.Snapshot, error) {
	g.mu.Lock()
	s, gate := g.snap, g.gate
	g.reads++
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return datasource.Snapshot{}, ctx.Err()
		}
	}
	return s, nil
}

func (g *gated) Close() error { return nil }

func (g *gated) Watch(ctx context.Context, _ datasource.Snapshot, changed func(datasource.Snapshot)) error {
	g.mu.Lock()
	g.changed = changed
	g.mu.Unlock()
	close(g.ready)
	<-ctx.Done()
	return ctx.Err()
}

// put changes the document and sends the push a backend would.
func (g *gated) put(s datasource.Snapshot) {
	g.mu.Lock()
	g.snap = s
	changed := g.changed
	g.mu.Unlock()
	changed(s)
}

func (g *gated) hold() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
	return g.gate
}

func (g *gated) release(gate chan struct{}) {
	g.mu.Lock()
	g.gate = nil
	g.mu.Unlock()
	close(gate)
}

// Defect 1 of issue 9: document X, then B, then X again. The push for the
// second X arrives while the read for B is in flight; that read saw B. The
// push must not be dropped as "already read".
func TestPushDuringReadIsNotLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    datasource.Snapshot
	}{
		{"revert", datasource.Snapshot{Data: doc("x"), Revision: contentrev.Of(doc("x"))}},
		{"delete", datasource.Snapshot{Missing: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGated(tc.x)
				r := datasource.NewReadable(g, codec{}, datasource.WithReconcileInterval(0))
				require.NoError(t, r.Start(t.Context()))
				<-g.ready
				synctest.Wait()

				gate := g.hold()
				g.put(datasource.Snapshot{Data: doc("b"), Revision: contentrev.Of(doc("b"))})
				synctest.Wait() // the read for B has taken B and waits
				g.put(tc.x)     // back to X while that read is in flight
				g.release(gate)
				synctest.Wait()

				got, _ := r.Property().Get()
				if tc.x.Missing {
					assert.Empty(t, got, "the delete is in force")
					assert.True(t, r.Status().Missing)
				} else {
					assert.Equal(t, []string{"x"}, got, "the latest document is in force")
				}
				require.NoError(t, r.Close())
			})
		})
	}
}

// Defect 4 of issue 9: while the source fails, pushes do not make it read
// more often than the backoff allows.
func TestHintsRespectBackoffWhileFailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		ready := make(chan func(datasource.Snapshot), 1)
		w := watching{fake: f, watch: func(ctx context.Context, _ datasource.Snapshot, changed func(datasource.Snapshot)) error {
			ready <- changed
			<-ctx.Done()
			return ctx.Err()
		}}
		r := datasource.NewReadable(w, codec{}, datasource.WithBackoff(time.Second, 8*time.Second), datasource.WithReconcileInterval(0))
		require.NoError(t, r.Start(t.Context()))
		changed := <-ready
		f.fail(0, true)
		before := len(f.readTimes())
		for i := range 200 { // 200 pushes over 10 s
			changed(datasource.Snapshot{Revision: fmt.Sprint("r", i)})
			time.Sleep(50 * time.Millisecond)
		}
		reads := len(f.readTimes()) - before
		// The first push reads and fails; then retries after ~1, 2, 4 s
		// (each jittered within its upper half): at most 5 reads in 10 s.
		assert.LessOrEqual(t, reads, 5, "pushes must follow the backoff while failing")
		assert.GreaterOrEqual(t, reads, 3, "the backoff still retries")
		require.NoError(t, r.Close())
	})
}

// stuck is a Source whose Read ignores its context until released: a read
// of a hung network mount.
type stuck struct{ release chan struct{} }

func (s stuck) Read(context.Context) (datasource.Snapshot, error) {
	<-s.release
	return datasource.Snapshot{Missing: true}, nil
}
func (stuck) Close() error { return nil }

// Defect 3 of issue 9: Close returns in bounded time whatever the Source
// does, and says that it abandoned a call.
func TestCloseBoundedWhenReadIgnoresContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := stuck{release: make(chan struct{})}
		r := datasource.NewReadable(s, codec{}, datasource.WithReadTimeout(0))
		go func() { _ = r.Start(context.Background()) }()
		synctest.Wait()
		began := time.Now()
		err := r.Close()
		assert.Equal(t, datasource.CloseTimeout, time.Since(began), "Close waited exactly its bound")
		require.ErrorContains(t, err, "ignored cancellation")
		close(s.release) // the abandoned read returns and applies nothing
		synctest.Wait()
		_, has := r.Property().Get()
		assert.False(t, has, "nothing applied after Close")
	})
}

// Defect 4 of issue 9: a document over the limit is refused, the running
// value stays, and Status says why.
func TestTooLargeIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		r := datasource.NewReadable(f, codec{}, datasource.WithMaxSize(64), datasource.WithPollInterval(time.Second))
		require.NoError(t, r.Start(t.Context()))
		big := doc(strings.Repeat("x", 100))
		f.set(big, "2")
		time.Sleep(2 * time.Second)
		assert.Equal(t, []string{"a"}, value(t, r))
		st := r.Status()
		require.ErrorIs(t, st.Err, datasource.ErrTooLarge)
		assert.Equal(t, "1", st.Revision)
		require.NoError(t, r.Close())
	})
}

// seedCache returns a cache directory holding data as the last-good
// document of the datasource called name, as a Readable left it.
func seedCache(t *testing.T, name string, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(data, "1")
		r := datasource.NewReadable(f, codec{}, datasource.WithName(name), datasource.WithCacheDir(dir))
		require.NoError(t, r.Start(t.Context()))
		require.NoError(t, r.Close())
	})
	return dir
}

// Defect 7 of issue 9: booted from the cache with WithKeepOnMissing, the
// cached rules stay in force while the document is missing, and Status
// keeps saying they came from the cache, read after read.
func TestKeepOnMissingKeepsFromCache(t *testing.T) {
	dir := seedCache(t, "svc", doc("cached"))
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.fail(0, true)
		r := datasource.NewReadable(f, codec{}, datasource.WithName("svc"), datasource.WithCacheDir(dir),
			datasource.WithKeepOnMissing(), datasource.WithBackoff(time.Second, time.Second), datasource.WithPollInterval(time.Second))
		require.NoError(t, r.Start(t.Context()))
		require.True(t, r.Status().FromCache)
		f.setMissing()
		f.fail(0, false)
		for i := range 4 {
			time.Sleep(time.Second)
			st := r.Status()
			assert.True(t, st.FromCache, "read %d: the cached rules are still in force", i)
			assert.True(t, st.Missing)
			assert.NoError(t, st.Err)
		}
		assert.Equal(t, []string{"cached"}, value(t, r))
		require.NoError(t, r.Close())
	})
}

// With WithKeepOnMissing, a document missing at start applies the cache.
func TestKeepOnMissingAtStartAppliesCache(t *testing.T) {
	dir := seedCache(t, "svc", doc("cached"))
	synctest.Test(t, func(t *testing.T) {
		g := &fake{}
		g.setMissing()
		r := datasource.NewReadable(g, codec{}, datasource.WithName("svc"), datasource.WithCacheDir(dir), datasource.WithKeepOnMissing())
		require.NoError(t, r.Start(t.Context()))
		assert.Equal(t, []string{"cached"}, value(t, r))
		assert.True(t, r.Status().FromCache)
		require.NoError(t, r.Close())
	})
}

// named is a fake whose String identifies the document.
type namedFake struct {
	*fake
	id string
}

func (n namedFake) String() string { return n.id }

// Defect 9 of issue 9: caches are named by the document's identity, kept
// private, and a failed update is retried.
func TestCacheIdentityPermsAndRetry(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		a, b := &fake{}, &fake{}
		a.set(doc("from-a"), "1")
		b.set(doc("from-b"), "1")
		ra := datasource.NewReadable(namedFake{a, "etcd://10.0.0.1:2379/svc/flow"}, codec{}, datasource.WithName("flow"), datasource.WithCacheDir(dir))
		rb := datasource.NewReadable(namedFake{b, "etcd://10.0.0.2:2379/svc/flow"}, codec{}, datasource.WithName("flow"), datasource.WithCacheDir(dir))
		require.NoError(t, ra.Start(t.Context()))
		require.NoError(t, rb.Start(t.Context()))
		require.NoError(t, ra.Close())
		require.NoError(t, rb.Close())
	})
	files, err := filepath.Glob(filepath.Join(dir, "*.cache"))
	require.NoError(t, err)
	require.Len(t, files, 2, "same name, different servers: two caches")
	for _, f := range files {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}

	// A cache directory that cannot be created yet (a file is in its way):
	// the update is retried until it succeeds.
	blocked := filepath.Join(t.TempDir(), "cache")
	require.NoError(t, os.WriteFile(blocked, []byte("in the way"), 0o600))
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.set(doc("a"), "1")
		var logs bytes.Buffer
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
		r := datasource.NewReadable(f, codec{}, datasource.WithName("svc"), datasource.WithCacheDir(blocked),
			datasource.WithLogger(log), datasource.WithReconcileInterval(0), datasource.WithBackoff(time.Second, time.Second))
		require.NoError(t, r.Start(t.Context()))
		mu.Lock()
		assert.Contains(t, logs.String(), "cache not updated")
		mu.Unlock()
		require.NoError(t, os.Remove(blocked))
		time.Sleep(2 * time.Second)
		files, err := filepath.Glob(filepath.Join(blocked, "*.cache"))
		require.NoError(t, err)
		assert.Len(t, files, 1, "the cache was written on retry")
		fi, err := os.Stat(blocked)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		require.NoError(t, r.Close())
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A mistyped path starts silently no more: a missing document at start is
// a warning.
func TestMissingAtStartWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fake{}
		f.setMissing()
		var logs bytes.Buffer
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
		r := datasource.NewReadable(f, codec{}, datasource.WithLogger(log))
		require.NoError(t, r.Start(t.Context()))
		mu.Lock()
		assert.Contains(t, logs.String(), "level=WARN msg=\"datasource document missing at start")
		mu.Unlock()
		require.NoError(t, r.Close())
	})
}

const partialFlow = `[
  {"resource": "GET /orders", "count": 10},
  {"resource": "GET /users", "count": -1},
  {"resource": "GET /items", "count": 5}
]`

// Defect 6 of issue 9: a lenient RuleManager gets the valid rules of a
// document from a datasource, Status names the refused ones, and a cached
// copy of such a document counts as applied at boot. A strict one refuses
// the document whole.
func TestLenientManagerThroughDatasource(t *testing.T) {
	dir := t.TempDir()
	resources := func(rules []flow.Rule) []string {
		var out []string
		for _, r := range rules {
			out = append(out, r.Resource)
		}
		return out
	}
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		e.Flow().SetLenient(true)
		f := &fake{}
		f.set([]byte(partialFlow), "1")
		r := datasource.NewReadable(f, converter.FlowRules(), datasource.WithName("lenient"), datasource.WithCacheDir(dir))
		e.Flow().Register(r.Property())
		require.NoError(t, r.Start(t.Context()))
		assert.Equal(t, []string{"GET /orders", "GET /items"}, resources(e.Flow().Rules()))
		st := r.Status()
		assert.Equal(t, "1", st.Revision)
		assert.Zero(t, st.Failures)
		require.ErrorIs(t, st.Err, converter.ErrInvalid)
		assert.ErrorContains(t, st.Err, `"GET /users"`)
		assert.ErrorContains(t, st.Err, "applied in part")
		require.NoError(t, r.Close())
	})
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		e.Flow().SetLenient(true)
		f := &fake{}
		f.fail(0, true)
		r := datasource.NewReadable(f, converter.FlowRules(), datasource.WithName("lenient"), datasource.WithCacheDir(dir))
		e.Flow().Register(r.Property())
		require.NoError(t, r.Start(t.Context()), "the partly valid cache is applied")
		assert.Equal(t, []string{"GET /orders", "GET /items"}, resources(e.Flow().Rules()))
		assert.True(t, r.Status().FromCache)
		require.NoError(t, r.Close())
	})
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		f := &fake{}
		f.set([]byte(partialFlow), "1")
		r := datasource.NewReadable(f, converter.FlowRules())
		e.Flow().Register(r.Property())
		err := r.Start(t.Context())
		require.ErrorIs(t, err, converter.ErrInvalid, "strict: rejected whole")
		assert.Empty(t, e.Flow().Rules())
		require.NoError(t, r.Close())
	})
}
