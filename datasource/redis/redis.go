package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/datasource"
)

// DefaultHealthCheckInterval is how long Watch lets the subscription stay
// silent before it sends a PING, and how long it then waits for the answer
// before it declares the subscription broken.
const DefaultHealthCheckInterval = 5 * time.Second

// Option configures a Source.
type Option func(*Source)

// WithHealthCheckInterval sets how long Watch waits on a silent
// subscription before it sends a PING, and how long it waits for the PONG
// before Watch returns an error (default DefaultHealthCheckInterval). A
// server that is frozen, or a connection that a middlebox dropped without
// a reset, is so noticed within twice this interval. Zero or less keeps
// the default.
func WithHealthCheckInterval(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.health = d
		}
	}
}

// Source is a rule document in a Redis string key, with change
// notifications on a Pub/Sub channel: a datasource.Source, a
// datasource.Watcher and a datasource.Sink. Its revision is the content
// revision (datasource.ContentRevision). It is safe for concurrent use.
type Source struct {
	client  goredis.UniversalClient
	key     string
	channel string
	health  time.Duration

	closeOnce sync.Once
	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
}

var (
	_ datasource.Source  = (*Source)(nil)
	_ datasource.Watcher = (*Source)(nil)
	_ datasource.Sink    = (*Source)(nil)
)

// New returns a Source for the document stored at key, whose changes are
// announced on channel, through client. It touches nothing: the key may
// not exist yet (a missing document). TLS, authentication (ACL user and
// password), the database number, timeouts and retries are the client's:
// configure them there. Closing the Source does not close client.
func New(client goredis.UniversalClient, key, channel string, opts ...Option) *Source {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Source{
		client:  client,
		key:     key,
		channel: channel,
		health:  DefaultHealthCheckInterval,
		ctx:     ctx,
		cancel:  cancel,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	return s
}

// String returns "redis:" and the key.
func (s *Source) String() string { return "redis:" + s.key }

// Key returns the key that holds the document.
func (s *Source) Key() string { return s.key }

// Channel returns the channel that announces changes.
func (s *Source) Channel() string { return s.channel }

// Close marks the Source closed: later calls return datasource.ErrClosed,
// and a running Watch returns. It does not close the client. It is
// idempotent.
func (s *Source) Close() error {
	s.closeOnce.Do(s.cancel)
	return nil
}

func (s *Source) isClosed() bool { return s.ctx.Err() != nil }

// Read GETs the key. A key that does not exist is a missing document; a
// key that holds another type than a string is an error.
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	if s.isClosed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	data, err := s.client.Get(ctx, s.key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return datasource.Snapshot{Missing: true}, nil
	}
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("redis: get %q: %w", s.key, err)
	}
	return datasource.Snapshot{Data: data, Revision: datasource.ContentRevision(data)}, nil
}

// Write stores data at the key if the key's current content revision is
// expectRevision ("" meaning: only if the key does not exist), and
// publishes data on the channel, in one transaction: WATCH key, GET key,
// compare, then MULTI, SET key data, PUBLISH channel data, EXEC. Another
// client that changes the key between the GET and the EXEC aborts the
// transaction. A revision mismatch or an aborted transaction returns an
// error wrapping datasource.ErrConflict, and nothing is stored.
//
// The whole document is published, as Java Sentinel's Redis datasource
// expects, so Java services subscribed to the same channel apply it too;
// bulwark's own Watch only takes the message as a hint and GETs the key.
func (s *Source) Write(ctx context.Context, data []byte, expectRevision string) (datasource.Snapshot, error) {
	if s.isClosed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	var txErr error // the error of the transaction function, already explained
	err := s.client.Watch(ctx, func(tx *goredis.Tx) error {
		txErr = s.compareAndSet(ctx, tx, data, expectRevision)
		return txErr
	}, s.key)
	switch {
	case err == nil:
		return datasource.Snapshot{Data: append([]byte(nil), data...), Revision: datasource.ContentRevision(data)}, nil
	case errors.Is(err, goredis.TxFailedErr):
		return datasource.Snapshot{}, fmt.Errorf("redis: key %q changed during the write: %w: %w", s.key, datasource.ErrConflict, err)
	case txErr != nil && err == txErr:
		return datasource.Snapshot{}, err
	default:
		return datasource.Snapshot{}, fmt.Errorf("redis: watch %q: %w", s.key, err)
	}
}

