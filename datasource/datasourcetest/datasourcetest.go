package datasourcetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
)

// Harness describes a backend to Run.
type Harness struct {
	// New returns a fresh Backend on a fresh key (file, node, ...) that no
	// other case uses. Register cleanups with t.Cleanup. Required.
	New func(t *testing.T) Backend
	// Timeout bounds every wait for a condition (default 10 s). Waits end as
	// soon as the condition holds; the timeout only fails a stuck case.
	Timeout time.Duration
	// Options are added to every Readable and Writable the suite makes
	// (after its own, so they win), e.g. a longer backoff for a slow server.
	// Only the burst cases override them: their Readables never poll nor
	// reconcile.
	Options []datasource.Option
	// IgnoreGoroutines lists goroutines that the backend's shared client
	// runs and that outlive a Source (goleak options), for the leak check.
	IgnoreGoroutines []goleak.Option
	// BurstRounds is the number of rounds of each burst case (default
	// 300). A backend whose Put or Delete is slow (a
	// Nacos-protocol server shows a write only at its next refresh tick)
	// may run fewer.
	BurstRounds int
	// BurstSettle bounds how long, after a round's last write, the burst
	// cases wait for the Readable to apply the document the backend holds
	// (default 2 s). A round that does not get there is lost.
	BurstSettle time.Duration
	// BeatInterval is the Instance.Interval of the registry cases (default
	// 200 ms): a backend whose server shows a write late (a Nacos-protocol
	// server's refresh tick) needs longer beats.
	BeatInterval time.Duration
	// RecordExpiry, if not zero, says that the backend removes the record
	// of an instance whose beats stopped (a lease, a TTL) within this long
	// after its last beat; StoppedBeatExpires then waits for it to be gone,
	// not only Stale.
	RecordExpiry time.Duration
}

// Defaults of the Harness's burst settings.
const (
	defaultBurstRounds = 300
	defaultBurstSettle = 2 * time.Second
)

// Backend is one fresh document in the backend under test.
type Backend struct {
	// Source reads the document. If it is a datasource.Watcher the suite
	// checks push delivery; if it is a datasource.Sink, write-back.
	Source datasource.Source
	// Put stores data as the document, the way another client would (not
	// through Source). Required. The suite reads right after Put and
	// Delete: on an eventually consistent backend they must return only
	// once a read through Source shows their result.
	Put func(ctx context.Context, data []byte) error
	// Delete removes the document, the way another client would. Required.
	Delete func(ctx context.Context) error
	// Fault, if not nil, breaks and restores the connection of Source (not
	// that of Put and Delete) for the reconnect and resync cases.
	Fault *Fault
	// Overlay, if not nil, returns Put and Delete (Source is ignored) for
	// the overlay of group beside the document, where the backend's
	// Overlay method says it lives, the way another client would write it;
	// the overlay case needs it.
	Overlay func(group string) Backend
}

// Fault breaks and restores a Source's connection to its server.
type Fault struct {
	// Disconnect cuts the Source off (stop its proxy, kill its session...)
	// and returns once reads through Source fail or block.
	Disconnect func(t *testing.T)
	// Reconnect undoes Disconnect.
	Reconnect func(t *testing.T)
	// Freeze, if not nil, makes the server stop answering while keeping
	// its connections open (a paused process), and returns how to undo it;
	// the case that checks that a Read honours its context needs it.
	Freeze func(t *testing.T) (thaw func())
}

// Run runs the conformance suite against h, one subtest per case. Every
// case that needs a capability the backend lacks (Watcher, Sink, Fault) is
// skipped with a message.
func Run(t *testing.T, h Harness) {
	t.Helper()
	require.NotNil(t, h.New, "Harness.New is required")
	if h.Timeout <= 0 {
		h.Timeout = 10 * time.Second
	}
	if h.BurstRounds <= 0 {
		h.BurstRounds = defaultBurstRounds
	}
	if h.BurstSettle <= 0 {
		h.BurstSettle = defaultBurstSettle
	}
	if h.BeatInterval <= 0 {
		h.BeatInterval = defaultBeatInterval
	}
	s := suite{h: h}
	cases := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"FirstReadPresent", s.firstReadPresent},
		{"FirstReadMissing", s.firstReadMissing},
		{"UpdateThroughWatch", s.updateThroughWatch},
		{"UpdateThroughPoll", s.updateThroughPoll},
		{"BurstLatestWins", s.burstLatestWins},
		{"BurstCreateDelete", s.burstCreateDelete},
		{"BurstRevert", s.burstRevert},
		{"EmptyDocumentClears", s.emptyDocumentClears},
		{"DeleteClears", s.deleteClears},
		{"DeleteKeptWithOption", s.deleteKept},
		{"Recreate", s.recreate},
		{"UndecodableKeepsLastGood", s.undecodableKeepsLastGood},
		{"InvalidKeepsLastGood", s.invalidKeepsLastGood},
		{"UndecodableReplaced", s.undecodableReplaced},
		{"WriteRoundTrip", s.writeRoundTrip},
		{"WriteCreate", s.writeCreate},
		{"WriteConflict", s.writeConflict},
		{"SinkConflictOneWinner", s.sinkConflictOneWinner},
		{"UpdateConcurrentLosesNothing", s.updateConcurrent},
		{"SharedWritableKeepsEdits", s.sharedWritable},
		{"CloseWaitsNoLeak", s.closeWaits},
		{"CloseStopsWatch", s.closeStopsWatch},
		{"ReconnectResync", s.reconnectResync},
		{"OverlayReplacesBase", s.overlay},
		{"OverlaysListed", s.overlaysListed},
		{"ReadHonoursContextWhileFrozen", s.readWhileFrozen},
		{"CallsCutShortByContext", s.callsCutShort},
		{"DeleteCompareAndSet", s.deleteCompareAndSet},
		{"RegisterListed", s.registerListed},
		{"BeatKeepsIt", s.beatKeepsIt},
		{"CloseUnregisters", s.closeUnregisters},
		{"StoppedBeatExpires", s.stoppedBeatExpires},
		{"RegistryClosed", s.registryClosed},
	}
	for _, c := range cases {
		t.Run(c.name, c.fn)
	}
}

type suite struct{ h Harness }

// ---- the document type of the suite: a JSON array of strings ----

