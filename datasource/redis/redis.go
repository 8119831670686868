package redis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/backend"
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/internal/overlay"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
)

// defaultHealthCheckInterval is how long Watch lets the subscription stay
// silent before it sends a PING, and how long it then waits for the answer
// before it declares the subscription broken.
const defaultHealthCheckInterval = 5 * time.Second

// Option configures a Source.
type Option func(*Source)

// withHealthCheckInterval sets how long Watch waits on a silent
// subscription before it sends a PING, and how long it waits for the PONG
// before Watch returns an error (default 5 s). A
// server that is frozen, or a connection that a middlebox dropped without
// a reset, is so noticed within twice this interval. Zero or less keeps
// the default.
func withHealthCheckInterval(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.health = d
		}
	}
}

// withCloseWait bounds how long Close waits for the commands of Reads and
// Writes that returned early because their context ended (default
// backend.CloseWait, 5 s); such a command ends when the server answers or
// the client's ReadTimeout passes. Zero or less waits without bound. Tests
// shorten it.
func withCloseWait(d time.Duration) Option { return func(s *Source) { s.closeWait = d } }

// WithServers sets the server addresses that the Source's name (String)
// shows, for a client that does not tell them: a failover (Sentinel)
// client reports no address (pass the master name and the sentinels, for
// example "mymaster@10.0.0.1:26379"), nor does a UniversalClient that is
// not a *redis.Client, *redis.ClusterClient or *redis.Ring. It changes
// nothing else. The list is sorted.
func WithServers(addrs ...string) Option {
	return func(s *Source) {
		a := slices.Clone(addrs)
		slices.Sort(a)
		s.servers = strings.Join(slices.Compact(a), ",")
	}
}

// Source is a rule document in a Redis string key, with change
// notifications on a Pub/Sub channel: a datasource.Source, a
// datasource.Watcher and a datasource.Sink. Its revision is the content
// revision (a hash of the bytes). It is safe for concurrent use.
type Source struct {
	client    goredis.UniversalClient
	key       string
	channel   string
	health    time.Duration
	closeWait time.Duration
	servers   string // WithServers, else the client's addresses
	db        int
	life      backend.Lifecycle // counts the commands in flight
	reg       *registry.Registry
	reopen    func(key, channel string) *Source
}

var (
	_ datasource.Source   = (*Source)(nil)
	_ datasource.Watcher  = (*Source)(nil)
	_ datasource.Sink     = (*Source)(nil)
	_ datasource.Registry = (*Source)(nil)
)

// New returns a Source for the document stored at key, whose changes are
// announced on channel, through client. It touches nothing: the key may
// not exist yet (a missing document). TLS, authentication (ACL user and
// password), the database number, timeouts and retries are the client's:
// configure them there. Closing the Source does not close client.
func New(client goredis.UniversalClient, key, channel string, opts ...Option) *Source {
	s := &Source{
		client:    client,
		key:       key,
		channel:   channel,
		health:    defaultHealthCheckInterval,
		closeWait: backend.CloseWait,
	}
	s.servers, s.db = describe(client)
	s.reopen = func(k, c string) *Source { return New(client, k, c, opts...) }
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	s.reg = registry.New("redis", instanceStore{s})
	return s
}

// Overlay returns the Source of the overlay of group (see
// datasource.WithOverlay): the key and the channel each followed by
// ".overlay." and group ("bulwark:flow.overlay.canary"), through the same
// client and options.
func (s *Source) Overlay(group string) datasource.Source {
	return s.reopen(overlay.Name(s.key, group), overlay.Name(s.channel, group))
}

// Overlays returns the canary groups that have an overlay beside the
// document (see Overlay), sorted: the keys that SCAN finds matching the
// key, its glob characters escaped, followed by ".overlay.*". A cluster
// client scans every master and a ring every shard. SCAN walks the key
// space in steps: a key created or removed while it walks may be listed or
// not. Like Read, Overlays returns when ctx ends.
func (s *Source) Overlays(ctx context.Context) ([]string, error) {
	keys, err := s.scan(ctx, escapeGlob(overlay.Prefix(s.key))+"*")
	switch {
	case errors.Is(err, datasource.ErrClosed):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("redis: list the overlays of %q: %w", s.key, err)
	}
	return overlay.Groups(s.key, keys), nil
}

// scan returns the keys that SCAN finds matching the pattern match: on
// every master of a cluster client and every shard of a ring.
func (s *Source) scan(ctx context.Context, match string) ([]string, error) {
	return call(ctx, s, func() ([]string, error) {
		var mu sync.Mutex
		var keys []string
		scan := func(ctx context.Context, c goredis.Cmdable) error {
			var found []string
			iter := c.Scan(ctx, 0, match, 1000).Iterator()
			for iter.Next(ctx) {
				found = append(found, iter.Val())
			}
			if err := iter.Err(); err != nil {
				return err
			}
			mu.Lock() // a cluster's masters are scanned at once
			defer mu.Unlock()
			keys = append(keys, found...)
			return nil
		}
		each := func(ctx context.Context, c *goredis.Client) error { return scan(ctx, c) }
		var err error
		switch c := s.client.(type) {
		case *goredis.ClusterClient:
			err = c.ForEachMaster(ctx, each)
		case *goredis.Ring:
			err = c.ForEachShard(ctx, each)
		default:
			err = scan(ctx, s.client)
		}
		return keys, err
	})
}

