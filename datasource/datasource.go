package datasource

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
)

// Snapshot is one read of a document.
//
// Revision identifies the content: two snapshots with the same non-empty
// Revision hold the same bytes. It is the backend's version where it has one
// (an etcd mod revision, a ZooKeeper node version) or a content hash
// (the first 16 bytes of the SHA-256 of the data, in hex, which the
// framework also gives a present document that a Source returns without a
// revision); it is what a [Sink] compares for compare-and-set. A missing
// document has Missing set, no Data and an empty Revision.
type Snapshot struct {
	Data     []byte
	Revision string
	Missing  bool
}

// Source reads a document. See the package documentation for the contract.
type Source interface {
	// Read returns the document as it is now. A document that does not
	// exist is Snapshot{Missing: true} and a nil error; an error means the
	// source could not answer (unreachable, permission denied, timeout).
	Read(ctx context.Context) (Snapshot, error)
	// Close releases what the Source owns. The Readable that owns the
	// Source calls it once, from Close.
	Close() error
}

// Watcher is implemented by a Source that can push changes.
type Watcher interface {
	// Watch blocks until ctx is done or the watch breaks, calling changed
	// (a hint) after each change later than from. See the package
	// documentation for the contract.
	Watch(ctx context.Context, from Snapshot, changed func(Snapshot)) error
}

// Sink is implemented by a Source that can be written.
type Sink interface {
	// Write stores data if the document's current revision is
	// expectRevision ("" meaning: only if the document does not exist),
	// and returns what it wrote: data and the revision the write gave it,
	// known from the same atomic step (never from a read afterwards, which
	// may return another writer's document). Otherwise it returns an error
	// wrapping ErrConflict and stores nothing.
	Write(ctx context.Context, data []byte, expectRevision string) (Snapshot, error)
}

// Errors callers branch on with errors.Is.
var (
	// ErrClosed: the Readable (or Source) was closed.
	ErrClosed = errors.New("datasource: closed")
	// ErrConflict: a compare-and-set write found another revision than
	// expected; nothing was written. Sinks return errors wrapping it.
	ErrConflict = errors.New("datasource: revision conflict")
	// ErrWatchUnsupported: a Watcher cannot watch in this environment (no
	// inotify, a watch limit reached, a backend without push). Watch
	// returns an error wrapping it, and the Readable polls instead.
	ErrWatchUnsupported = errors.New("datasource: watch unsupported")
	// ErrNotApplied: a write was stored but the Readable waiting for it
	// (see WaitApplied) did not apply it: the document was rejected (the
	// error also wraps the decode or validation error) or the wait timed out.
	ErrNotApplied = errors.New("datasource: written but not applied")
	// ErrTooLarge: the document is larger than the size limit
	// (WithMaxSize); it was refused while it was read.
	ErrTooLarge = limit.ErrTooLarge
)

// normalize gives a present document without a revision its content
// revision, so every snapshot the framework compares has one.
func normalize(s Snapshot) Snapshot {
	if s.Missing {
		return Snapshot{Missing: true}
	}
	if s.Revision == "" {
		s.Revision = contentrev.Of(s.Data)
	}
	return s
}

// backoff returns the delay before retry number n (n >= 1): min doubled n-1
// times, capped at max, with "equal jitter" (a random delay in [d/2, d]),
// so that many clients that failed together do not retry together.
func backoff(n int, lo, hi time.Duration) time.Duration {
	if n < 1 {
		n = 1
	}
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	if d > hi {
		d = hi
	}
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// sleep waits for d or until ctx is done, and reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func named(name, format string, args ...any) error {
	if name == "" {
		return fmt.Errorf("datasource: "+format, args...)
	}
	return fmt.Errorf("datasource: %s: "+format, append([]any{name}, args...)...)
}

// Mistakes in wiring a Writable, reported by the calls that need what is
// missing (not conditions a caller branches on).
var (
	errNotReadable = errors.New("datasource: the Sink given to NewWritable is not also a Source")
	errNoDecoder   = errors.New("datasource: Writable.Read and Update need an encoder that is also a converter.Converter")
)
