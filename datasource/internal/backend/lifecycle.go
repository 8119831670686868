// Package backend holds what every backend's Source shares (package file,
// etcd, redis, zookeeper, nacos): one lifecycle, so that Close means the
// same everywhere.
package backend

import (
	"context"
	"sync"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/bounded"
)

// CloseWait is the default bound on how long a backend's Close waits for
// the calls Go runs: such a call ends when the server answers or the
// client's own timeout passes.
const CloseWait = 5 * time.Second

// Lifecycle is a Source's open or closed state. Close refuses later
// calls, ends every running Watch and waits, up to a bound, for the calls
// that Go runs. The zero Lifecycle is open.
type Lifecycle struct {
	once   sync.Once
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu     sync.Mutex // orders calls.Add before Close's Wait
	closed bool
	calls  sync.WaitGroup
}

func (l *Lifecycle) init() {
	l.once.Do(func() { l.ctx, l.cancel = context.WithCancel(context.Background()) })
}

// Closed reports whether Close was called.
func (l *Lifecycle) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Go runs f on a goroutine that Close waits for, or returns
// datasource.ErrClosed once Close was called. A backend runs a call that
// takes no context (go-zookeeper, the Nacos SDK, a go-redis command waiting
// for its answer) this way, so its caller can return when its own context
// ends.
func (l *Lifecycle) Go(f func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return datasource.ErrClosed
	}
	l.calls.Go(f)
	return nil
}

// Call runs f through l.Go and returns its result, or, as soon as ctx
// ends, ctx's cause (f goes on, and Close waits for it), or
// datasource.ErrClosed once Close was called: how a backend makes a call
// that takes no context return with its caller's context. Because f may
// run on after Call returned, f hands back what it got only as its
// result: a variable of the caller that f writes races with the caller's
// reading it (the conformance case CallsCutShortByContext catches that
// under -race).
func Call[T any](ctx context.Context, l *Lifecycle, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	var zero T
	if err := l.Go(func() { v, err := f(); done <- result{v, err} }); err != nil {
		return zero, err
	}
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, context.Cause(ctx)
	}
}

// WatchContext returns a context that ends with ctx or with Close,
// whichever comes first: a Watch runs under it, so that Close stops it.
// Call stop when the Watch returns.
func (l *Lifecycle) WatchContext(ctx context.Context) (watch context.Context, stop func()) {
	l.init()
	watch, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(l.ctx, cancel)
	return watch, func() { unhook(); cancel() }
}

// WatchEnded is what a Watch running under watch (from WatchContext)
// returns when it stops because of err: datasource.ErrClosed once the
// Source is closed, the context's error once it ended, else err.
func (l *Lifecycle) WatchEnded(watch context.Context, err error) error {
	switch {
	case l.Closed():
		return datasource.ErrClosed
	case watch.Err() != nil:
		return watch.Err()
	}
	return err
}

// Close marks the Source closed, ends its running Watches and waits for
// the calls that Go runs, up to wait (without bound when wait is zero or
// less). It reports whether they all ended. It is idempotent.
func (l *Lifecycle) Close(wait time.Duration) bool {
	l.init()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	return bounded.Wait(&l.calls, wait)
}
