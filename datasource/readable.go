package datasource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
)

// Status is a Readable's health at one moment. The zero Status is that of
// a Readable that has not read anything yet.
type Status struct {
	// Name is the datasource's name (WithName, or the Source's String).
	Name string
	// Revision is the revision of the document whose value is applied; ""
	// when nothing is applied or the applied state is "missing".
	Revision string
	// AppliedAt is when that value was applied.
	AppliedAt time.Time
	// FromCache says the applied value came from the last-good cache
	// because the Source could not be read (or its document was
	// rejected) since Start.
	FromCache bool
	// Missing says the Source's document did not exist at the last read.
	Missing bool
	// Err is the last problem: a read error, or the decode or validation
	// error of a rejected document (the running value stayed), or, for a
	// document a lenient RuleManager applied in part, the rules it skipped.
	// Nil once a read succeeds and its document is applied in full (or
	// unchanged and valid).
	Err error
	// Failures counts consecutive failed attempts (read errors and rejected
	// documents) since the last success.
	Failures int
	// LastRead is when the Source last answered a read.
	LastRead time.Time
	// Watching says a Watch call is in progress. False while polling,
	// before the first read, and between a broken watch and its resumption.
	Watching bool
	// WatchErr is why the last watch broke (nil if none broke yet).
	WatchErr error
}

// Readable feeds a Property from a Source: it reads the document, decodes
// it with a converter and sets the value, then follows the document's
// changes until Close. See the package documentation for the semantics.
type Readable[T any] struct {
	src  Source
	conv converter.Converter[T]
	opts options
	name string
	prop *core.Property[T]
	log  *slog.Logger

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	hints  chan struct{} // capacity 1: bursts coalesce into one read
	poll   atomic.Bool   // no working Watcher: poll
	seen   atomic.Pointer[Snapshot]

	// Owned by the reader goroutine.
	cur docState

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	status  Status
	started bool
	closed  bool
	gen     uint64        // number of the last read started
	done    readResult    // the last read finished
	doneCh  chan struct{} // closed and replaced when a read finishes
}

// docState is what the reader knows about the document last read.
type docState struct {
	valid    bool // a document was read (or loaded from the cache)
	missing  bool
	rev      string
	data     []byte
	rejected error // non-nil if this document was rejected
	warn     error // non-nil if it was applied in part (lenient validation)
}

type readResult struct {
	gen     uint64
	ok      bool // the source answered
	snap    Snapshot
	doc     docState
	applied bool
}

// NewReadable returns a Readable that reads src and decodes its documents
// with conv. It starts nothing: call Start, and Close when done (Close also
// closes src).
func NewReadable[T any](src Source, conv converter.Converter[T], opts ...Option) *Readable[T] {
	o := buildOptions(opts)
	name := o.name
	if name == "" {
		if s, ok := src.(fmt.Stringer); ok {
			name = s.String()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Readable[T]{
		src:    src,
		conv:   conv,
		opts:   o,
		name:   name,
		prop:   core.NewProperty[T](),
		log:    o.logger.With("datasource", name),
		ctx:    ctx,
		cancel: cancel,
		hints:  make(chan struct{}, 1),
		doneCh: make(chan struct{}),
	}
	r.status.Name = name
	if _, ok := src.(Watcher); !ok {
		r.poll.Store(true)
	}
	return r
}

// Property returns the property the Readable sets; register it with a
// RuleManager (or Listen to it) before Start.
func (r *Readable[T]) Property() *core.Property[T] { return r.prop }

// Status returns the Readable's current status.
func (r *Readable[T]) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Start reads the document and applies it, or, when the Source cannot be
// read or its document is rejected, the last-good cache (if configured),
// then follows changes in the background until Close. It returns nil once
// a value is applied (or the document is authoritatively missing), and an
// error when nothing could be applied; in both cases the background work
// goes on, retrying with backoff. ctx bounds only the wait for the first
// attempt. Start may be called once; after Close it returns ErrClosed.
func (r *Readable[T]) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	if r.started {
		r.mu.Unlock()
		return named(r.name, "already started")
	}
	r.started = true
	first := make(chan error, 1)
	r.wg.Add(1)
	go r.run(first)
	if w, ok := r.src.(Watcher); ok {
		r.wg.Add(1)
		go r.watch(w)
	}
	r.mu.Unlock()

	select {
	case err := <-first:
		return err
	case <-ctx.Done():
		return named(r.name, "start: %w", context.Cause(ctx))
	}
}

// Close stops the Readable, waits for every goroutine it started, and
// closes the Source. It is idempotent: later calls return the first
// call's result. The Property keeps its last value.
func (r *Readable[T]) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.cancel()
		r.wg.Wait()
		if err := r.src.Close(); err != nil {
			r.closeErr = named(r.name, "close source: %w", err)
		}
	})
	return r.closeErr
}

