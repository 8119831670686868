package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/backend"
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/internal/overlay"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
	"github.com/bulwark-go/bulwark/internal/atomicfile"
	"github.com/bulwark-go/bulwark/internal/statedir"
)

// defaultDebounce is how long Watch lets a burst of file events settle
// after an in-place write before it reads the file.
const defaultDebounce = 5 * time.Millisecond

// Option configures a Source.
type Option func(*Source)

// withPerm sets the permission bits of a file Write creates (default
// 0o644). A file that exists keeps its own.
func withPerm(perm fs.FileMode) Option { return func(s *Source) { s.perm = perm.Perm() } }

// withPolling makes Watch report datasource.ErrWatchUnsupported, so the
// Readable polls the file (content hash) at its poll interval instead of
// using inotify-style notifications, as it does where they are not
// available. Tests use it to run the polling path everywhere.
func withPolling() Option { return func(s *Source) { s.polling = true } }

// withDebounce sets how long Watch waits after the first in-place write
// event of a burst before it reads the file (default 5 ms); a
// writer that truncates and then writes is then read once, complete.
// Renames, creations and removals (atomic saves, ConfigMap swaps) are read
// at once. Zero reads at once after every event.
func withDebounce(d time.Duration) Option { return func(s *Source) { s.debounce = max(d, 0) } }

// withLockPath sets the lock file Write holds while it compares and
// replaces (default: ".bulwark/<name>.lock" beside the file, see
// internal/statedir). Only tests set it: a path chosen per process is a way for two writers to
// miss each other's lock.
func withLockPath(path string) Option { return func(s *Source) { s.lockPath = path } }

// Source is a rule document in a file: a datasource.Source, a
// datasource.Watcher and a datasource.Sink. Its revision is the content
// revision (a hash of the bytes). It is safe for concurrent use.
type Source struct {
	path     string
	perm     fs.FileMode
	polling  bool
	debounce time.Duration
	lockPath string // withLockPath
	life     backend.Lifecycle
	reg      *registry.Registry
	reads    atomic.Int64 // calls of Read, for tests
	reopen   func(path string) *Source
}

var (
	_ datasource.Source   = (*Source)(nil)
	_ datasource.Watcher  = (*Source)(nil)
	_ datasource.Sink     = (*Source)(nil)
	_ datasource.Registry = (*Source)(nil)
)

// New returns a Source for the file at path. It touches nothing: the file
// may not exist yet (a missing document) and is created by the first
// Write.
func New(path string, opts ...Option) *Source {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s := &Source{path: path, perm: 0o644, debounce: defaultDebounce}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	s.reopen = func(p string) *Source { return New(p, opts...) }
	s.reg = registry.New("file", newInstanceStore(path))
	return s
}

// Overlay returns the Source of the overlay of group (see
// datasource.WithOverlay): the file beside the document whose name is the
// document's followed by ".overlay." and group
// ("/etc/svc/flow.json.overlay.canary"), with the same options.
func (s *Source) Overlay(group string) datasource.Source {
	return s.reopen(overlay.Name(s.path, group))
}

// Overlays returns the canary groups that have an overlay beside the
// document (see Overlay), sorted: the entries of the file's directory
// named as an overlay of it, directories left out. A directory that does
// not exist holds none.
func (s *Source) Overlays(ctx context.Context) ([]string, error) {
	if s.life.Closed() {
		return nil, datasource.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, base := filepath.Split(s.path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("file: list the overlays of %s: %w", s.path, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return overlay.Groups(base, names), nil
}

// String returns "file:" and the file's absolute path.
func (s *Source) String() string { return "file:" + s.path }

// Close marks the Source closed: later calls return datasource.ErrClosed,
// and a running Watch returns datasource.ErrClosed. It closes the
// registrations made through the Source (removing their records) and
// returns the error of those removals. It is idempotent.
func (s *Source) Close() error {
	err := s.reg.Close()
	s.life.Close(0) // nothing else runs in the background: reads and writes are the callers'
	return err
}

// Read returns the file's content. A file that does not exist is a
// missing document; a symbolic link is followed.
//
// Read opens the file without blocking (O_NONBLOCK where there is one) and
// refuses anything that is not a regular file (a named pipe, a device, a
// socket, a directory) with an error naming the path and what it is, so a
// FIFO with no writer cannot make it hang. It refuses a document larger
// than datasource.ReadLimit(ctx) with an error wrapping
// datasource.ErrTooLarge: at once when the file's size says so, else as
// soon as it has read one byte too many, never holding the whole document.
// It checks ctx before it opens the file and between the reads of the
// file's chunks; one read system call that blocks (a hung network mount)
// cannot be interrupted, and the Readable bounds its Close separately.
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	if s.life.Closed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	s.reads.Add(1)
	if err := ctx.Err(); err != nil {
		return datasource.Snapshot{}, err
	}
	// Refuse what is not a regular file before opening it (opening a
	// device may have effects), and again after (it may have been replaced
	// in between).
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return datasource.Snapshot{Missing: true}, nil
	}
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: %w", err)
	}
	if err := s.checkFile(ctx, fi); err != nil {
		return datasource.Snapshot{}, err
	}
	f, err := os.OpenFile(s.path, openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return datasource.Snapshot{Missing: true}, nil
	}
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: %w", err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: %w", err)
	}
	if err := s.checkFile(ctx, fi); err != nil {
		return datasource.Snapshot{}, err
	}
	data, err := limit.ReadAll(ctx, ctxReader{ctx, f})
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: read %s: %w", s.path, err)
	}
	return datasource.Snapshot{Data: data, Revision: contentrev.Of(data)}, nil
}