// escapeGlob escapes the characters that a Redis glob pattern (SCAN's
// MATCH) gives a meaning: the pattern then matches s itself.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := range len(s) {
		if strings.IndexByte(`\*?[]`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// describe returns the addresses (sorted, comma-separated) and the
// database number of the servers client talks to, as far as it tells.
func describe(client goredis.UniversalClient) (addrs string, db int) {
	join := func(a []string) string {
		a = slices.Clone(a)
		slices.Sort(a)
		return strings.Join(slices.Compact(a), ",")
	}
	switch c := client.(type) {
	case *goredis.Client:
		o := c.Options()
		if o.Addr == "FailoverClient" { // a Sentinel client: no address to tell
			return "", o.DB
		}
		return o.Addr, o.DB
	case *goredis.ClusterClient:
		return join(c.Options().Addrs), 0
	case *goredis.Ring:
		o := c.Options()
		return join(slices.Collect(maps.Values(o.Addrs))), o.DB
	}
	return "", 0
}

// String names the document: "redis://", the server addresses (the
// client's, or WithServers), "/", the database number, "/" and the key, as
// in "redis://10.0.0.1:6379/0/bulwark:flow". It holds no credentials. The
// Readable names its last-good cache after it.
func (s *Source) String() string {
	return "redis://" + s.servers + "/" + strconv.Itoa(s.db) + "/" + s.key
}

// Close marks the Source closed: later calls return datasource.ErrClosed,
// and a running Watch returns datasource.ErrClosed. It waits, up to
// WithCloseWait, for the commands of Reads and Writes that returned early.
// It closes the registrations made through the Source (deleting their
// keys) and returns the error of those removals. It does not close the
// client. It is idempotent.
func (s *Source) Close() error {
	err := s.reg.Close()
	if !s.life.Close(s.closeWait) {
		return errors.Join(err, fmt.Errorf("redis: close %q: commands still waiting for the server after %v", s.key, s.closeWait))
	}
	return err
}

// call runs f, one exchange with the server, so that the caller returns
// when ctx ends: go-redis lets a context's cancellation (and, unless the
// client has ContextTimeoutEnabled, its deadline) interrupt only the wait
// for a connection, not a command waiting for its answer, which then
// lasts until the client's ReadTimeout. f's goroutine is counted, and
// Close waits for it. f hands back what it got as its result only: it may
// still run after call returned (backend.Call).
func call[T any](ctx context.Context, s *Source, f func() (T, error)) (T, error) {
	return backend.Call(ctx, &s.life, f)
}

// exec is call for a command that answers only an error.
func (s *Source) exec(ctx context.Context, f func() error) error {
	_, err := call(ctx, s, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

// Read reads the key. A key that does not exist is a missing document; a
// key that holds another type than a string is an error.
//
// With a size limit in ctx (datasource.ReadLimit, which the Readable and
// the Writable set) Read is one transaction, MULTI EXISTS key, STRLEN key,
// GETRANGE key 0 limit-1, EXEC: the size and the bytes come from the same
// moment, and a document over the limit is refused (an error wrapping
// datasource.ErrTooLarge that names the key) having received no more than
// limit bytes of it. Without a limit it is GET key.
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	snap, err := call(ctx, s, func() (datasource.Snapshot, error) { return s.read(ctx) })
	if err != nil {
		if errors.Is(err, datasource.ErrClosed) {
			return datasource.Snapshot{}, err
		}
		return datasource.Snapshot{}, fmt.Errorf("redis: get %q: %w", s.key, err)
	}
	return snap, nil
}

func (s *Source) read(ctx context.Context) (datasource.Snapshot, error) {
	maxLen := limit.Of(ctx)
	if maxLen <= 0 {
		data, err := s.client.Get(ctx, s.key).Bytes()
		if errors.Is(err, goredis.Nil) {
			return datasource.Snapshot{Missing: true}, nil
		}
		if err != nil {
			return datasource.Snapshot{}, err
		}
		return datasource.Snapshot{Data: data, Revision: contentrev.Of(data)}, nil
	}
	var exists, size *goredis.IntCmd
	var head *goredis.StringCmd
	_, err := s.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		exists = p.Exists(ctx, s.key)
		size = p.StrLen(ctx, s.key)
		head = p.GetRange(ctx, s.key, 0, maxLen-1)
		return nil
	})
	if err != nil {
		return datasource.Snapshot{}, err
	}
	if exists.Val() == 0 {
		return datasource.Snapshot{Missing: true}, nil
	}
	if err := limit.Check(ctx, size.Val()); err != nil {
		return datasource.Snapshot{}, err
	}
	data := []byte(head.Val())
	return datasource.Snapshot{Data: data, Revision: contentrev.Of(data)}, nil
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
// bulwark's own Watch only takes the message as a hint and reads the key.
//
// Like Read, Write returns when ctx ends; the transaction it leaves behind
// may still complete.
func (s *Source) Write(ctx context.Context, data []byte, expectRevision string) (datasource.Snapshot, error) {
	txErr, err := call(ctx, s, func() (txResult, error) {
		var r txResult
		err := s.client.Watch(ctx, func(tx *goredis.Tx) error {
			r.err = s.compareAndSet(ctx, tx, data, expectRevision)
			return r.err
		}, s.key)
		return r, err
	})
	if err := s.txError(ctx, "write", err, txErr.err); err != nil {
		return datasource.Snapshot{}, err
	}
	return datasource.Snapshot{Data: append([]byte(nil), data...), Revision: contentrev.Of(data)}, nil
}

// Delete removes the key if its current content revision is
// expectRevision, and publishes an empty message on the channel, in one
// transaction as Write does: WATCH key, GET key, compare, then MULTI, DEL
// key, PUBLISH channel "", EXEC. A revision mismatch, or another client
// changing the key between the GET and the EXEC, returns an error wrapping
// datasource.ErrConflict, and nothing is removed. A key that does not
// exist is not an error (deleting is idempotent), and nothing is
// published then. With expectRevision "" it compares nothing: MULTI, DEL,
// PUBLISH, EXEC removes whatever is there.
//
// bulwark's Watch takes the message as a hint and reads the key (missing);
// a Java Sentinel subscriber hands the empty message to its converter.
// Delete is not part of the datasource contract; tools use it (removing a
// canary overlay). Like Write, it returns when ctx ends; the transaction
// it leaves behind may still complete.
func (s *Source) Delete(ctx context.Context, expectRevision string) error {
	txErr, err := call(ctx, s, func() (txResult, error) {
		var r txResult
		if expectRevision == "" {
			r.err = s.deleteAndPublish(ctx, s.client)
			return r, r.err
		}
		err := s.client.Watch(ctx, func(tx *goredis.Tx) error {
			r.err = s.compareAndDelete(ctx, tx, expectRevision)
			return r.err
		}, s.key)
		return r, err
	})
	return s.txError(ctx, "delete", err, txErr.err)
}

// compareAndDelete runs inside WATCH key: it compares the key's revision
// with expectRevision and queues DEL and PUBLISH in MULTI ... EXEC.
func (s *Source) compareAndDelete(ctx context.Context, tx *goredis.Tx, expectRevision string) error {
	cur, err := tx.Get(ctx, s.key).Bytes()
	found := datasource.Snapshot{Missing: errors.Is(err, goredis.Nil)}
	if err != nil && !found.Missing {
		return fmt.Errorf("redis: get %q: %w", s.key, err)
	}
	if !found.Missing {
		found.Revision = contentrev.Of(cur)
	}
	if ok, err := backend.MayDelete(found, expectRevision); !ok {
		if err != nil {
			return fmt.Errorf("redis: delete %q: %w", s.key, err)
		}
		return nil
	}
	return s.deleteAndPublish(ctx, tx)
}

// deleteAndPublish runs MULTI, DEL key, PUBLISH channel "", EXEC through
// c: the client, or a transaction under WATCH (then EXEC fails with
// redis.TxFailedErr when the key changed since WATCH).
func (s *Source) deleteAndPublish(ctx context.Context, c goredis.Cmdable) error {
	_, err := c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Del(ctx, s.key)
		p.Publish(ctx, s.channel, "")
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis: delete %q and publish on %q: %w", s.key, s.channel, err)
	}
	return nil
}

// txResult carries the error of a transaction function (already
// explained) out of call, beside the error of the whole transaction.
type txResult struct{ err error }

// txError explains what a transaction of Write or Delete (op) returned:
// err from the call, txErr from its transaction function.
func (s *Source) txError(ctx context.Context, op string, err, txErr error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, datasource.ErrClosed):
		return err
	case errors.Is(err, goredis.TxFailedErr):
		return fmt.Errorf("redis: key %q changed during the %s: %w: %w", s.key, op, datasource.ErrConflict, err)
	case ctx.Err() != nil:
		return fmt.Errorf("redis: %s %q: %w", op, s.key, err)
	case txErr != nil && err == txErr:
		return err
	default:
		return fmt.Errorf("redis: watch %q: %w", s.key, err)
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
		return fmt.Errorf("redis: key %q exists (revision %s): %w", s.key, contentrev.Of(cur), datasource.ErrConflict)
	case expectRevision != "" && missing:
		return fmt.Errorf("redis: key %q does not exist, expected revision %s: %w", s.key, expectRevision, datasource.ErrConflict)
	case expectRevision != "":
		if rev := contentrev.Of(cur); rev != expectRevision {
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