// hint asks the reader for a read. It never blocks, and hints sent while a
// read is pending coalesce. A hint naming the revision already read is
// dropped.
func (r *Readable[T]) hint(s Snapshot) {
	if s.Revision != "" || s.Missing {
		if last := r.seen.Load(); last != nil && last.Missing == s.Missing && last.Revision == s.Revision {
			return
		}
	}
	r.poke()
}

func (r *Readable[T]) poke() {
	select {
	case r.hints <- struct{}{}:
	default:
	}
}

// run is the single reader: every Read, decode and Set happens here, in
// order, so the latest document wins.
func (r *Readable[T]) run(first chan<- error) {
	defer r.wg.Done()
	first <- r.firstAttempt()

	timer := time.NewTimer(r.nextDelay())
	defer timer.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.hints:
		case <-timer.C:
		}
		r.readOnce()
		timer.Reset(r.nextDelay())
	}
}

func (r *Readable[T]) nextDelay() time.Duration {
	r.mu.Lock()
	failing := r.done.gen > 0 && !r.done.ok
	failures := r.status.Failures
	r.mu.Unlock()
	switch {
	case failing:
		return backoff(failures, r.opts.backoffMin, r.opts.backoffMax)
	case r.poll.Load():
		return r.opts.pollInterval
	case r.opts.reconcileInterval > 0:
		return r.opts.reconcileInterval
	default:
		return 1<<63 - 1
	}
}

// firstAttempt reads once and, failing that, loads the cache. It returns
// nil when a value was applied or the document is missing.
func (r *Readable[T]) firstAttempt() error {
	res := r.readOnce()
	if r.ctx.Err() != nil {
		return ErrClosed
	}
	if res.applied || (res.ok && res.doc.missing) {
		return nil
	}
	cause := r.Status().Err
	if r.opts.cacheDir == "" {
		return cause
	}
	if err := r.loadCache(); err != nil {
		return errors.Join(cause, err)
	}
	return nil
}

// readOnce reads the Source and applies what it finds.
func (r *Readable[T]) readOnce() readResult {
	r.mu.Lock()
	r.gen++
	res := readResult{gen: r.gen}
	r.mu.Unlock()

	ctx, cancel := r.ctx, context.CancelFunc(func() {})
	if r.opts.readTimeout > 0 {
		ctx, cancel = context.WithTimeout(r.ctx, r.opts.readTimeout)
	}
	snap, err := r.src.Read(ctx)
	cancel()
	switch {
	case r.ctx.Err() != nil:
		// Closing: record nothing, apply nothing.
	case err != nil:
		r.readFailed(err)
	default:
		res.ok = true
		res.snap = normalize(snap)
		res.applied = r.apply(res.snap)
	}
	res.doc = r.cur

	r.mu.Lock()
	r.done = res
	close(r.doneCh)
	r.doneCh = make(chan struct{})
	r.mu.Unlock()
	return res
}

func (r *Readable[T]) readFailed(err error) {
	err = named(r.name, "read: %w", err)
	r.mu.Lock()
	r.status.Err = err
	r.status.Failures++
	n := r.status.Failures
	r.mu.Unlock()
	r.log.Warn("datasource read failed", "err", err, "failures", n)
}

