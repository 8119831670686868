package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/atomicfile"
)

// DefaultDebounce is how long Watch lets a burst of file events settle
// after an in-place write before it reads the file.
const DefaultDebounce = 5 * time.Millisecond

// Option configures a Source.
type Option func(*Source)

// WithPerm sets the permission bits of a file Write creates (default
// 0o644). A file that exists keeps its own.
func WithPerm(perm fs.FileMode) Option { return func(s *Source) { s.perm = perm.Perm() } }

// WithPolling makes Watch report datasource.ErrWatchUnsupported, so the
// Readable polls the file (content hash) at its poll interval instead of
// using inotify-style notifications: for file systems that deliver no
// events (some network and FUSE mounts).
func WithPolling() Option { return func(s *Source) { s.polling = true } }

// WithDebounce sets how long Watch waits after the first in-place write
// event of a burst before it reads the file (default DefaultDebounce); a
// writer that truncates and then writes is then read once, complete.
// Renames, creations and removals (atomic saves, ConfigMap swaps) are read
// at once. Zero reads at once after every event.
func WithDebounce(d time.Duration) Option { return func(s *Source) { s.debounce = max(d, 0) } }

// WithLockPath sets the lock file Write holds while it compares and
// replaces (default: ".<name>.lock" beside the file). Every process that
// writes the file must use the same lock file.
func WithLockPath(path string) Option { return func(s *Source) { s.lockPath = path } }

// Source is a rule document in a file: a datasource.Source, a
// datasource.Watcher and a datasource.Sink. Its revision is the content
// revision (datasource.ContentRevision). It is safe for concurrent use.
type Source struct {
	path     string
	perm     fs.FileMode
	polling  bool
	debounce time.Duration
	lockPath string
	closed   atomic.Bool
}

var (
	_ datasource.Source  = (*Source)(nil)
	_ datasource.Watcher = (*Source)(nil)
	_ datasource.Sink    = (*Source)(nil)
)

// New returns a Source for the file at path. It touches nothing: the file
// may not exist yet (a missing document) and is created by the first
// Write.
func New(path string, opts ...Option) *Source {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s := &Source{path: path, perm: 0o644, debounce: DefaultDebounce}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	return s
}

// String returns "file:" and the file's absolute path.
func (s *Source) String() string { return "file:" + s.path }

// Path returns the file's absolute path.
func (s *Source) Path() string { return s.path }

// Close marks the Source closed: later calls return datasource.ErrClosed.
// A running Watch ends when its context does.
func (s *Source) Close() error {
	s.closed.Store(true)
	return nil
}

// Read returns the file's content. A file that does not exist is a
// missing document; a symbolic link is followed.
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	if s.closed.Load() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return datasource.Snapshot{}, err
	}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return datasource.Snapshot{Missing: true}, nil
	}
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: %w", err)
	}
	if fi, statErr := os.Stat(s.path); statErr == nil && fi.IsDir() {
		return datasource.Snapshot{}, fmt.Errorf("file: %s is a directory", s.path)
	}
	return datasource.Snapshot{Data: data, Revision: datasource.ContentRevision(data)}, nil
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
	if s.closed.Load() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	target := s.path
	if resolved, err := filepath.EvalSymlinks(s.path); err == nil {
		target = resolved
	}
	lockPath := s.lockPath
	if lockPath == "" {
		dir, base := filepath.Split(target)
		lockPath = filepath.Join(dir, "."+base+".lock")
	}
	unlock, err := lockFile(ctx, lockPath)
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: lock %s: %w", lockPath, err)
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
	return datasource.Snapshot{Data: append([]byte(nil), data...), Revision: datasource.ContentRevision(data)}, nil
}

// Watch watches the file's directory (and, when the file is a symbolic
// link, its target's directory) and calls changed after every change of
// the file's content later than from, including changes made before the
// watch was set up. Watching the directory rather than the file is what
// makes an editor's atomic save (a temporary file renamed over) and a
// Kubernetes ConfigMap update (the "..data" symbolic link swapped) visible.
//
// Watch returns an error wrapping datasource.ErrWatchUnsupported when
// notifications are not available (no inotify, its limits reached, or
// WithPolling); any other error is a broken watch (for example the
// directory was removed), after which the Readable reads again and calls
// Watch again.
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.closed.Load() {
		return datasource.ErrClosed
	}
	if s.polling {
		return fmt.Errorf("file: %s: polling requested: %w", s.path, datasource.ErrWatchUnsupported)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("file: watch %s: %w: %w", s.path, datasource.ErrWatchUnsupported, err)
	}
	defer w.Close()

	primary := filepath.Dir(s.path)
	if err := w.Add(primary); err != nil {
		if isLimit(err) {
			return fmt.Errorf("file: watch %s: %w: %w", primary, datasource.ErrWatchUnsupported, err)
		}
		return fmt.Errorf("file: watch %s: %w", primary, err)
	}
	watched := map[string]bool{primary: true}
	s.followLinks(w, watched, primary)

	last := from
	check := func() {
		snap, err := s.Read(ctx)
		if err != nil {
			changed(datasource.Snapshot{}) // a plain hint: let the reader see the error
			return
		}
		if snap.Missing != last.Missing || snap.Revision != last.Revision {
			last = snap
			changed(snap)
		}
	}
	check() // anything that changed between from and now

	var settle *time.Timer
	var settled <-chan time.Time
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("file: watch %s: event channel closed", primary)
			}
			if ev.Name == primary && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return fmt.Errorf("file: watch %s: directory removed or renamed", primary)
			}
			s.followLinks(w, watched, primary)
			if s.debounce <= 0 || !ev.Has(fsnotify.Write) {
				// A rename, create or remove replaces the file whole: read
				// at once. Only in-place writes may be half done.
				check()
				continue
			}
			if settled == nil {
				if settle == nil {
					settle = time.NewTimer(s.debounce)
				} else {
					settle.Reset(s.debounce)
				}
				settled = settle.C
			}
		case <-settled:
			settled = nil
			check()
		case err, ok := <-w.Errors:
			if !ok {
				return fmt.Errorf("file: watch %s: error channel closed", primary)
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				check() // events were lost: look at the file itself
				continue
			}
			return fmt.Errorf("file: watch %s: %w", primary, err)
		}
	}
}

// followLinks adds the directory of the file's resolved target to the
// watch (and removes target directories no longer in use), so a file that
// is a link into another directory is followed too.
func (s *Source) followLinks(w *fsnotify.Watcher, watched map[string]bool, primary string) {
	want := map[string]bool{primary: true}
	if resolved, err := filepath.EvalSymlinks(s.path); err == nil {
		want[filepath.Dir(resolved)] = true
	}
	for dir := range want {
		if !watched[dir] {
			if w.Add(dir) == nil {
				watched[dir] = true
			}
		}
	}
	for dir := range watched {
		if !want[dir] {
			_ = w.Remove(dir) // fails when the directory is gone already
			delete(watched, dir)
		}
	}
}

// isLimit reports an error that means notifications are not available here.
func isLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) ||
		errors.Is(err, syscall.ENOSYS) || errors.Is(err, errors.ErrUnsupported)
}
