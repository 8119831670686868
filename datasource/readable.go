package datasource

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource/internal/bounded"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/internal/logctx"
	"github.com/bulwark-go/bulwark/internal/codec"
	"github.com/bulwark-go/bulwark/internal/property"
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
	// TotalFailures counts every failed attempt since the Readable was
	// made: it only grows (a Prometheus counter).
	TotalFailures int64
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
	src      Source
	conv     converter.Converter[T]
	opts     options
	name     string
	identity string // what identifies the document: names its cache file
	prop     *core.Property[T]
	log      *slog.Logger

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	hints  chan struct{} // capacity 1: bursts coalesce into one read
	poll   atomic.Bool   // no working Watcher: poll

	// Owned by the reader goroutine.
	last    docState  // the document last read (or loaded from the cache)
	pending *Snapshot // a cache update that failed, retried until it succeeds
	cacheN  int       // consecutive failed cache updates

	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	status  Status
	started bool
	closed  bool
	gen     uint64        // number of the last read started
	reading bool          // read number gen has started and not finished
	done    readResult    // the last read finished
	doneCh  chan struct{} // closed and replaced when a read finishes
	authors []authored    // the last documents linked Writables wrote, newest last
}

// authored is a document a Writable linked by WaitApplied wrote, by the
// hash of its bytes, and its author (WithAuthor).
type authored struct {
	sum    [sha256.Size]byte
	author string
}

// maxAuthors bounds Readable.authors: writes whose documents were never
// read (replaced before a read) must not pile up.
const maxAuthors = 16

// noteAuthor records, before a linked Writable writes data, who writes it,
// so the rule event of the revision that holds these bytes names them
// whichever way the Readable learns of it (push, poll or the wait).
func (r *Readable[T]) noteAuthor(data []byte, author string) {
	a := authored{sha256.Sum256(data), author}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.authors) == maxAuthors {
		r.authors = append(r.authors[:0], r.authors[1:]...)
	}
	r.authors = append(r.authors, a)
}

// source names the datasource, revision and, when a linked Writable wrote
// these bytes, their author.
func (r *Readable[T]) source(snap Snapshot) core.RuleSource {
	src := core.RuleSource{Name: r.name, Revision: snap.Revision}
	r.mu.Lock()
	authors := slices.Clone(r.authors)
	r.mu.Unlock()
	if snap.Missing || len(authors) == 0 {
		return src // no hashing unless a linked Writable named an author
	}
	sum := sha256.Sum256(snap.Data)
	for i := len(authors) - 1; i >= 0; i-- {
		if authors[i].sum == sum {
			src.Author = authors[i].author
			break
		}
	}
	return src
}

// docState is what the reader knows about the document last read. It
// keeps a hash of the content, not the content: a Readable holds no copy
// of a document once it is applied.
type docState struct {
	valid    bool // a document was read (or loaded from the cache)
	missing  bool
	rev      string
	sum      [sha256.Size]byte // of the content
	rejected error             // non-nil if this document was rejected
	warn     error             // non-nil if it was applied in part
}

type readResult struct {
	gen     uint64
	ok      bool     // the source answered
	snap    Snapshot // without its Data
	doc     docState
	applied bool
}

