package datasource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/internal/codec"
)

// Writable writes values back to a Sink with compare-and-set, so that a
// concurrent edit is never overwritten unseen. The running rules change
// only when the Readable that follows the same document reads the new
// revision (WaitApplied waits for that).
//
// A Writable holds no state between calls: the revision a Write expects
// is the caller's, returned by Read, so goroutines sharing a Writable
// never write over each other's reads. It is safe for concurrent use.
type Writable[T any] struct {
	sink Sink
	src  Source // the Sink's Source side; nil if it has none
	enc  converter.Encoder[T]
	dec  converter.Converter[T] // nil unless enc is a converter.Codec
	opts options
	name string
	log  *slog.Logger
}

// NewWritable returns a Writable over sink. Values are encoded with enc;
// Read and Update also decode, which needs enc to be a converter.Codec[T].
// The sink must also be a Source (every backend's is) for Read and Update.
func NewWritable[T any](sink Sink, enc converter.Encoder[T], opts ...Option) *Writable[T] {
	o := buildOptions(opts)
	w := &Writable[T]{sink: sink, enc: enc, opts: o, name: o.name}
	w.src, _ = sink.(Source)
	w.dec, _ = enc.(converter.Converter[T])
	if w.name == "" {
		if s, ok := sink.(fmt.Stringer); ok {
			w.name = s.String()
		}
	}
	w.log = o.logger.With("datasource", w.name)
	return w
}

// Read reads and decodes the current document (the zero value if it is
// missing) and returns it with its revision ("" when it is missing). Pass
// the revision to Write: it succeeds only if nobody changed the document
// in between. A document that does not decode is an error wrapping a
// *DecodeError, which holds its revision and content.
func (w *Writable[T]) Read(ctx context.Context) (T, string, error) {
	var zero T
	if w.dec == nil {
		return zero, "", named(w.name, "read: %w", errNoDecoder)
	}
	snap, err := w.read(ctx)
	if err != nil {
		return zero, "", err
	}
	v, err := w.decode(snap)
	if err != nil {
		return zero, "", err
	}
	return v, snap.Revision, nil
}

// Write encodes v and stores it if the document is still at revision (as
// returned by Read; "" stores only if the document does not exist). If
// another writer changed it, Write returns an error wrapping ErrConflict
// and stores nothing: Read again, or use Update to merge with the other
// edit.
func (w *Writable[T]) Write(ctx context.Context, v T, revision string) error {
	data, err := w.enc.Encode(v)
	if err != nil {
		return named(w.name, "encode: %w", err)
	}
	out, err := w.write(ctx, data, revision)
	if err != nil {
		return err
	}
	return w.waitApplied(ctx, revision, out)
}

// Update changes the document with fn: it reads and decodes the current
// value (the zero value if the document is missing), calls fn, and stores
// the result with compare-and-set. When another writer got in between (or
// the read was stale), it starts again, up to WithUpdateAttempts times,
// after a pause that doubles from about 20 ms up to 1 s, jittered within
// its upper half (with the default 10 attempts they span 2 to 4 seconds);
// fn must therefore be free of side effects. An error from fn stops Update
// and is returned as is. A document that does not decode stops it too,
// before fn is called, with an error wrapping a *DecodeError: Update never
// writes over what it could not read. A result that encodes to the current bytes writes
// nothing.
func (w *Writable[T]) Update(ctx context.Context, fn func(T) (T, error)) error {
	if w.dec == nil {
		return named(w.name, "update: %w", errNoDecoder)
	}
	var lastErr error
	for attempt := 1; attempt <= w.opts.updateAttempts; attempt++ {
		snap, err := w.read(ctx)
		if err != nil {
			return err
		}
		cur, err := w.decode(snap)
		if err != nil {
			return err
		}
		next, err := fn(cur)
		if err != nil {
			return err
		}
		data, err := w.encodeOver(snap, next)
		if err != nil {
			return named(w.name, "encode: %w", err)
		}
		if !snap.Missing && bytes.Equal(data, snap.Data) {
			return nil
		}
		out, err := w.write(ctx, data, snap.Revision)
		if err == nil {
			return w.waitApplied(ctx, snap.Revision, out)
		}
		if !errors.Is(err, ErrConflict) {
			return err
		}
		lastErr = err
		if attempt == w.opts.updateAttempts {
			break
		}
		// Growing and jittered: contenders spread out instead of colliding
		// again, and the attempts span a few seconds, so a Source that
		// returns the replaced document for a while after a write (one
		// that is eventually consistent) is read again once it has caught up.
		if !sleep(ctx, backoff(attempt, updatePauseMin, updatePauseMax)) {
			return named(w.name, "update: %w", context.Cause(ctx))
		}
	}
	return named(w.name, "update: gave up after %d attempts: %w", w.opts.updateAttempts, lastErr)
}

