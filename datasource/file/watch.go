package file

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/logctx"
)

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
// notifications are not available (no inotify, or its limits reached);
// datasource.ErrClosed when the Source is closed; any other
// error is a broken watch (for example the file's own directory was
// removed), after which the Readable reads again and calls Watch again.
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	if s.polling {
		return fmt.Errorf("file: %s: polling requested: %w", s.path, datasource.ErrWatchUnsupported)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("file: watch %s: %w: %w", s.path, datasource.ErrWatchUnsupported, err)
	}
	defer fsw.Close()
	ctx, stop := s.life.WatchContext(ctx)
	defer stop()

	w := &watch{s: s, log: logctx.From(ctx), fsw: fsw, chain: &tracker{w: fsw, path: s.path, watched: map[string]bool{}}, changed: changed}
	if err := w.chain.update(); err != nil {
		return err
	}
	w.log.Debug("file watch", "path", s.path, "dirs", len(w.chain.watched), "from_revision", from.Revision, "from_missing", from.Missing)
	w.since(ctx, from) // anything that changed between from and now
	return s.life.WatchEnded(ctx, w.follow(ctx))
}

// watch is one running Watch: the directories it watches and what it does
// with their events.
type watch struct {
	s       *Source
	log     *slog.Logger // the calling Readable's (datasource.WithLogger)
	fsw     *fsnotify.Watcher
	chain   *tracker
	changed func(datasource.Snapshot)
	settle  debounce
}

// follow handles the watcher's events until ctx ends (it returns
// ctx.Err()) or the watch breaks (it returns why).
func (w *watch) follow(ctx context.Context) error {
	w.settle.d = w.s.debounce
	defer w.settle.stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return fmt.Errorf("file: watch %s: event channel closed", w.chain.home)
			}
			if err := w.event(ctx, ev); err != nil {
				return err
			}
		case <-w.settle.c:
			w.settle.fired()
			w.log.Debug("file watch: writes settled", "path", w.s.path)
			w.check(ctx)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return fmt.Errorf("file: watch %s: error channel closed", w.chain.home)
			}
			if err := w.fsError(ctx, err); err != nil {
				return err
			}
		}
	}
}

// event handles one file system event: an event on a name that cannot
// change what the path reads is ignored; the removal of the path's own
// directory breaks the watch; any other event moves the watches along the
// chain and reads the file, at once or, for an in-place write, once the
// burst of writes settled.
func (w *watch) event(ctx context.Context, ev fsnotify.Event) error {
	if !w.chain.relevant(ev.Name) {
		w.log.Debug("file watch: event on another file ignored", "path", w.s.path, "name", ev.Name, "op", ev.Op.String())
		return nil
	}
	if ev.Name == w.chain.home && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		return fmt.Errorf("file: watch %s: directory removed or renamed", w.chain.home)
	}
	if err := w.chain.update(); err != nil {
		return err
	}
	if w.s.debounce <= 0 || !ev.Has(fsnotify.Write) {
		// A rename, create or remove replaces the file (or a link) whole:
		// read at once. Only in-place writes may be half done.
		w.log.Debug("file watch: event", "path", w.s.path, "name", ev.Name, "op", ev.Op.String())
		w.check(ctx)
		return nil
	}
	w.settle.start()
	return nil
}

// fsError handles an error of the watcher: lost events make it follow the
// chain again and read the file; any other error breaks the watch.
func (w *watch) fsError(ctx context.Context, err error) error {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		return fmt.Errorf("file: watch %s: %w", w.chain.home, err)
	}
	w.log.Debug("file watch: event queue overflowed; reading the file", "path", w.s.path)
	if err := w.chain.update(); err != nil {
		return err
	}
	w.check(ctx)
	return nil
}

// since reads the file once the watches are armed and hints its revision
// if it is not from's.
func (w *watch) since(ctx context.Context, from datasource.Snapshot) {
	snap, err := w.s.Read(ctx)
	switch {
	case err != nil:
		w.changed(datasource.Snapshot{}) // a plain hint: let the reader see the error
	case snap.Missing != from.Missing || snap.Revision != from.Revision:
		w.changed(datasource.Snapshot{Revision: snap.Revision, Missing: snap.Missing})
	}
}

// check reads the file after an event and hints its revision (the
// document itself is not passed on: the watcher keeps no copy of it). It
// hints even when the content is what this watch read last: the Readable
// may have read an intermediate document meanwhile (A, B read by the
// Readable, A again), and only it knows what it read; it drops a hint of
// the document it holds when no read is in flight.
func (w *watch) check(ctx context.Context) {
	snap, err := w.s.Read(ctx)
	if err != nil {
		w.changed(datasource.Snapshot{}) // a plain hint: let the reader see the error
		return
	}
	w.changed(datasource.Snapshot{Revision: snap.Revision, Missing: snap.Missing})
}

// debounce delays the read that follows in-place writes until d after
// the first write of a burst. Its channel c is nil while it is not armed.
type debounce struct {
	d time.Duration
	t *time.Timer
	c <-chan time.Time
}

// start arms the timer, unless it is armed already: later writes of a
// burst do not push the read back.
func (d *debounce) start() {
	if d.c != nil {
		return
	}
	if d.t == nil {
		d.t = time.NewTimer(d.d)
	} else {
		d.t.Reset(d.d)
	}
	d.c = d.t.C
}

// fired disarms the timer after its channel delivered.
func (d *debounce) fired() { d.c = nil }

func (d *debounce) stop() {
	if d.t != nil {
		d.t.Stop()
	}
}