type doc = []string

type codec struct{}

func (codec) Convert(data []byte) (doc, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d doc
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if d == nil {
		return nil, errors.New("decode: want a JSON array")
	}
	return d, nil
}

func (codec) Encode(d doc) ([]byte, error) {
	if d == nil {
		d = doc{}
	}
	return json.Marshal(d)
}

func enc(d ...string) []byte {
	b, _ := codec{}.Encode(doc(d))
	return b
}

// errInvalid is what the suite's rule manager returns for a rule "invalid".
var errInvalid = errors.New("rule \"invalid\" is not allowed")

// manager stands for a RuleManager: it validates every value set on the
// property, keeps the last valid one, and returns an error for others.
type manager struct {
	mu    sync.Mutex
	rules doc
	has   bool
}

func (m *manager) listen(v doc) error {
	if slices.Contains(v, "invalid") {
		return errInvalid
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules, m.has = slices.Clone(v), true
	return nil
}

func (m *manager) get() (doc, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rules, m.has
}

// ---- helpers ----

func (s suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 4*s.h.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// readable starts a Readable over src with the suite's fast timings.
func (s suite) readable(t *testing.T, src datasource.Source, m *manager, opts ...datasource.Option) *datasource.Readable[doc] {
	t.Helper()
	return s.readableOver(t, src, m, opts, nil)
}

// readableOver is readable with options that win over Harness.Options.
func (s suite) readableOver(t *testing.T, src datasource.Source, m *manager, opts, over []datasource.Option) *datasource.Readable[doc] {
	t.Helper()
	all := []datasource.Option{
		datasource.WithName(t.Name()),
		datasource.WithPollInterval(20 * time.Millisecond),
		datasource.WithReconcileInterval(time.Hour), // pushes must arrive by themselves
		datasource.WithBackoff(10*time.Millisecond, 200*time.Millisecond),
	}
	all = append(all, opts...)
	all = append(all, s.h.Options...)
	all = append(all, over...)
	r := datasource.NewReadable[doc](src, codec{}, all...)
	if m != nil {
		r.Property().Listen(m.listen)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func (s suite) writable(t *testing.T, b Backend, opts ...datasource.Option) *datasource.Writable[doc] {
	t.Helper()
	sink, ok := b.Source.(datasource.Sink)
	if !ok {
		t.Skipf("%T is not a datasource.Sink", b.Source)
	}
	all := append([]datasource.Option{datasource.WithName(t.Name()), datasource.WithUpdateAttempts(100)}, opts...)
	all = append(all, s.h.Options...)
	return datasource.NewWritable[doc](sink, codec{}, all...)
}

func (s suite) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, s.h.Timeout, 2*time.Millisecond, "waited %v for %s", s.h.Timeout, what)
}

func (s suite) waitRules(t *testing.T, m *manager, want doc) {
	t.Helper()
	s.eventually(t, fmt.Sprintf("rules %q", want), func() bool {
		got, ok := m.get()
		return ok && slices.Equal(got, want) && (got == nil) == (want == nil)
	})
}

// readUntil reads b.Source until a read succeeds and the snapshot
// satisfies cond, and returns that snapshot. The contract does not promise
// read-after-write (a Source may be eventually consistent), so a case that
// reads right after a write waits for the write to show.
func (s suite) readUntil(t *testing.T, b Backend, what string, cond func(datasource.Snapshot) bool) datasource.Snapshot {
	t.Helper()
	var mu sync.Mutex
	var snap datasource.Snapshot
	s.eventually(t, what, func() bool {
		got, err := b.Source.Read(s.ctx(t))
		if err != nil || !cond(got) {
			return false
		}
		mu.Lock()
		snap = got
		mu.Unlock()
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	return snap
}

// readValue reads through w until it returns want (waiting out reads
// that do not show the last write yet) and returns its revision.
func (s suite) readValue(t *testing.T, w *datasource.Writable[doc], want doc) string {
	t.Helper()
	var mu sync.Mutex
	var rev string
	var last doc
	var lastErr error
	ok := poll(s.ctx(t), s.h.Timeout, func() bool {
		v, r, err := w.Read(s.ctx(t))
		mu.Lock()
		defer mu.Unlock()
		last, lastErr = v, err
		if err != nil || !slices.Equal(v, want) || (v == nil) != (want == nil) {
			return false
		}
		rev = r
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	require.True(t, ok, "waited %v for Writable.Read to return %q; last: %q, %v", s.h.Timeout, want, last, lastErr)
	return rev
}

// poll calls cond every millisecond or so until it holds (true), within
// passes or ctx ends (false).
func poll(ctx context.Context, within time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
}

// changedFrom is the condition "a read shows a document other than data":
// a write over data has become visible (whatever it wrote). The cases that
// use it delete nothing, so a "missing" read is not the write showing (an
// eventually consistent server may answer so for a moment).
func changedFrom(data []byte) func(datasource.Snapshot) bool {
	return func(s datasource.Snapshot) bool { return !s.Missing && !bytes.Equal(s.Data, data) }
}

func (s suite) put(t *testing.T, b Backend, data []byte) {
	t.Helper()
	require.NoError(t, b.Put(s.ctx(t), data), "Backend.Put")
}

func (s suite) del(t *testing.T, b Backend) {
	t.Helper()
	require.NoError(t, b.Delete(s.ctx(t)), "Backend.Delete")
}

// needWatch skips t unless b.Source is a Watcher that can watch here.
func (s suite) needWatch(t *testing.T, b Backend) {
	t.Helper()
	w, ok := b.Source.(datasource.Watcher)
	if !ok {
		t.Skipf("%T is not a datasource.Watcher (this case tests pushes; polling would hide a lost one)", b.Source)
	}
	// A Watch that cannot work here says so at once.
	probe, cancel := context.WithTimeout(s.ctx(t), 50*time.Millisecond)
	err := w.Watch(probe, datasource.Snapshot{Missing: true}, func(datasource.Snapshot) {})
	cancel()
	if errors.Is(err, datasource.ErrWatchUnsupported) {
		t.Skipf("the backend cannot watch here (this case tests pushes; polling would hide a lost one): %v", err)
	}
}

// noWatch hides a Source's Watcher and Sink, leaving a polled Source.
type noWatch struct{ datasource.Source }

// ---- cases ----

func (s suite) firstReadPresent(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("a", "b"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	got, ok := m.get()
	require.True(t, ok, "Start returned before the first value was applied")
	assert.Equal(t, doc{"a", "b"}, got)
	st := r.Status()
	assert.NotEmpty(t, st.Revision)
	assert.False(t, st.AppliedAt.IsZero())
	assert.False(t, st.Missing)
	assert.False(t, st.FromCache)
	assert.NoError(t, st.Err)
	assert.Zero(t, st.Failures)
}

func (s suite) firstReadMissing(t *testing.T) {
	b := s.h.New(t)
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)), "a missing document is not an error")
	got, ok := m.get()
	require.True(t, ok, "a missing document applies the zero value")
	assert.Nil(t, got)
	st := r.Status()
	assert.True(t, st.Missing)
	assert.NoError(t, st.Err)
	assert.Empty(t, st.Revision)

	s.put(t, b, enc("created"))
	s.waitRules(t, m, doc{"created"})
}

func (s suite) updateThroughWatch(t *testing.T) {
	b := s.h.New(t)
	s.needWatch(t, b)
	s.put(t, b, enc("v1"))
	m := &manager{}
	// Polling and reconciling are an hour apart: only a push can deliver.
	r := s.readable(t, b.Source, m, datasource.WithPollInterval(time.Hour))
	require.NoError(t, r.Start(s.ctx(t)))
	s.eventually(t, "a watch to run", func() bool { return r.Status().Watching })
	for i := 2; i <= 5; i++ {
		v := doc{fmt.Sprintf("v%d", i)}
		s.put(t, b, enc(v...))
		s.waitRules(t, m, v)
	}
	assert.NotEmpty(t, r.Status().Revision)
	assert.NoError(t, r.Status().WatchErr)
}

func (s suite) updateThroughPoll(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("v1"))
	m := &manager{}
	r := s.readable(t, noWatch{b.Source}, m)
	require.NoError(t, r.Start(s.ctx(t)))
	assert.False(t, r.Status().Watching)
	s.put(t, b, enc("v2"))
	s.waitRules(t, m, doc{"v2"})
}

func (s suite) burstLatestWins(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("start"))
	m := &manager{}
	r := s.readable(t, b.Source, m, datasource.WithReconcileInterval(100*time.Millisecond))
	require.NoError(t, r.Start(s.ctx(t)))
	var last doc
	for i := range 50 {
		last = doc{fmt.Sprintf("burst-%d", i)}
		s.put(t, b, enc(last...))
	}
	s.waitRules(t, m, last)
}

func (s suite) emptyDocumentClears(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("a"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	s.put(t, b, []byte("[]"))
	s.waitRules(t, m, doc{})
	assert.False(t, r.Status().Missing, "an empty document is not a missing one")
}

func (s suite) deleteClears(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("a"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	s.del(t, b)
	s.waitRules(t, m, nil)
	st := r.Status()
	assert.True(t, st.Missing)
	assert.NoError(t, st.Err)
	assert.Empty(t, st.Revision)
}

func (s suite) deleteKept(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("keep"))
	m := &manager{}
	r := s.readable(t, b.Source, m, datasource.WithKeepOnMissing())
	require.NoError(t, r.Start(s.ctx(t)))
	s.del(t, b)
	s.eventually(t, "the delete to be seen", func() bool { return r.Status().Missing })
	got, _ := m.get()
	assert.Equal(t, doc{"keep"}, got, "WithKeepOnMissing keeps the rules")
	assert.NoError(t, r.Status().Err)
	s.put(t, b, enc("back"))
	s.waitRules(t, m, doc{"back"})
	assert.False(t, r.Status().Missing)
}

func (s suite) recreate(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("one"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	for range 3 {
		s.del(t, b)
		s.waitRules(t, m, nil)
		s.put(t, b, enc("one")) // the same content again is a change after a delete
		s.waitRules(t, m, doc{"one"})
	}
}

func (s suite) undecodableKeepsLastGood(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("good"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	good := r.Status().Revision

	s.put(t, b, []byte(`{"not": "an array"`))
	s.eventually(t, "the bad document to be rejected", func() bool { return r.Status().Err != nil })
	st := r.Status()
	assert.ErrorContains(t, st.Err, "decode")
	assert.GreaterOrEqual(t, st.Failures, 1)
	assert.Equal(t, good, st.Revision, "Status.Revision stays the applied one")
	got, _ := m.get()
	assert.Equal(t, doc{"good"}, got)
	v, _ := r.Property().Get()
	assert.Equal(t, doc{"good"}, v, "an undecodable document is not set on the property")

	s.put(t, b, enc("better"))
	s.waitRules(t, m, doc{"better"})
	s.eventually(t, "the error to clear", func() bool { st := r.Status(); return st.Err == nil && st.Failures == 0 })
}

func (s suite) invalidKeepsLastGood(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("good"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))

	s.put(t, b, enc("x", "invalid"))
	s.eventually(t, "the invalid document to be rejected (Status.Err wraps the manager's error)", func() bool {
		return errors.Is(r.Status().Err, errInvalid)
	})
	assert.GreaterOrEqual(t, r.Status().Failures, 1)
	got, _ := m.get()
	assert.Equal(t, doc{"good"}, got)

	s.put(t, b, enc("fixed"))
	s.waitRules(t, m, doc{"fixed"})
	s.eventually(t, "the error to clear", func() bool { return r.Status().Err == nil })
}

func (s suite) writeRoundTrip(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("old"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	w := s.writable(t, b, datasource.WaitApplied(r, s.h.Timeout))

	rev := s.readValue(t, w, doc{"old"})
	require.NotEmpty(t, rev, "Writable.Read returns the revision of a present document")
	require.NoError(t, w.Write(s.ctx(t), doc{"new", "rules"}, rev))
	got, _ := m.get()
	assert.Equal(t, doc{"new", "rules"}, got, "WaitApplied returns once the rules run")
	snap := s.readUntil(t, b, "the Source to read the written document", changedFrom(enc("old")))
	assert.JSONEq(t, `["new","rules"]`, string(snap.Data))
	rev = s.readValue(t, w, doc{"new", "rules"})
	assert.Equal(t, rev, r.Status().Revision)

	// A value the manager rejects is persisted but reported as not applied.
	err := w.Write(s.ctx(t), doc{"invalid"}, rev)
	require.ErrorIs(t, err, datasource.ErrNotApplied)
	require.ErrorIs(t, err, errInvalid)
	got, _ = m.get()
	assert.Equal(t, doc{"new", "rules"}, got)
}

func (s suite) writeCreate(t *testing.T) {
	b := s.h.New(t)
	w := s.writable(t, b)
	v, rev, err := w.Read(s.ctx(t))
	require.NoError(t, err)
	assert.Nil(t, v, "Writable.Read of a missing document is the zero value")
	assert.Empty(t, rev, "Writable.Read of a missing document has no revision")
	require.NoError(t, w.Write(s.ctx(t), doc{"created"}, ""), `Write with revision "" creates a missing document`)
	snap := s.readUntil(t, b, "the created document to be read", func(s datasource.Snapshot) bool { return !s.Missing })
	assert.JSONEq(t, `["created"]`, string(snap.Data))

	// Creating over a document that exists is a conflict, through the
	// Writable and through the Sink, and stores nothing.
	require.ErrorIs(t, w.Write(s.ctx(t), doc{"again"}, ""), datasource.ErrConflict)
	sink := b.Source.(datasource.Sink)
	_, err = sink.Write(s.ctx(t), enc("again"), "")
	assert.ErrorIs(t, err, datasource.ErrConflict)
	s.readValue(t, w, doc{"created"})
}

func (s suite) writeConflict(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("base"))
	w1, w2 := s.writable(t, b), s.writable(t, b)
	rev1 := s.readValue(t, w1, doc{"base"})
	rev2 := s.readValue(t, w2, doc{"base"})
	require.Equal(t, rev1, rev2, "two reads of one document give one revision")

	require.NoError(t, w1.Write(s.ctx(t), doc{"base", "one"}, rev1))
	err := w2.Write(s.ctx(t), doc{"base", "two"}, rev2)
	require.ErrorIs(t, err, datasource.ErrConflict, "the second writer must not overwrite unseen")
	snap := s.readUntil(t, b, "a write over the base document to be read", changedFrom(enc("base")))
	assert.JSONEq(t, `["base","one"]`, string(snap.Data), "nothing lost")
	// A revision that was current once is stale now, for its own writer too.
	require.ErrorIs(t, w1.Write(s.ctx(t), doc{"base", "again"}, rev1), datasource.ErrConflict)

	// An edit by another client is a conflict too: w1 reads the current
	// document (waiting out reads that do not show its write yet), then
	// another client changes it.
	rev := s.readValue(t, w1, doc{"base", "one"})
	s.put(t, b, enc("external"))
	require.ErrorIs(t, w1.Write(s.ctx(t), doc{"mine"}, rev), datasource.ErrConflict)
	snap = s.readUntil(t, b, "the external edit to be read", changedFrom(enc("base", "one")))
	assert.JSONEq(t, `["external"]`, string(snap.Data), "nothing lost")
}

// sharedWritable: the revision a Write expects is its caller's, so a
// Writable shared by goroutines never writes over an edit one of them
// made after another read.
func (s suite) sharedWritable(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("base"))
	w := s.writable(t, b)

	// Goroutine A (this one) reads...
	rev := s.readValue(t, w, doc{"base"})
	// ... goroutine B updates through the same Writable...
	updated := make(chan error, 1)
	go func() {
		updated <- w.Update(s.ctx(t), func(d doc) (doc, error) { return append(slices.Clone(d), "edit-b"), nil })
	}()
	select {
	case err := <-updated:
		require.NoError(t, err, "B's Update")
	case <-s.ctx(t).Done():
		t.Fatal("B's Update did not return")
	}
	// ... and A's write, over what A read, must not erase B's edit.
	err := w.Write(s.ctx(t), doc{"base", "edit-a"}, rev)
	require.ErrorIs(t, err, datasource.ErrConflict, "A wrote over B's edit")
	snap := s.readUntil(t, b, "B's edit to be read", changedFrom(enc("base")))
	assert.JSONEq(t, `["base","edit-b"]`, string(snap.Data), "B's edit is in the document")
}

func (s suite) sinkConflictOneWinner(t *testing.T) {
	b := s.h.New(t)
	sink, ok := b.Source.(datasource.Sink)
	if !ok {
		t.Skipf("%T is not a datasource.Sink", b.Source)
	}
	s.put(t, b, enc("base"))
	snap := s.readUntil(t, b, "the base document to be read", func(s datasource.Snapshot) bool {
		return !s.Missing && bytes.Equal(s.Data, enc("base"))
	})
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = sink.Write(s.ctx(t), enc(fmt.Sprintf("writer-%d", i)), snap.Revision)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			require.Equal(t, -1, winner, "two writers succeeded against one revision")
			winner = i
			continue
		}
		require.ErrorIs(t, err, datasource.ErrConflict)
	}
	require.NotEqual(t, -1, winner, "one writer must succeed")
	now := s.readUntil(t, b, "the winner's document to be read", changedFrom(enc("base")))
	assert.JSONEq(t, fmt.Sprintf(`["writer-%d"]`, winner), string(now.Data))
}

func (s suite) updateConcurrent(t *testing.T) {
	b := s.h.New(t)
	if _, ok := b.Source.(datasource.Sink); !ok {
		t.Skipf("%T is not a datasource.Sink", b.Source)
	}
	s.put(t, b, enc())
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for i := range writers {
		w := s.writable(t, b)
		wg.Go(func() {
			for j := range each {
				item := fmt.Sprintf("w%d-%d", i, j)
				errs <- w.Update(s.ctx(t), func(d doc) (doc, error) { return append(slices.Clone(d), item), nil })
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// The last update may not show at once: wait until a read has as many
	// items as there were updates (a lost update never gets there).
	snap := s.readUntil(t, b, fmt.Sprintf("a document with all %d updates", writers*each), func(snap datasource.Snapshot) bool {
		d, err := codec{}.Convert(snap.Data)
		return err == nil && len(d) >= writers*each
	})
	got, err := codec{}.Convert(snap.Data)
	require.NoError(t, err)
	assert.Len(t, got, writers*each, "every update is in the document, once")
	for i := range writers {
		for j := range each {
			assert.Contains(t, got, fmt.Sprintf("w%d-%d", i, j))
		}
	}
}

func (s suite) closeWaits(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("a"))
	ignore := append([]goleak.Option{goleak.IgnoreCurrent()}, s.h.IgnoreGoroutines...)
	m := &manager{}
	r := s.readable(t, b.Source, m, datasource.WithReconcileInterval(10*time.Millisecond))
	require.NoError(t, r.Start(s.ctx(t)))
	s.put(t, b, enc("b"))
	s.waitRules(t, m, doc{"b"})

	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close is idempotent")
	require.ErrorIs(t, r.Start(s.ctx(t)), datasource.ErrClosed)
	// A client tears a cancelled watch stream down on its own goroutines
	// (and an in-process server its side of it), so they may take a moment
	// on a loaded machine; one that never ends still fails.
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := goleak.Find(ignore...)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines still running 10 s after Close: %v", err)
		}
	}

	// Nothing runs after Close: a change is not applied.
	s.put(t, b, enc("after-close"))
	got, _ := m.get()
	assert.Equal(t, doc{"b"}, got)
}

// closeStopsWatch: a Watch runs (a change reaches it), then the Source
// is closed while the Watch's context goes on: the Watch returns ErrClosed,
// and so do later calls.
func (s suite) closeStopsWatch(t *testing.T) {
	b := s.h.New(t)
	s.needWatch(t, b)
	w := b.Source.(datasource.Watcher)
	s.put(t, b, enc("before"))
	from := s.readUntil(t, b, "the document to be read", func(snap datasource.Snapshot) bool {
		return !snap.Missing && bytes.Equal(snap.Data, enc("before"))
	})
	hinted := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		// t.Context ends with the test only: nothing but Close can stop
		// this Watch in time.
		done <- w.Watch(t.Context(), from, func(datasource.Snapshot) {
			select {
			case hinted <- struct{}{}:
			default:
			}
		})
	}()
	s.put(t, b, enc("after"))
	select {
	case <-hinted: // the Watch runs
	case err := <-done:
		t.Fatalf("Watch returned before Close: %v", err)
	case <-time.After(s.h.Timeout):
		t.Fatalf("waited %v for the Watch to report a change", s.h.Timeout)
	}

	require.NoError(t, b.Source.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, datasource.ErrClosed, "what Watch returns when its Source is closed")
	case <-time.After(s.h.Timeout):
		t.Fatalf("Source.Close did not stop a running Watch within %v", s.h.Timeout)
	}
	require.NoError(t, b.Source.Close(), "Close is idempotent")
	_, err := b.Source.Read(s.ctx(t))
	require.ErrorIs(t, err, datasource.ErrClosed, "Read after Close")
	err = w.Watch(s.ctx(t), from, func(datasource.Snapshot) {})
	require.ErrorIs(t, err, datasource.ErrClosed, "Watch after Close")
	if sink, ok := b.Source.(datasource.Sink); ok {
		_, err = sink.Write(s.ctx(t), enc("closed"), from.Revision)
		require.ErrorIs(t, err, datasource.ErrClosed, "Write after Close")
	}
}