// checkFile refuses a file that is not a regular file, or whose size is
// over the limit ctx carries.
func (s *Source) checkFile(ctx context.Context, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("file: %s is %s, not a regular file", s.path, describe(fi.Mode()))
	}
	if err := limit.Check(ctx, fi.Size()); err != nil {
		return fmt.Errorf("file: read %s: %w", s.path, err)
	}
	return nil
}

// describe names the type of a file that is not a regular file.
func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Write replaces the file's content with data if its current revision is
// expectRevision ("" meaning: only if the file does not exist), and returns
// an error wrapping datasource.ErrConflict otherwise. The comparison and
// the replacement happen under an exclusive lock (flock on a lock file)
// that other Sources, in this process or another, respect. The new content
// goes to a temporary file in the same directory, which is synced and
// renamed over the file, and the directory is synced; the file keeps its
// permission bits. A symbolic link is followed: its target is replaced.
func (s *Source) Write(ctx context.Context, data []byte, expectRevision string) (datasource.Snapshot, error) {
	if s.life.Closed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	target, unlock, err := s.lock(ctx)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	defer unlock()

	cur, err := s.Read(ctx)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	switch {
	case expectRevision == "" && !cur.Missing:
		return datasource.Snapshot{}, fmt.Errorf("file: %s exists (revision %s): %w", s.path, cur.Revision, datasource.ErrConflict)
	case expectRevision != "" && cur.Missing:
		return datasource.Snapshot{}, fmt.Errorf("file: %s does not exist, expected revision %s: %w", s.path, expectRevision, datasource.ErrConflict)
	case expectRevision != "" && cur.Revision != expectRevision:
		return datasource.Snapshot{}, fmt.Errorf("file: %s is at revision %s, expected %s: %w", s.path, cur.Revision, expectRevision, datasource.ErrConflict)
	}
	if err := atomicfile.Write(target, data, s.perm); err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: %w", err)
	}
	return datasource.Snapshot{Data: append([]byte(nil), data...), Revision: contentrev.Of(data)}, nil
}

// lock takes the lock every writer of the file takes (withLockPath, else
// "<name>.lock" in the state directory beside the file the path leads to)
// and returns that file,
// the one a write replaces: the path with its links followed.
func (s *Source) lock(ctx context.Context) (target string, unlock func(), err error) {
	target = s.path
	if resolved, err := filepath.EvalSymlinks(s.path); err == nil {
		target = resolved
	}
	lockPath := s.lockPath
	if lockPath == "" {
		dir, base := filepath.Split(target)
		state, err := statedir.Dir(dir)
		if err != nil {
			return "", nil, fmt.Errorf("file: lock %s: %w", target, err)
		}
		lockPath = filepath.Join(state, base+".lock")
	}
	unlock, err = lockFile(ctx, lockPath)
	if err != nil {
		return "", nil, fmt.Errorf("file: lock %s: %w", lockPath, err)
	}
	return target, unlock, nil
}

// Delete removes the file if its current revision is expectRevision (""
// meaning: whatever it holds), and returns an error wrapping
// datasource.ErrConflict, removing nothing, otherwise. A file that does not
// exist is not an error: deleting is idempotent. The comparison and the
// removal happen under the lock Write takes, so they are one step for
// every writer that takes it; the directory is synced after the removal.
// A symbolic link is removed itself, not the file it leads to (which other
// names may share): the document at this path is gone. Delete is not part
// of the datasource contract; tools use it (removing a canary overlay).
func (s *Source) Delete(ctx context.Context, expectRevision string) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	_, unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := s.Read(ctx)
	if err != nil {
		return err
	}
	if ok, err := backend.MayDelete(cur, expectRevision); !ok {
		if err != nil {
			return fmt.Errorf("file: delete %s: %w", s.path, err)
		}
		return nil
	}
	if err := atomicfile.Remove(s.path); err != nil {
		return fmt.Errorf("file: delete %s: %w", s.path, err)
	}
	return nil
}