// apply decodes and sets snap unless it is the document already read. It
// reports whether a new value was applied.
func (r *Readable[T]) apply(snap Snapshot) bool {
	now := time.Now()
	r.seen.Store(&snap)
	prev := r.cur
	unchanged := prev.valid && prev.missing == snap.Missing &&
		(snap.Missing || prev.rev == snap.Revision || bytes.Equal(prev.data, snap.Data))
	if unchanged {
		r.cur.rev = snap.Revision
		r.mu.Lock()
		r.status.LastRead = now
		r.status.Missing = snap.Missing
		if prev.rejected == nil {
			r.status.Err = prev.warn
			r.status.Failures = 0
			if !snap.Missing {
				r.status.Revision = snap.Revision
			}
			r.status.FromCache = false
		} else {
			r.status.Err = prev.rejected
		}
		r.mu.Unlock()
		return false
	}

	r.cur = docState{valid: true, missing: snap.Missing, rev: snap.Revision, data: bytes.Clone(snap.Data)}
	if snap.Missing && r.opts.keepOnMissing {
		r.mu.Lock()
		r.status.LastRead = now
		r.status.Missing = true
		r.status.Err = nil
		r.status.Failures = 0
		r.mu.Unlock()
		r.log.Info("datasource document missing; keeping the running value")
		return false
	}

	var v T
	var err error
	if !snap.Missing {
		v, err = r.conv.Convert(snap.Data)
		if err != nil {
			err = named(r.name, "decode revision %s: %w", snap.Revision, err)
		}
	}
	var warn error
	if err == nil {
		if setErr := r.prop.Set(v); setErr != nil {
			if appliedInPart(setErr) {
				warn = named(r.name, "revision %s applied in part: %w", snap.Revision, setErr)
			} else {
				err = named(r.name, "revision %s rejected: %w", snap.Revision, setErr)
			}
		}
	}
	if err != nil {
		r.cur.rejected = err
		r.mu.Lock()
		r.status.LastRead = now
		r.status.Missing = snap.Missing
		r.status.Err = err
		r.status.Failures++
		r.mu.Unlock()
		r.log.Error("datasource document rejected; keeping the running value", "err", err)
		return false
	}

	r.cur.warn = warn
	r.mu.Lock()
	r.status.LastRead = now
	r.status.Missing = snap.Missing
	r.status.Revision = snap.Revision
	r.status.AppliedAt = now
	r.status.FromCache = false
	r.status.Err = warn
	r.status.Failures = 0
	r.mu.Unlock()
	r.log.Info("datasource document applied", "revision", snap.Revision, "missing", snap.Missing)
	if warn != nil {
		r.log.Warn("datasource document applied in part", "err", warn)
	}
	r.storeCache(snap)
	return true
}

// watch runs the Source's Watcher: from the last successful read, until
// the watch breaks; then it backs off, has the reader read again, and
// watches again from that read.
func (r *Readable[T]) watch(w Watcher) {
	defer r.wg.Done()
	var want uint64 = 1 // the first read
	attempt := 0
	for {
		from, ok := r.waitRead(want)
		if !ok {
			return
		}
		r.setWatching(true, nil)
		began := time.Now()
		err := w.Watch(r.ctx, from, r.hint)
		if r.ctx.Err() != nil {
			r.setWatching(false, nil)
			return
		}
		if errors.Is(err, ErrWatchUnsupported) {
			r.setWatching(false, named(r.name, "watch: %w", err))
			r.log.Warn("datasource cannot watch; polling", "err", err, "interval", r.opts.pollInterval)
			r.poll.Store(true)
			r.poke()
			return
		}
		if err == nil {
			err = errors.New("watch ended")
		}
		err = named(r.name, "watch: %w", err)
		r.setWatching(false, err)
		if time.Since(began) > r.opts.backoffMax {
			attempt = 0 // it ran well before breaking
		}
		attempt++
		d := backoff(attempt, r.opts.backoffMin, r.opts.backoffMax)
		r.log.Warn("datasource watch broke; reading again before watching", "err", err, "retry_in", d)
		if !sleep(r.ctx, d) {
			return
		}
		r.mu.Lock()
		want = r.gen + 1
		r.mu.Unlock()
		r.poke()
	}
}

func (r *Readable[T]) setWatching(on bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Watching = on
	if err != nil {
		r.status.WatchErr = err
	}
}