func (s suite) reconnectResync(t *testing.T) {
	b := s.h.New(t)
	if b.Fault == nil {
		t.Skip("the backend offers no fault hook")
	}
	s.put(t, b, enc("before"))
	m := &manager{}
	r := s.readable(t, b.Source, m, datasource.WithReadTimeout(time.Second))
	require.NoError(t, r.Start(s.ctx(t)))

	b.Fault.Disconnect(t)
	s.put(t, b, enc("while-away")) // a change the Source cannot be told about
	s.put(t, b, enc("while-away-2"))
	b.Fault.Reconnect(t)
	s.waitRules(t, m, doc{"while-away-2"})
	s.eventually(t, "the status to recover", func() bool { st := r.Status(); return st.Err == nil && st.Failures == 0 })

	s.put(t, b, enc("after"))
	s.waitRules(t, m, doc{"after"})
	if strings.TrimSpace(r.Status().Revision) == "" {
		t.Error("Status.Revision empty after resync")
	}
}

// ---- bursts ----

// burstCreateDelete: rounds of "create, then delete", back to back. Each
// round must end with the document missing and no rules in force, as the
// backend holds it, however the pushes of its two writes interleave with
// the Readable's reads.
func (s suite) burstCreateDelete(t *testing.T) {
	s.burst(t, "create → delete", nil, func(ctx context.Context, b Backend, i int) error {
		if err := b.Put(ctx, enc("created", strconv.Itoa(i))); err != nil {
			return fmt.Errorf("Backend.Put: %w", err)
		}
		if err := b.Delete(ctx); err != nil {
			return fmt.Errorf("Backend.Delete: %w", err)
		}
		return nil
	})
}