// compareAndSet runs inside WATCH key: it compares the key's revision with
// expectRevision and queues SET and PUBLISH in MULTI ... EXEC. EXEC fails
// with redis.TxFailedErr when the key changed since WATCH.
func (s *Source) compareAndSet(ctx context.Context, tx *goredis.Tx, data []byte, expectRevision string) error {
	cur, err := tx.Get(ctx, s.key).Bytes()
	missing := errors.Is(err, goredis.Nil)
	if err != nil && !missing {
		return fmt.Errorf("redis: get %q: %w", s.key, err)
	}
	switch {
	case expectRevision == "" && !missing:
		return fmt.Errorf("redis: key %q exists (revision %s): %w", s.key, datasource.ContentRevision(cur), datasource.ErrConflict)
	case expectRevision != "" && missing:
		return fmt.Errorf("redis: key %q does not exist, expected revision %s: %w", s.key, expectRevision, datasource.ErrConflict)
	case expectRevision != "":
		if rev := datasource.ContentRevision(cur); rev != expectRevision {
			return fmt.Errorf("redis: key %q is at revision %s, expected %s: %w", s.key, rev, expectRevision, datasource.ErrConflict)
		}
	}
	_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Set(ctx, s.key, data, 0)
		p.Publish(ctx, s.channel, data)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis: set %q and publish on %q: %w", s.key, s.channel, err)
	}
	return nil
}

// Watch SUBSCRIBEs to the channel and calls changed (with an empty
// snapshot: a hint) for every message on it, until ctx is done or the
// Source is closed (then it returns ctx.Err() or datasource.ErrClosed), or
// the subscription breaks (then it returns the cause).
//
// Once the server has confirmed the subscription, Watch GETs the key and
// calls changed if the document differs from from, so a change made
// between the read of from and the subscription is not missed. A later
// subscription confirmation (a client that re-subscribed by itself after
// reconnecting) is also reported to changed, since messages published
// while it was away are lost. Any receive error other than a read timeout
// breaks the watch, and so does a PING that the server does not answer
// within the health-check interval (WithHealthCheckInterval): the
// Readable then reads the key again and calls Watch again.
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.isClosed() {
		return datasource.ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopClose := context.AfterFunc(s.ctx, cancel)
	defer stopClose()

	ps := s.client.Subscribe(ctx)
	// ps.Close from another goroutine is how a blocked receive ends when
	// ctx is done; wait for that goroutine before returning.
	closed := make(chan struct{})
	stopPS := context.AfterFunc(ctx, func() {
		_ = ps.Close()
		close(closed)
	})
	defer func() {
		if stopPS() {
			_ = ps.Close()
		} else {
			<-closed
		}
	}()
	fail := func(err error) error {
		if ctx.Err() != nil {
			if s.isClosed() {
				return datasource.ErrClosed
			}
			return ctx.Err()
		}
		return err
	}

	if err := ps.Subscribe(ctx, s.channel); err != nil {
		return fail(fmt.Errorf("redis: subscribe %q: %w", s.channel, err))
	}
	subscribed := false
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, s.health)
		if err != nil {
			if !isTimeout(err) || ctx.Err() != nil {
				return fail(fmt.Errorf("redis: receive on %q: %w", s.channel, err))
			}
			if !subscribed {
				return fail(fmt.Errorf("redis: subscribe %q: no confirmation within %v", s.channel, s.health))
			}
			if pinged {
				return fail(fmt.Errorf("redis: subscription to %q: no answer to PING within %v", s.channel, s.health))
			}
			if err := ps.Ping(ctx); err != nil {
				return fail(fmt.Errorf("redis: subscription to %q: ping: %w", s.channel, err))
			}
			pinged = true
			continue
		}
		pinged = false // the connection answered
		switch m := msg.(type) {
		case *goredis.Subscription:
			if m.Kind != "subscribe" || m.Channel != s.channel {
				continue
			}
			if subscribed {
				// Re-subscribed after a reconnect: what was published
				// meanwhile is lost; have the key read again.
				changed(datasource.Snapshot{})
				continue
			}
			subscribed = true
			// Subscribed: from now on every change is announced. Anything
			// that changed before is in the key.
			snap, err := s.Read(ctx)
			if err != nil {
				return fail(err)
			}
			if snap.Missing != from.Missing || snap.Revision != from.Revision {
				changed(snap)
			}
		case *goredis.Message:
			if m.Channel == s.channel {
				// A hint: the payload may be the document (Java Sentinel's
				// writers) or anything else; the key is the truth.
				changed(datasource.Snapshot{})
			}
		case *goredis.Pong:
		}
	}
}

// isTimeout reports a read deadline that passed: no message within the
// interval, not a broken connection.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
