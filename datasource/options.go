package datasource

import (
	"context"
	"log/slog"
	"time"

	"github.com/bulwark-go/bulwark/datasource/internal/limit"
)

// Defaults of the options.
const (
	defaultPollInterval      = time.Second
	defaultReconcileInterval = 30 * time.Second
	defaultBackoffMin        = 100 * time.Millisecond
	defaultBackoffMax        = 30 * time.Second
	defaultReadTimeout       = 10 * time.Second
	defaultUpdateAttempts    = 10
	defaultWaitTimeout       = 10 * time.Second
)

// Option configures a Readable or a Writable. Options that concern only
// one of them are ignored by the other.
type Option func(*options)

type options struct {
	name              string
	logger            *slog.Logger
	pollInterval      time.Duration
	reconcileInterval time.Duration
	backoffMin        time.Duration
	backoffMax        time.Duration
	readTimeout       time.Duration
	cacheDir          string
	keepOnMissing     bool
	updateAttempts    int
	wait              func(ctx context.Context, prev, written Snapshot) error
	noteAuthor        func(data []byte, author string)
	author            string
	waitTimeout       time.Duration
	maxSize           int64
	overlay           string
}

func buildOptions(opts []Option) options {
	o := options{
		pollInterval:      defaultPollInterval,
		reconcileInterval: defaultReconcileInterval,
		backoffMin:        defaultBackoffMin,
		backoffMax:        defaultBackoffMax,
		readTimeout:       defaultReadTimeout,
		updateAttempts:    defaultUpdateAttempts,
		maxSize:           limit.Default,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.backoffMin <= 0 {
		o.backoffMin = defaultBackoffMin
	}
	if o.backoffMax < o.backoffMin {
		o.backoffMax = o.backoffMin
	}
	if o.pollInterval <= 0 {
		o.pollInterval = defaultPollInterval
	}
	if o.updateAttempts < 1 {
		o.updateAttempts = 1
	}
	return o
}

// WithName names the datasource in logs, Status and errors, and names its
// file in the cache directory. Without it a Source that implements
// fmt.Stringer is named by its String method.
func WithName(name string) Option { return func(o *options) { o.name = name } }

// WithLogger sends the datasource's logs to l. By default it logs nothing.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithPollInterval sets how often a Source without a working Watcher is
// read (default 1s).
func WithPollInterval(d time.Duration) Option { return func(o *options) { o.pollInterval = d } }

// WithReconcileInterval sets how often a watched Source is read anyway, to
// catch a change a push missed (default 30s). Zero or
// less turns reconciling off.
func WithReconcileInterval(d time.Duration) Option {
	return func(o *options) { o.reconcileInterval = d }
}

// WithBackoff bounds the delays between retries after errors: the first
// retry waits about min, each next one twice as long, up to max, with
// jitter (defaults 100ms, 30s).
func WithBackoff(min, max time.Duration) Option {
	return func(o *options) { o.backoffMin, o.backoffMax = min, max }
}

// WithReadTimeout bounds each Read (default 10s; zero or
// less: no bound beyond Close).
func WithReadTimeout(d time.Duration) Option { return func(o *options) { o.readTimeout = d } }

// WithCacheDir keeps a last-good copy of every applied document in dir
// (written atomically, one file per datasource name, see WithName); Start
// applies it when the Source cannot be read or its document is rejected.
func WithCacheDir(dir string) Option { return func(o *options) { o.cacheDir = dir } }

// WithMaxSize sets the largest document, in bytes, that a Readable or a
// Writable reads (default 4 MiB). A larger document is refused
// while it is read (an error wrapping ErrTooLarge; the running rules
// stay), never held whole. Zero or less removes the limit.
func WithMaxSize(n int64) Option { return func(o *options) { o.maxSize = n } }

// WithKeepOnMissing keeps the running value when the document is deleted.
// By default a missing document sets the zero value of T (no rules).
func WithKeepOnMissing() Option { return func(o *options) { o.keepOnMissing = true } }

// WithUpdateAttempts bounds how many times Writable.Update tries its
// read-modify-write cycle when it meets ErrConflict (default
// 10).
func WithUpdateAttempts(n int) Option { return func(o *options) { o.updateAttempts = n } }

// WaitApplied makes every Writable write wait, up to timeout (default
// 10s when zero or less), until r has read the written
// document and applied it. The write itself is persisted either way; when
// r rejects the document or the wait times out, the write returns an error
// wrapping ErrNotApplied (and the rejection error).
//
// A document replaced by a later write before r read it counts as applied.
// A read that still returns the document the write replaced (a Source that
// is eventually consistent, such as a Nacos-protocol server with a cache)
// does not, nor does a read of "missing" after an update: r reads again,
// with a growing pause, until it sees the write, a later document, or the
// timeout.
func WaitApplied[T any](r *Readable[T], timeout time.Duration) Option {
	return func(o *options) {
		o.wait = r.waitApplied
		o.noteAuthor = r.noteAuthor
		o.waitTimeout = timeout
	}
}

// WithAuthor names who changes the document through a Writable (a person,
// a tool, an admin endpoint's caller): the rule events of what it writes
// report it (core.RuleSource.Author) when the Readable that applies the
// document is linked to the Writable with WaitApplied, in this process. A
// document is matched by its bytes, so an identical document written by
// another client is reported with the same author. Ignored by a Readable.
func WithAuthor(name string) Option { return func(o *options) { o.author = name } }

// WithOverlay makes a Readable follow the overlay of group beside its
// document: while the overlay exists, its document is the one in force for
// this Readable (a canary instance tries a change before the others); when
// it is deleted, the base document is in force again. The base and the
// overlay are both watched, and the revision of an overlay's document in
// Status is "overlay:GROUP:" and its own. group is 1 to 64 letters,
// digits, '-' or '_', usually chosen at start (from an environment
// variable naming the instance's canary group; "" means none). Every
// backend of this module has overlays: each documents where its overlay
// lives, derived from the base's location. With a Source that has none,
// Start fails saying so. Ignored by a Writable (write to the overlay
// through the backend's Overlay method).
func WithOverlay(group string) Option { return func(o *options) { o.overlay = group } }