// NewReadable returns a Readable that reads src and decodes its documents
// with conv. It starts nothing: call Start, and Close when done (Close also
// closes src).
func NewReadable[T any](src Source, conv converter.Converter[T], opts ...Option) *Readable[T] {
	o := buildOptions(opts)
	if o.overlay != "" {
		src = withOverlay(src, o.overlay)
	}
	name, identity := o.name, o.name
	if s, ok := src.(fmt.Stringer); ok {
		identity = s.String()
		if name == "" {
			name = identity
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Readable[T]{
		src:      src,
		conv:     conv,
		opts:     o,
		name:     name,
		identity: identity,
		prop:     core.NewProperty[T](),
		log:      o.logger.With("datasource", name),
		ctx:      ctx,
		cancel:   cancel,
		hints:    make(chan struct{}, 1),
		doneCh:   make(chan struct{}),
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

// cell is the Readable's Property as the mechanism it is defined as, which
// sets a value with its source, asks whether the listeners take partial
// values, and reports a refused document.
func (r *Readable[T]) cell() *property.Cell[T, core.RuleSource] {
	return (*property.Cell[T, core.RuleSource])(r.prop)
}

// Status returns the Readable's current status. It is updated just after
// a document's value is set (the Property's listeners, such as a
// RuleManager, run first), so one who sees new rules in force may read the
// previous Revision for that moment; wait for the Status itself, or use
// the rule event's RuleSource, which names the revision of the swap.
func (r *Readable[T]) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Start reads the document and applies it, or, when the Source cannot be
// read or its document is rejected, the last-good cache (if configured),
// then follows changes in the background until Close. It returns nil once
// a value is applied (or the document is authoritatively missing, which
// it logs as a warning), and an error when nothing could be applied; in
// both cases the background work goes on, retrying with backoff. ctx
// bounds only the wait for the first attempt. Start may be called once;
// after Close it returns ErrClosed.
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

// closeTimeout bounds how long Close waits for the Readable's goroutines.
// A Source whose Read ignores its context (a read of a hung network mount
// cannot be interrupted) would otherwise hold Close forever.
const closeTimeout = 5 * time.Second

// Close stops the Readable, waits for every goroutine it started, and
// closes the Source. It is idempotent: later calls return the first
// call's result. The Property keeps its last value.
//
// A Read or Watch that ignores its context is waited for up to
// 5 seconds; then Close closes the Source and returns an error saying
// so. The abandoned goroutine ends when the call returns, and applies
// nothing.
func (r *Readable[T]) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.cancel()
		var errs []error
		if !bounded.Wait(&r.wg, closeTimeout) {
			errs = append(errs, named(r.name, "close: a call to the source ignored cancellation for %v; abandoned", closeTimeout))
			r.log.Error("datasource close: a call to the source ignored cancellation; abandoned", "waited", closeTimeout)
		}
		if err := r.src.Close(); err != nil {
			errs = append(errs, named(r.name, "close source: %w", err))
		}
		r.closeErr = errors.Join(errs...)
	})
	return r.closeErr
}

// hint asks the reader for a read. It never blocks, and hints sent while a
// read is pending coalesce. A hint naming the document of the last read is
// dropped, but only when no read is in flight: a read in flight may have
// started before the change the hint reports (X, then B, then X again:
// the read for B must not hide the second X).
func (r *Readable[T]) hint(s Snapshot) {
	if s.Revision != "" || s.Missing {
		r.mu.Lock()
		dup := !r.reading && r.done.ok && sameDoc(r.done.snap.Missing, r.done.snap.Revision, s)
		r.mu.Unlock()
		if dup {
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
			if r.failing() {
				// While the source fails, reads follow the backoff: the
				// timer's read covers this hint.
				continue
			}
		case <-timer.C:
		}
		r.readOnce()
		r.retryCache()
		timer.Reset(r.nextDelay())
	}
}

func (r *Readable[T]) failing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done.gen > 0 && !r.done.ok
}

func (r *Readable[T]) nextDelay() time.Duration {
	r.mu.Lock()
	failing := r.done.gen > 0 && !r.done.ok
	failures := r.status.Failures
	r.mu.Unlock()
	var d time.Duration
	switch {
	case failing:
		d = backoff(failures, r.opts.backoffMin, r.opts.backoffMax)
	case r.poll.Load():
		d = r.opts.pollInterval
	case r.opts.reconcileInterval > 0:
		d = r.opts.reconcileInterval
	default:
		d = 1<<63 - 1
	}
	if r.pending != nil {
		d = min(d, backoff(r.cacheN, r.opts.backoffMin, r.opts.backoffMax))
	}
	return d
}

// firstAttempt reads once and, failing that, loads the cache. It returns
// nil when a value was applied or the document is missing.
func (r *Readable[T]) firstAttempt() error {
	res := r.readOnce()
	if r.ctx.Err() != nil {
		return ErrClosed
	}
	if res.ok && res.doc.missing {
		if r.opts.keepOnMissing && r.opts.cacheDir != "" && r.loadCache() == nil {
			r.log.Warn("datasource document missing at start: keeping the last-good cache")
			return nil
		}
		r.log.Warn("datasource document missing at start: no value from it until it is created")
		return nil
	}
	if res.applied {
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
	r.reading = true
	res := readResult{gen: r.gen}
	r.mu.Unlock()

	ctx, cancel := withReadLimit(r.ctx, r.opts.maxSize), context.CancelFunc(func() {})
	if r.opts.readTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, r.opts.readTimeout)
	}
	snap, err := r.src.Read(ctx)
	cancel()
	if err == nil && !snap.Missing {
		// A backend that could not bound its read: refuse it here, before
		// anything else holds it.
		err = limit.Check(ctx, int64(len(snap.Data)))
	}
	switch {
	case r.ctx.Err() != nil:
		// Closing: record nothing, apply nothing.
	case err != nil:
		r.readFailed(err)
	default:
		res.ok = true
		snap = normalize(snap)
		res.applied = r.apply(snap)
		res.snap = Snapshot{Revision: snap.Revision, Missing: snap.Missing}
	}
	res.doc = r.last

	r.mu.Lock()
	r.done = res
	r.reading = false
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
	r.status.TotalFailures++
	n := r.status.Failures
	r.mu.Unlock()
	r.log.Warn("datasource read failed", "err", err, "failures", n)
}

// outcome is what one document did to the value.
type outcome int

const (
	unchanged outcome = iota // the document read last, again
	kept                     // missing, and WithKeepOnMissing keeps the value
	applied                  // set (in full, or in part: warn)
	rejected                 // not decoded, or refused by a listener
)