// burstRevert: rounds of "A → B → A", back to back (an edit and its undo).
// Each round must end with A in force, at the revision the backend holds,
// although A may be the document the Readable read last before the round.
func (s suite) burstRevert(t *testing.T) {
	a := enc("a")
	s.burst(t, "A → B → A", a, func(ctx context.Context, b Backend, i int) error {
		if err := b.Put(ctx, enc("b", strconv.Itoa(i))); err != nil {
			return fmt.Errorf("Backend.Put B: %w", err)
		}
		if err := b.Put(ctx, a); err != nil {
			return fmt.Errorf("Backend.Put A: %w", err)
		}
		return nil
	})
}

// burstMaxLost ends a burst case early: past this many lost rounds the
// Readable is plainly broken, and each loss costs a BurstSettle wait.
const burstMaxLost = 10

// burst runs Harness.BurstRounds rounds of writes against a Readable that
// only pushes can keep in step: polling and reconciling are off, so a lost
// hint stays lost. start, if not nil, is put (and applied) first. After
// each round it reads the document the backend holds through the Source
// and waits, up to Harness.BurstSettle, for the rules and Status to show
// it; then it reads the backend again (a fence: a read of the Readable
// that was still in flight has had time to land) and waits again, so a
// stale read that lands after the first match is caught too.
func (s suite) burst(t *testing.T, what string, start []byte, round func(ctx context.Context, b Backend, i int) error) {
	b := s.h.New(t)
	s.needWatch(t, b)
	if start != nil {
		s.put(t, b, start)
	}
	m := &manager{}
	// No polling, no reconciling, whatever Harness.Options say: a lost push
	// is never papered over.
	r := s.readableOver(t, b.Source, m, nil, []datasource.Option{
		datasource.WithPollInterval(time.Hour),
		datasource.WithReconcileInterval(0),
	})
	require.NoError(t, r.Start(s.ctx(t)))
	s.eventually(t, "a watch to run", func() bool { return r.Status().Watching })

	withTimeout := func(f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(t.Context(), s.h.Timeout)
		defer cancel()
		return f(ctx)
	}
	read := func(when string) datasource.Snapshot {
		var snap datasource.Snapshot
		err := withTimeout(func(ctx context.Context) (err error) {
			snap, err = b.Source.Read(ctx)
			return err
		})
		require.NoError(t, err, "%s: Source.Read", when)
		return snap
	}
	// settles waits for the rules and Status to show snap.
	settles := func(snap datasource.Snapshot) bool {
		want, rev := doc(nil), ""
		if !snap.Missing {
			var err error
			want, err = codec{}.Convert(snap.Data)
			require.NoError(t, err, "the backend holds a document the suite did not write")
			rev = snap.Revision
			if rev == "" {
				rev = contentrev.Of(snap.Data)
			}
		}
		return poll(t.Context(), s.h.BurstSettle, func() bool {
			got, ok := m.get()
			st := r.Status()
			return ok && st.Err == nil && st.Missing == snap.Missing && st.Revision == rev &&
				(got == nil) == (want == nil) && slices.Equal(got, want)
		})
	}
	if start != nil {
		require.True(t, settles(read("start")), "the first document to be applied: %s", describeApplied(r, m))
	}

	var lost []string
	rounds := 0
	began := time.Now()
	for i := range s.h.BurstRounds {
		require.NoError(t, withTimeout(func(ctx context.Context) error { return round(ctx, b, i) }), "round %d", i)
		rounds++
		when := fmt.Sprintf("round %d", i)
		snap := read(when)
		if !settles(snap) {
			lost = append(lost, fmt.Sprintf("round %d: the backend holds %s, but %v later %s",
				i, describeSnapshot(snap), s.h.BurstSettle, describeApplied(r, m)))
			t.Log(lost[len(lost)-1])
		} else if snap = read(when); !settles(snap) {
			lost = append(lost, fmt.Sprintf("round %d: the backend holds %s; it was in force, then %v later %s",
				i, describeSnapshot(snap), s.h.BurstSettle, describeApplied(r, m)))
			t.Log(lost[len(lost)-1])
		}
		if len(lost) >= burstMaxLost {
			t.Logf("stopping after %d lost rounds", len(lost))
			break
		}
	}
	elapsed := time.Since(began)
	t.Logf("%s: %d rounds of %d, %d lost, in %v (%v a round)",
		what, rounds, s.h.BurstRounds, len(lost), elapsed.Round(time.Millisecond), (elapsed / time.Duration(max(rounds, 1))).Round(time.Microsecond))
	if len(lost) > 0 {
		t.Errorf("%s: %d of %d rounds lost (the Readable did not end on the document the backend holds within %v; polling and reconciling are off):\n%s",
			what, len(lost), rounds, s.h.BurstSettle, strings.Join(lost, "\n"))
	}
}