// The pause before Update's attempt n+1 is backoff(n, updatePauseMin,
// updatePauseMax).
const (
	updatePauseMin = 20 * time.Millisecond
	updatePauseMax = time.Second
)

func (w *Writable[T]) read(ctx context.Context) (Snapshot, error) {
	if w.src == nil {
		return Snapshot{}, named(w.name, "read: %w", errNotReadable)
	}
	snap, err := w.src.Read(withReadLimit(ctx, w.opts.maxSize))
	if err != nil {
		return Snapshot{}, named(w.name, "read: %w", err)
	}
	return normalize(snap), nil
}

// encodeOver encodes v; over a present document, with an encoder that can,
// it keeps what v does not model (the fields of unchanged rules, entity
// fields).
func (w *Writable[T]) encodeOver(prev Snapshot, v T) ([]byte, error) {
	if prev.Missing {
		return w.enc.Encode(v)
	}
	return codec.EncodeOver(w.enc, prev.Data, v)
}

func (w *Writable[T]) decode(snap Snapshot) (T, error) {
	var zero T
	if snap.Missing {
		return zero, nil
	}
	v, err := w.dec.Convert(snap.Data)
	if err != nil {
		return zero, named(w.name, "%w", &DecodeError{Revision: snap.Revision, Data: snap.Data, Err: err})
	}
	return v, nil
}

// DecodeError is what Writable.Read and Update return (wrapped: match it
// with errors.As) for a document that does not decode. Revision is the
// document's: a Write at that revision replaces the document (a tool
// shows Data and Err to a person, who writes a repair), while a Write at
// any revision read before the document broke is a conflict. Update never
// writes over such a document: it returns the error without calling its
// function.
type DecodeError struct {
	Revision string // the revision of the document that does not decode
	Data     []byte // its content
	Err      error  // the decoder's error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decode: %v (revision %s)", e.Err, e.Revision)
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }

func (w *Writable[T]) write(ctx context.Context, data []byte, expect string) (Snapshot, error) {
	// What readers with the same limit would refuse is not written.
	if err := limit.Check(limit.With(ctx, w.opts.maxSize), int64(len(data))); err != nil {
		return Snapshot{}, named(w.name, "write: %w", err)
	}
	if w.opts.author != "" && w.opts.noteAuthor != nil {
		w.opts.noteAuthor(data, w.opts.author) // before: the push may beat the answer
	}
	out, err := w.sink.Write(ctx, data, expect)
	if err != nil {
		return Snapshot{}, named(w.name, "write: %w (expected revision %q)", err, expect)
	}
	out = normalize(out)
	w.log.Info("datasource document written", "revision", out.Revision)
	return out, nil
}

// waitApplied waits, if WaitApplied asks for it, until the Readable has
// read out, the document written over the revision expect ("": created).
func (w *Writable[T]) waitApplied(ctx context.Context, expect string, out Snapshot) error {
	if w.opts.wait == nil {
		return nil
	}
	timeout := w.opts.waitTimeout
	if timeout <= 0 {
		timeout = defaultWaitTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prev := Snapshot{Revision: expect, Missing: expect == ""}
	if err := w.opts.wait(ctx, prev, out); err != nil {
		return fmt.Errorf("%w (revision %s)", err, out.Revision)
	}
	return nil
}