// apply decodes and sets snap unless it is the document already read, and
// updates Status once with the outcome. It reports whether a new value was
// applied.
func (r *Readable[T]) apply(snap Snapshot) bool {
	now := time.Now()
	var sum [sha256.Size]byte
	if !snap.Missing {
		sum = sha256.Sum256(snap.Data)
	}
	prev := r.last
	var out outcome
	switch {
	case prev.valid && prev.missing == snap.Missing && (snap.Missing || prev.rev == snap.Revision || prev.sum == sum):
		out = unchanged
		r.last.rev = snap.Revision
	case snap.Missing && r.opts.keepOnMissing:
		out = kept
		r.last = docState{valid: true, missing: true}
	default:
		r.last = docState{valid: true, missing: snap.Missing, rev: snap.Revision, sum: sum}
		if err, warn := r.set(snap); err != nil {
			out = rejected
			r.last.rejected = err
		} else {
			out = applied
			r.last.warn = warn
		}
	}
	cur := r.last

	r.mu.Lock()
	st := &r.status
	st.LastRead = now
	st.Missing = snap.Missing
	switch {
	case out == rejected || (out == unchanged && cur.rejected != nil):
		st.Err = cur.rejected
		if out == rejected {
			st.Failures++
			st.TotalFailures++
		}
	case out == kept || (out == unchanged && cur.missing && r.opts.keepOnMissing):
		// The value in force is not this document's: Revision, AppliedAt
		// and FromCache still describe it.
		st.Err, st.Failures = nil, 0
	default: // applied, or unchanged and in force
		if out == applied {
			st.AppliedAt = now
		}
		st.Revision = ""
		if !snap.Missing {
			st.Revision = snap.Revision
		}
		st.FromCache = false
		st.Err, st.Failures = cur.warn, 0
	}
	r.mu.Unlock()

	switch out {
	case rejected:
		r.log.Error("datasource document rejected; keeping the running value", "err", cur.rejected, "revision", snap.Revision)
	case kept:
		r.log.Warn("datasource document missing; keeping the running value")
	case applied:
		switch {
		case snap.Missing:
			r.log.Warn("datasource document missing: value cleared")
		case cur.warn != nil:
			r.log.Warn("datasource document applied in part", "err", cur.warn, "revision", snap.Revision)
		default:
			r.log.Info("datasource document applied", "revision", snap.Revision)
		}
		r.storeCache(snap)
	}
	return out == applied
}

// set decodes snap (the zero value when it is missing) and sets it. It
// returns why the document was rejected, or, when it was applied in part
// (a lenient RuleManager applied the valid rules), what was left out.
func (r *Readable[T]) set(snap Snapshot) (rejected, warn error) {
	var v T
	if !snap.Missing {
		var err error
		v, warn, err = r.decode(snap.Data)
		if err != nil {
			r.cell().Reject(r.source(snap), err)
			return named(r.name, "decode: %w (revision %s)", err, snap.Revision), nil
		}
	}
	if err := r.cell().SetFrom(v, r.source(snap)); err != nil {
		if !appliedInPart(err) {
			return named(r.name, "rejected: %w (revision %s)", err, snap.Revision), nil
		}
		warn = errors.Join(warn, err)
	}
	if warn != nil {
		warn = named(r.name, "applied in part: %w (revision %s)", warn, snap.Revision)
	}
	return nil, warn
}

// decode converts data. A document in which only some rules are invalid
// is returned as its valid rules (warn names the others) when every
// listener of the Property applies partial values (a lenient RuleManager);
// otherwise it is an error.
func (r *Readable[T]) decode(data []byte) (v T, warn, err error) {
	var warnings []converter.Problem
	v, warnings, err = codec.Inspect(r.conv, data)
	for _, w := range warnings {
		r.log.Warn("datasource document: ignored", "problem", w.Error())
	}
	var de *converter.DecodeError
	if err != nil && errors.As(err, &de) && de.Partial && r.cell().AcceptsPartial() {
		return v, err, nil
	}
	return v, nil, err
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
		err := w.Watch(logctx.With(withReadLimit(r.ctx, r.opts.maxSize), r.log), from, r.hint)
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

// lastRead returns the result of the last read that finished, and a
// channel closed when the next one finishes.
func (r *Readable[T]) lastRead() (readResult, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done, r.doneCh
}

// waitRead waits until a read numbered gen or later has succeeded and
// returns the snapshot of the last successful read.
func (r *Readable[T]) waitRead(gen uint64) (Snapshot, bool) {
	for {
		res, ch := r.lastRead()
		if res.gen >= gen && res.ok {
			return res.snap, true
		}
		select {
		case <-r.ctx.Done():
			return Snapshot{}, false
		case <-ch:
		}
	}
}

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
	if ve, ok := err.(*core.ValidationError); ok {
		return ve.Applied // it unwraps to its rule errors: do not split it
	}
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