func describeSnapshot(snap datasource.Snapshot) string {
	if snap.Missing {
		return "no document (missing)"
	}
	return fmt.Sprintf("%s at revision %q", snap.Data, snap.Revision)
}

func describeApplied(r *datasource.Readable[doc], m *manager) string {
	got, ok := m.get()
	rules := "none applied"
	switch {
	case ok && got == nil:
		rules = "no rules (missing)"
	case ok:
		rules = fmt.Sprintf("%q", got)
	}
	st := r.Status()
	return fmt.Sprintf("the rules in force are %s; Status: revision %q, missing %v, err %v, watching %v, watch err %v",
		rules, st.Revision, st.Missing, st.Err, st.Watching, st.WatchErr)
}

// overlay: a Readable with WithOverlay follows the overlay while it
// exists, the base otherwise, and pushes of either reach it.
func (s suite) overlay(t *testing.T) {
	b := s.h.New(t)
	if b.Overlay == nil {
		t.Skip("Backend.Overlay is nil")
	}
	ov := b.Overlay("canary")
	s.put(t, b, enc("base"))
	canary := &manager{}
	rc := s.readable(t, b.Source, canary, datasource.WithOverlay("canary"))
	require.NoError(t, rc.Start(s.ctx(t)))
	s.waitRules(t, canary, doc{"base"})
	assert.NotContains(t, rc.Status().Revision, "overlay:", "no overlay yet: the base's revision")

	s.put(t, ov, enc("canary"))
	s.waitRules(t, canary, doc{"canary"})
	assert.True(t, strings.HasPrefix(rc.Status().Revision, "overlay:canary:"), "revision %q", rc.Status().Revision)

	s.put(t, b, enc("base-2"))
	s.put(t, ov, enc("canary-2"))
	s.waitRules(t, canary, doc{"canary-2"})

	s.del(t, ov)
	s.waitRules(t, canary, doc{"base-2"})
	assert.NoError(t, rc.Status().Err)

	// A group that cannot name an overlay fails Start, saying why.
	bad := s.readable(t, s.h.New(t).Source, &manager{}, datasource.WithOverlay("no/slashes"))
	err := bad.Start(s.ctx(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "overlay group")
}

// lister is the Overlays a backend may have besides the contract (see
// "Implementing a backend" in package datasource): tools list the canary
// overlays of a document with it.
type lister interface {
	Overlays(ctx context.Context) ([]string, error)
}

// overlaysListed: Overlays lists the groups whose overlay exists beside
// the document, sorted, whether the document exists or not, and nothing
// that merely shares the overlays' prefix: a name with no group after it,
// one whose rest cannot be a group, another document's overlay.
func (s suite) overlaysListed(t *testing.T) {
	b := s.h.New(t)
	l, ok := b.Source.(lister)
	if !ok {
		t.Skipf("%T has no Overlays method", b.Source)
	}
	if b.Overlay == nil {
		t.Skip("Backend.Overlay is nil")
	}
	got, err := l.Overlays(s.ctx(t))
	if errors.Is(err, errors.ErrUnsupported) {
		s.overlaysUnsupported(t, b, l)
		return
	}
	require.NoError(t, err)
	assert.Empty(t, got, "a fresh document has no overlays")

	s.put(t, b, enc("base"))
	s.put(t, b.Overlay("canary"), enc("canary"))
	s.put(t, b.Overlay("blue-eu_1"), enc("blue"))
	s.put(t, b.Overlay(""), enc("decoy"))           // the prefix alone
	s.put(t, b.Overlay("canary.tmp"), enc("decoy")) // not a group
	s.waitOverlays(t, l, []string{"blue-eu_1", "canary"})

	s.del(t, b.Overlay("canary"))
	s.waitOverlays(t, l, []string{"blue-eu_1"})
	s.del(t, b) // overlays outlive their document
	s.waitOverlays(t, l, []string{"blue-eu_1"})
	s.del(t, b.Overlay("blue-eu_1"))
	s.waitOverlays(t, l, nil)
	t.Run("AnotherDocument", func(t *testing.T) {
		other := s.h.New(t) // a subtest's: its own name, often this case's and more
		s.put(t, other.Overlay("stranger"), enc("decoy"))
		if ol, ok := other.Source.(lister); ok {
			s.waitOverlays(t, ol, []string{"stranger"})
		}
		s.waitOverlays(t, l, nil)
	})

	require.NoError(t, b.Source.Close())
	_, err = l.Overlays(s.ctx(t))
	require.ErrorIs(t, err, datasource.ErrClosed, "Overlays after Close")
}

// overlaysUnsupported: a server that cannot list overlays (Overlays wraps
// errors.ErrUnsupported) says so every time, with an overlay in place too,
// rather than answer with a list that leaves it out; a closed Source says
// ErrClosed.
func (s suite) overlaysUnsupported(t *testing.T, b Backend, l lister) {
	t.Logf("the server cannot list overlays; checking that it says so")
	s.put(t, b, enc("base"))
	s.put(t, b.Overlay("canary"), enc("canary"))
	got, err := l.Overlays(s.ctx(t))
	require.ErrorIs(t, err, errors.ErrUnsupported, "with an overlay in place, listed %q", got)
	require.NoError(t, b.Source.Close())
	_, err = l.Overlays(s.ctx(t))
	require.ErrorIs(t, err, datasource.ErrClosed, "Overlays after Close")
}

// waitOverlays lists the overlays until they are want (a server may show
// a write to a listing later than to a read).
func (s suite) waitOverlays(t *testing.T, l lister, want []string) {
	t.Helper()
	var got []string
	var err error
	ok := poll(s.ctx(t), s.h.Timeout, func() bool {
		got, err = l.Overlays(s.ctx(t))
		return err == nil && slices.Equal(got, want)
	})
	require.True(t, ok, "waited %v for the overlays %q; the last listing: %q, err %v", s.h.Timeout, want, got, err)
}

// readWhileFrozen: a Read returns when its context ends although the
// server does not answer (a backend whose client takes no context runs the
// call aside), so a blocked read never blocks the Readable's Close.
func (s suite) readWhileFrozen(t *testing.T) {
	b := s.h.New(t)
	if b.Fault == nil || b.Fault.Freeze == nil {
		t.Skip("Backend.Fault.Freeze is nil")
	}
	s.put(t, b, enc("a"))
	s.readUntil(t, b, "the document", func(snap datasource.Snapshot) bool { return !snap.Missing })
	t.Cleanup(func() { _ = b.Source.Close() }) // after thaw: the abandoned call ends
	thaw := b.Fault.Freeze(t)
	defer thaw()
	ctx, cancel := context.WithTimeout(s.ctx(t), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.Source.Read(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(s.h.Timeout):
		t.Fatalf("Read did not return within %v of its context's end", s.h.Timeout)
	}
}

// callsCutShortRounds is how many rounds callsCutShort makes of each call.
const callsCutShortRounds = 300

// callsCutShort: Read, Instances (a Registry) and Overlays (a lister)
// called with contexts that end before, during and after the exchange
// with the server, callsCutShortRounds times each. Every call returns what
// is there or fails because its context ended, never anything else; the
// Source still answers afterwards and Close waits for the calls it left
// behind. Run with -race: a backend that runs a call aside (it takes no
// context) and lets it write what the caller reads after returning early
// races here.
func (s suite) callsCutShort(t *testing.T) {
	b := s.h.New(t)
	s.put(t, b, enc("a"))
	s.readUntil(t, b, "the document", holds(enc("a")))
	type call struct {
		name string
		fn   func(ctx context.Context) error
	}
	calls := []call{{"Read", func(ctx context.Context) error {
		snap, err := b.Source.Read(ctx)
		if err == nil && !holds(enc("a"))(snap) {
			return fmt.Errorf("read %q (missing %v), want %q", snap.Data, snap.Missing, enc("a"))
		}
		return err
	}}}
	if reg, ok := b.Source.(datasource.Registry); ok {
		s.register(t, reg, s.instance("cut-short"))
		s.waitInstances(t, reg, "the instance", func(l []datasource.Instance) bool { return len(l) == 1 })
		calls = append(calls, call{"Instances", func(ctx context.Context) error {
			l, err := reg.Instances(ctx)
			if err == nil && (len(l) != 1 || l[0].ID != "cut-short") {
				return fmt.Errorf("listed %+v, want the instance cut-short", l)
			}
			return err
		}})
	}
	if l, ok := b.Source.(lister); ok {
		if _, err := l.Overlays(s.ctx(t)); !errors.Is(err, errors.ErrUnsupported) {
			calls = append(calls, call{"Overlays", func(ctx context.Context) error {
				got, err := l.Overlays(ctx)
				if err == nil && len(got) != 0 {
					return fmt.Errorf("listed overlays %q, want none", got)
				}
				return err
			}})
		}
	}
	for _, c := range calls {
		// A call's own duration, uncut (the shortest of five), spreads the
		// deadlines around it.
		took := s.h.Timeout
		for range 5 {
			start := time.Now()
			require.NoError(t, c.fn(s.ctx(t)), "%s, uncut", c.name)
			took = min(took, time.Since(start))
		}
		cut, whole := 0, 0
		for i := range callsCutShortRounds {
			var within time.Duration
			switch i % 10 {
			case 0: // ended before the call
			case 1:
				within = s.h.Timeout
			default:
				within = rand.N(2*took + 1)
			}
			ctx, cancel := context.WithTimeout(s.ctx(t), within)
			err := c.fn(ctx)
			// Past the deadline counts as ended although the context's
			// timer may not have fired yet: a server that was handed the
			// deadline (gRPC) can fail first.
			deadline, _ := ctx.Deadline()
			ended := ctx.Err() != nil || !time.Now().Before(deadline)
			cancel()
			if err != nil {
				require.True(t, ended, "%s, round %d: failed with its context still running: %v", c.name, i, err)
				cut++
				continue
			}
			whole++
		}
		t.Logf("%s (%v uncut): %d calls cut short, %d whole", c.name, took.Round(time.Microsecond), cut, whole)
		assert.Positive(t, cut, "%s: no call was cut short", c.name)
		assert.Positive(t, whole, "%s: no call completed", c.name)
		require.NoError(t, c.fn(s.ctx(t)), "%s, after the rounds", c.name)
	}
	require.NoError(t, b.Source.Close(), "Close waits for the calls left behind")
}

// deleter is the Delete a backend may have besides the contract (see
// "Implementing a backend" in package datasource): tools remove a
// document with it.
type deleter interface {
	Delete(ctx context.Context, expectRevision string) error
}

// holds is the condition "a read shows data".
func holds(data []byte) func(datasource.Snapshot) bool {
	return func(s datasource.Snapshot) bool { return !s.Missing && bytes.Equal(s.Data, data) }
}

// deleteCompareAndSet: Delete removes the document only at the revision
// its caller expects ("" meaning any), a Readable sees it gone, deleting
// is idempotent, and a closed Source refuses it.
func (s suite) deleteCompareAndSet(t *testing.T) {
	b := s.h.New(t)
	d, ok := b.Source.(deleter)
	if !ok {
		t.Skipf("%T has no Delete method", b.Source)
	}
	s.put(t, b, enc("one"))
	stale := s.readUntil(t, b, "the first document to be read", holds(enc("one")))
	s.put(t, b, enc("two"))
	cur := s.readUntil(t, b, "the second document to be read", holds(enc("two")))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	s.waitRules(t, m, doc{"two"})

	require.ErrorIs(t, d.Delete(s.ctx(t), stale.Revision), datasource.ErrConflict, "Delete at a stale revision")
	now, err := b.Source.Read(s.ctx(t))
	require.NoError(t, err)
	assert.True(t, holds(enc("two"))(now), "a refused Delete removes nothing; the document is %s", describeSnapshot(now))

	require.NoError(t, d.Delete(s.ctx(t), cur.Revision), "Delete at the current revision")
	s.readUntil(t, b, "the document to be gone", func(snap datasource.Snapshot) bool { return snap.Missing })
	s.waitRules(t, m, nil) // reconciling is an hour away: the watch (or polling) saw it
	assert.True(t, r.Status().Missing)
	require.NoError(t, d.Delete(s.ctx(t), cur.Revision), "deleting again is not an error")
	require.NoError(t, d.Delete(s.ctx(t), ""), "nor with no revision")

	s.put(t, b, enc("three"))
	s.waitRules(t, m, doc{"three"})
	require.NoError(t, d.Delete(s.ctx(t), ""), `Delete at "" removes whatever is there`)
	s.readUntil(t, b, "the document to be gone again", func(snap datasource.Snapshot) bool { return snap.Missing })
	s.waitRules(t, m, nil)

	require.NoError(t, r.Close()) // closes the Source
	require.ErrorIs(t, d.Delete(s.ctx(t), ""), datasource.ErrClosed, "Delete after Close")
}

// undecodableReplaced: Writable.Read and Update report a document that
// does not decode as a *datasource.DecodeError holding its revision and
// content; Update writes nothing over it; a Write at a revision read
// before it broke is a conflict, a Write at its revision repairs it, and
// the Readable applies the repair.
func (s suite) undecodableReplaced(t *testing.T) {
	b := s.h.New(t)
	w := s.writable(t, b)
	s.put(t, b, enc("good"))
	m := &manager{}
	r := s.readable(t, b.Source, m)
	require.NoError(t, r.Start(s.ctx(t)))
	s.waitRules(t, m, doc{"good"})
	before := s.readValue(t, w, doc{"good"})

	broken := []byte(`{"not": "an array"`)
	s.put(t, b, broken)
	var de *datasource.DecodeError
	var lastErr error
	ok := poll(s.ctx(t), s.h.Timeout, func() bool {
		_, _, lastErr = w.Read(s.ctx(t))
		return errors.As(lastErr, &de)
	})
	require.True(t, ok, "waited %v for Writable.Read to fail with a *datasource.DecodeError; last error %v", s.h.Timeout, lastErr)
	assert.Equal(t, broken, de.Data, "DecodeError.Data is the document")
	assert.NotEmpty(t, de.Revision)
	assert.NotEqual(t, before, de.Revision)
	assert.Error(t, de.Err, "DecodeError.Err is the decoder's")
	assert.ErrorContains(t, lastErr, "decode")

	called := false
	err := w.Update(s.ctx(t), func(d doc) (doc, error) { called = true; return append(d, "over"), nil })
	require.ErrorAs(t, err, &de, "Update over a document that does not decode")
	assert.False(t, called, "Update does not call its function on what it could not read")

	err = w.Write(s.ctx(t), doc{"unseen"}, before)
	require.ErrorIs(t, err, datasource.ErrConflict, "a write at the revision read before the document broke")
	snap := s.readUntil(t, b, "the broken document", func(snap datasource.Snapshot) bool { return !snap.Missing })
	assert.Equal(t, broken, snap.Data, "neither Update nor the stale Write changed the document")
	s.eventually(t, "the Readable to reject the broken document", func() bool { return r.Status().Err != nil })
	got, _ := m.get()
	assert.Equal(t, doc{"good"}, got, "the running rules stay")

	require.NoError(t, w.Write(s.ctx(t), doc{"repaired"}, de.Revision), "a write at the broken revision")
	s.readValue(t, w, doc{"repaired"})
	s.waitRules(t, m, doc{"repaired"})
	s.eventually(t, "the Readable's error to clear", func() bool { return r.Status().Err == nil })
}
