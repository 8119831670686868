package datasource

import (
	"context"
	"fmt"
	"time"
)

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
	written, prev = normalize(written), normalize(prev)
	want, err := r.askRead(written)
	if err != nil {
		return err
	}
	again := rereads{lo: r.opts.backoffMin, hi: min(r.opts.backoffMax, staleMaxPause), read: r.poke}
	defer again.stop()
	for {
		res, next := r.lastRead()
		if res.gen >= want && res.ok {
			switch afterWrite(res.doc, prev, written) {
			case sawWrite:
				if res.doc.rejected != nil {
					return fmt.Errorf("%w: %w", ErrNotApplied, res.doc.rejected)
				}
				return nil
			case sawLater:
				return nil
			case sawStale:
				// Any read that starts after this one counts; ask for one
				// after a pause.
				want = res.gen + 1
				again.schedule()
			}
		}
		select {
		case <-ctx.Done():
			return r.notApplied(ctx, written, again.n)
		case <-r.ctx.Done():
			return ErrClosed
		case <-next:
		}
	}
}

// askRead asks the reader for a read and returns its number: the reads
// numbered so or later start after the call.
func (r *Readable[T]) askRead(written Snapshot) (uint64, error) {
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return 0, ErrClosed
	case !r.started:
		r.mu.Unlock()
		return 0, named(r.name, "wait: %w: readable not started (revision %s)", ErrNotApplied, written.Revision)
	}
	want := r.gen + 1
	r.mu.Unlock()
	r.poke()
	return want, nil
}

// notApplied is the error of a wait that ctx ended; stale reads returned
// the replaced document meanwhile.
func (r *Readable[T]) notApplied(ctx context.Context, written Snapshot, stale int) error {
	why := ""
	if stale > 0 {
		why = fmt.Sprintf(" (%d reads still returned the replaced document, or none)", stale)
	}
	return named(r.name, "wait: %w: %w%s (revision %s)", ErrNotApplied, context.Cause(ctx), why, written.Revision)
}

// seen is what a read after a write shows.
type seen int

const (
	sawStale seen = iota // the document the write replaced: the Source does not show the write yet
	sawWrite             // the document written
	sawLater             // another document: someone wrote after the write
)

// afterWrite classifies doc, read after a write of written over prev. A
// "missing" after an update is stale, not taken for a later delete: some
// eventually consistent servers (PolarisMesh) answer "missing" for a
// moment while they swap in a new release.
func afterWrite(doc docState, prev, written Snapshot) seen {
	switch {
	case sameDoc(doc.missing, doc.rev, written):
		return sawWrite
	case sameDoc(doc.missing, doc.rev, prev), doc.missing && !prev.Missing:
		return sawStale
	}
	return sawLater
}

// staleMaxPause caps the pause between the reads of a wait that sees the
// document a write replaced.
const staleMaxPause = time.Second

// rereads asks for reads again after stale ones: the n-th after a pause
// of backoff(n, lo, hi).
type rereads struct {
	lo, hi time.Duration
	read   func()
	n      int // stale reads so far
	t      *time.Timer
}

// schedule counts a stale read and has read called after the next pause.
func (a *rereads) schedule() {
	a.n++
	d := backoff(a.n, a.lo, a.hi)
	if a.t == nil {
		a.t = time.AfterFunc(d, a.read)
		return
	}
	a.t.Reset(d)
}

func (a *rereads) stop() {
	if a.t != nil {
		a.t.Stop()
	}
}
