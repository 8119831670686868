package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	reads    atomic.Int64 // calls of Read, for tests
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
	if s.closed.Load() {
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
	data, err := datasource.ReadAll(ctx, ctxReader{ctx, f})
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("file: read %s: %w", s.path, err)
	}
	return datasource.Snapshot{Data: data, Revision: datasource.ContentRevision(data)}, nil
}

// checkFile refuses a file that is not a regular file, or whose size is
// over the limit ctx carries.
func (s *Source) checkFile(ctx context.Context, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("file: %s is %s, not a regular file", s.path, describe(fi.Mode()))
	}
	if err := datasource.CheckSize(ctx, fi.Size()); err != nil {
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

// Watch calls changed after every change of the file's content later than
// from, including changes made before the watch was set up.
//
// It watches directories, not the file: the directory of the file and of
// every symbolic link on the way to it (the file itself a link, a link in
// the middle of a chain, a directory on the path that is a link such as a
// Kubernetes ConfigMap's "..data"), and of the file the chain ends at.
// Watching directories is what makes an editor's atomic save (a temporary
// file renamed over) and a link swapped by renaming a new one over it
// visible. Only events on those names count (or on a directory that leads
// to one of them); after each, Watch follows the chain again, moves its
// watches to the directories the chain now goes through, and reads the
// file. Events on other files in those directories (a log file beside the
// rules) are ignored. A directory of the chain that does not exist (a
// dangling link) is waited for by watching its closest existing parent.
//
// Watch returns an error wrapping datasource.ErrWatchUnsupported when
// notifications are not available (no inotify, its limits reached, or
// WithPolling); any other error is a broken watch (for example the file's
// own directory was removed), after which the Readable reads again and
// calls Watch again.
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

	t := &tracker{w: w, path: s.path, watched: map[string]bool{}}
	if err := t.update(); err != nil {
		return err
	}

	// check reads the file and hints its revision (the document itself
	// is not passed on: the watcher keeps no copy of it). After an event
	// it always hints, even when the content is what this watch read last:
	// the Readable may have read an intermediate document meanwhile (A, B
	// read by the Readable, A again), and only it knows what it read; it
	// drops a hint of the document it holds when no read is in flight.
	// The first check, once the watches are armed, hints only a change
	// since from.
	check := func(event bool) {
		snap, err := s.Read(ctx)
		if err != nil {
			changed(datasource.Snapshot{}) // a plain hint: let the reader see the error
			return
		}
		if event || snap.Missing != from.Missing || snap.Revision != from.Revision {
			changed(datasource.Snapshot{Revision: snap.Revision, Missing: snap.Missing})
		}
	}
	check(false) // anything that changed between from and now

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
				return fmt.Errorf("file: watch %s: event channel closed", t.home)
			}
			if !t.relevant(ev.Name) {
				continue
			}
			if ev.Name == t.home && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return fmt.Errorf("file: watch %s: directory removed or renamed", t.home)
			}
			if err := t.update(); err != nil {
				return err
			}
			if s.debounce <= 0 || !ev.Has(fsnotify.Write) {
				// A rename, create or remove replaces the file (or a link)
				// whole: read at once. Only in-place writes may be half done.
				check(true)
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
			check(true)
		case err, ok := <-w.Errors:
			if !ok {
				return fmt.Errorf("file: watch %s: error channel closed", t.home)
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: follow the chain again and look at the
				// file itself.
				if err := t.update(); err != nil {
					return err
				}
				check(true)
				continue
			}
			return fmt.Errorf("file: watch %s: %w", t.home, err)
		}
	}
}

// tracker keeps a watch on every directory that the path's chain of links
// goes through.
type tracker struct {
	w    *fsnotify.Watcher
	path string
	// home is the directory that holds the path's own entry, with its
	// links resolved. Its removal breaks the watch.
	home string
	// names are the entries (links resolved in their directories) whose
	// change can change what the path reads: every link followed and the
	// file the chain ends at.
	names   []string
	watched map[string]bool
}

// update follows the chain again and moves the watches to the directories
// it now goes through.
func (t *tracker) update() error {
	home, err := filepath.EvalSymlinks(filepath.Dir(t.path))
	if err != nil {
		return fmt.Errorf("file: watch %s: %w", filepath.Dir(t.path), err)
	}
	t.home = home
	t.names = linkChain(t.path)
	want := map[string]bool{}
	if err := t.add(home); err != nil {
		if isLimit(err) {
			return fmt.Errorf("file: watch %s: %w: %w", home, datasource.ErrWatchUnsupported, err)
		}
		return fmt.Errorf("file: watch %s: %w", home, err)
	}
	want[home] = true
	for _, name := range t.names {
		// The closest directory of name that exists: a dangling link's
		// target directory may be created later.
		for dir := filepath.Dir(name); !want[dir]; dir = filepath.Dir(dir) {
			err := t.add(dir)
			if err == nil {
				want[dir] = true
				break
			}
			if isLimit(err) {
				return fmt.Errorf("file: watch %s: %w: %w", dir, datasource.ErrWatchUnsupported, err)
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	for dir := range t.watched {
		if !want[dir] {
			_ = t.w.Remove(dir) // fails when the directory is gone already
			delete(t.watched, dir)
		}
	}
	return nil
}

// add watches dir. It adds it again when it is watched already: a
// directory removed and made again since (a new inode) needs a new watch,
// and adding a watch again is cheap.
func (t *tracker) add(dir string) error {
	if err := t.w.Add(dir); err != nil {
		return err
	}
	t.watched[dir] = true
	return nil
}

// relevant reports whether an event on name can change what the path
// reads: name is one of the chain's entries or a directory on the way to
// one of them.
func (t *tracker) relevant(name string) bool {
	for _, n := range t.names {
		if n == name || within(name, n) {
			return true
		}
	}
	return name == t.home
}

// within reports whether the clean path p is inside the directory dir.
func within(dir, p string) bool {
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return len(p) > len(dir) && strings.HasPrefix(p, dir)
}

// maxLinks bounds how many links linkChain follows (a loop ends there).
const maxLinks = 255

// linkChain resolves path (absolute) as the system does, one component at
// a time, and returns the entries met on the way whose change can change
// what path refers to: each symbolic link followed, as its path in its
// directory with that directory's own links resolved, and the entry the
// chain ends at (which may not exist: then the path where it would be).
func linkChain(path string) []string {
	var names []string
	vol := filepath.VolumeName(path)
	dest := vol + string(filepath.Separator)
	todo := path[len(vol):]
	for links := 0; ; {
		todo = strings.TrimLeft(todo, string(filepath.Separator))
		if todo == "" {
			return append(names, dest)
		}
		comp, rest, _ := strings.Cut(todo, string(filepath.Separator))
		todo = rest
		switch comp {
		case ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing (or unreadable): this is where the file would be.
			return append(names, filepath.Join(next, todo))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dest = next
			continue
		}
		names = append(names, next)
		if links++; links > maxLinks {
			return names
		}
		target, err := os.Readlink(next)
		if err != nil {
			return names
		}
		if filepath.IsAbs(target) || filepath.VolumeName(target) != "" {
			vol = filepath.VolumeName(target)
			dest = vol + string(filepath.Separator)
			target = target[len(vol):]
		}
		todo = target + string(filepath.Separator) + todo
	}
}

// isLimit reports an error that means notifications are not available here.
func isLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) ||
		errors.Is(err, syscall.ENOSYS) || errors.Is(err, errors.ErrUnsupported)
}