// waitRead waits until a read numbered gen or later has succeeded and
// returns the snapshot of the last successful read.
func (r *Readable[T]) waitRead(gen uint64) (Snapshot, bool) {
	for {
		r.mu.Lock()
		if r.done.gen >= gen && r.done.ok {
			s := r.done.snap
			r.mu.Unlock()
			return s, true
		}
		ch := r.doneCh
		r.mu.Unlock()
		select {
		case <-r.ctx.Done():
			return Snapshot{}, false
		case <-ch:
		}
	}
}

// waitApplied waits until a read that started after the call has seen
// written (or a later document) and reports whether it was applied. prev
// is the document the write replaced (Missing when it created one).
//
// A Source may be eventually consistent: for a while after a write, a read
// may still return prev. Such a read is stale, not a later document: the
// wait has the reader read again, after a pause that grows like the retry
// backoff (WithBackoff, at most a second), until a read returns written
// (applied or rejected) or a document that is neither (someone else wrote
// after us), or ctx ends. A read of "missing" after a write that updated a
// document counts as stale too (a server may answer so while it swaps
// releases). A Source that reads its own writes returns on its first read,
// as before. (So a document set back to prev by another writer, with
// content revisions, or deleted right after the write, reads as stale until
// ctx ends.)
func (r *Readable[T]) waitApplied(ctx context.Context, prev, written Snapshot) error {
	written = normalize(written)
	prev = normalize(prev)
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return ErrClosed
	case !r.started:
		r.mu.Unlock()
		return named(r.name, "wait for revision %s: %w: readable not started", written.Revision, ErrNotApplied)
	}
	want := r.gen + 1
	r.mu.Unlock()
	r.poke()

	stale := 0 // reads that returned prev
	var again *time.Timer
	var againC <-chan time.Time
	defer func() {
		if again != nil {
			again.Stop()
		}
	}()
	for {
		r.mu.Lock()
		res, ch := r.done, r.doneCh
		r.mu.Unlock()
		if res.gen >= want && res.ok {
			switch {
			case sameDoc(res.doc.missing, res.doc.rev, written):
				if res.doc.rejected != nil {
					return fmt.Errorf("%w: %w", ErrNotApplied, res.doc.rejected)
				}
				return nil
			case !sameDoc(res.doc.missing, res.doc.rev, prev) && !(res.doc.missing && !prev.Missing):
				return nil // replaced by a later document
			}
			// Stale: the Source does not show the write yet. Any read that
			// starts after this one counts; ask for one after a pause. A
			// "missing" after an update is not taken for a later delete:
			// some eventually consistent servers (PolarisMesh) answer
			// "missing" for a moment while they swap in a new release.
			stale++
			want = res.gen + 1
			d := backoff(stale, r.opts.backoffMin, min(r.opts.backoffMax, staleMaxPause))
			if again == nil {
				again = time.NewTimer(d)
			} else {
				again.Reset(d)
			}
			againC = again.C
		}
		select {
		case <-ctx.Done():
			why := ""
			if stale > 0 {
				why = fmt.Sprintf(" (%d reads still returned the replaced document, or none)", stale)
			}
			return named(r.name, "wait for revision %s%s: %w: %w", written.Revision, why, ErrNotApplied, context.Cause(ctx))
		case <-r.ctx.Done():
			return ErrClosed
		case <-ch:
		case <-againC:
			againC = nil
			r.poke()
		}
	}
}

// staleMaxPause caps the pause between the reads of a wait that sees the
// document a write replaced.
const staleMaxPause = time.Second

// sameDoc reports whether a read of (missing, rev) is the document s.
func sameDoc(missing bool, rev string, s Snapshot) bool {
	if missing || s.Missing {
		return missing == s.Missing
	}
	return rev == s.Revision
}

// appliedInPart reports whether every error from Property.Set is a
// RuleManager's lenient-mode report: the valid rules were applied and the
// invalid ones skipped. Such a document counts as applied (and cached),
// and Status.Err names the skipped rules.
func appliedInPart(err error) bool {
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		errs := multi.Unwrap()
		for _, e := range errs {
			if !appliedInPart(e) {
				return false
			}
		}
		return len(errs) > 0
	}
	var ve *core.ValidationError
	return errors.As(err, &ve) && ve.Applied
}
