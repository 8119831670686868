package etcd

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bulwark-go/bulwark/datasource"
)

// Option configures a Source.
type Option func(*Source)

// WithLogger sends the Source's debug logs (watch start, events, breaks)
// to l. By default it logs nothing; the Readable logs what matters.
func WithLogger(l *slog.Logger) Option {
	return func(s *Source) {
		if l != nil {
			s.log = l
		}
	}
}

// Source is a rule document stored as the value of one etcd key: a
// datasource.Source, a datasource.Watcher and a datasource.Sink. Its
// revision is the key's mod revision, in decimal. It is safe for
// concurrent use.
type Source struct {
	cli    *clientv3.Client
	key    string
	log    *slog.Logger
	closed atomic.Bool

	mu   sync.Mutex
	seen observation // the latest read or write
}

// observation is what the key was at one store revision: Watch starts
// right after it, so a watch never begins at an old (maybe compacted)
// mod revision.
type observation struct {
	valid   bool
	missing bool
	rev     string // mod revision, "" when missing
	header  int64  // store revision of the response
}

var (
	_ datasource.Source  = (*Source)(nil)
	_ datasource.Watcher = (*Source)(nil)
	_ datasource.Sink    = (*Source)(nil)
)

// New returns a Source for key, read, watched and written through client.
// It touches nothing: the key may not exist yet (a missing document). The
// client stays the caller's: TLS, authentication, a namespace
// (namespace.NewKV) and endpoints are configured there, and Close does not
// close it.
func New(client *clientv3.Client, key string, opts ...Option) *Source {
	s := &Source{cli: client, key: key, log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	return s
}

// String returns "etcd:" and the key.
func (s *Source) String() string { return "etcd:" + s.key }

// Key returns the key.
func (s *Source) Key() string { return s.key }

// Close marks the Source closed: later calls return datasource.ErrClosed.
// A running Watch ends when its context does. The client is not closed.
func (s *Source) Close() error {
	s.closed.Store(true)
	return nil
}

// Read gets the key (a linearizable read, unless the client says
// otherwise). An absent key is a missing document; the revision of a
// present one is its mod revision.
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	if s.closed.Load() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	resp, err := s.cli.Get(ctx, s.key)
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("etcd: get %s: %w", s.key, err)
	}
	var snap datasource.Snapshot
	if len(resp.Kvs) == 0 {
		snap = datasource.Snapshot{Missing: true}
	} else {
		kv := resp.Kvs[0]
		snap = datasource.Snapshot{Data: kv.Value, Revision: revision(kv.ModRevision)}
	}
	s.observe(snap, resp.Header.GetRevision())
	return snap, nil
}

// Write stores data as the key's value in one transaction that compares
// the key's mod revision with expectRevision ("": the key must not exist,
// its create revision is 0), and returns the new snapshot. When the
// comparison fails nothing is stored and the error wraps
// datasource.ErrConflict (and names the revision found).
func (s *Source) Write(ctx context.Context, data []byte, expectRevision string) (datasource.Snapshot, error) {
	if s.closed.Load() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	var cmp clientv3.Cmp
	if expectRevision == "" {
		cmp = clientv3.Compare(clientv3.CreateRevision(s.key), "=", 0)
	} else {
		want, err := strconv.ParseInt(expectRevision, 10, 64)
		if err != nil || want <= 0 {
			return datasource.Snapshot{}, fmt.Errorf("etcd: put %s: expected revision %q is not an etcd mod revision: %w",
				s.key, expectRevision, datasource.ErrConflict)
		}
		cmp = clientv3.Compare(clientv3.ModRevision(s.key), "=", want)
	}
	resp, err := s.cli.Txn(ctx).
		If(cmp).
		Then(clientv3.OpPut(s.key, string(data))).
		Else(clientv3.OpGet(s.key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("etcd: put %s: %w", s.key, err)
	}
	if !resp.Succeeded {
		found := "absent"
		if rr := resp.Responses[0].GetResponseRange(); rr != nil && len(rr.Kvs) > 0 {
			found = "at revision " + revision(rr.Kvs[0].ModRevision)
		}
		want := "absent"
		if expectRevision != "" {
			want = "at revision " + expectRevision
		}
		return datasource.Snapshot{}, fmt.Errorf("etcd: put %s: key is %s, expected %s: %w", s.key, found, want, datasource.ErrConflict)
	}
	// The put is the transaction's only write: the key's new mod revision
	// is the store revision of the response.
	header := resp.Header.GetRevision()
	snap := datasource.Snapshot{Data: bytes.Clone(data), Revision: revision(header)}
	s.observe(snap, header)
	return snap, nil
}

// Watch watches the key from the store revision right after the read
// that returned from, so a change made between that read and the watch is
// delivered too; each put or delete calls changed. The watch context
// requires a leader (clientv3.WithRequireLeader), so a member cut off from
// its cluster ends the watch instead of going silent.
//
// Watch returns, for the Readable to read again and watch again, when the
// revision to start from was compacted (the error wraps
// rpctypes.ErrCompacted), when the server cancels the watch (no leader,
// permission denied) and when the watch channel closes. While the server is
// unreachable the client keeps the watch and resumes it by itself,
// from the next revision, when the server answers again.
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.closed.Load() {
		return datasource.ErrClosed
	}
	start, err := s.startRevision(ctx, from, changed)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	s.log.Debug("etcd watch", "key", s.key, "from_revision", start)
	for resp := range s.cli.Watch(wctx, s.key, clientv3.WithRev(start)) {
		if err := resp.Err(); err != nil {
			if resp.CompactRevision != 0 {
				return fmt.Errorf("etcd: watch %s from revision %d (compacted up to %d): %w", s.key, start, resp.CompactRevision, err)
			}
			return fmt.Errorf("etcd: watch %s: %w", s.key, err)
		}
		for _, ev := range resp.Events {
			var snap datasource.Snapshot
			if ev.Type == clientv3.EventTypeDelete {
				snap = datasource.Snapshot{Missing: true}
			} else {
				snap = datasource.Snapshot{Data: ev.Kv.Value, Revision: revision(ev.Kv.ModRevision)}
			}
			s.log.Debug("etcd watch event", "key", s.key, "type", ev.Type.String(), "revision", ev.Kv.ModRevision)
			changed(snap)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("etcd: watch %s: channel closed", s.key)
}

// startRevision returns the revision to watch from: right after the store
// revision at which the key was last seen as from says. When from was not
// the latest thing this Source saw (a snapshot from elsewhere), it gets the
// key now, reports a difference with from, and watches from there.
func (s *Source) startRevision(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) (int64, error) {
	s.mu.Lock()
	seen := s.seen
	s.mu.Unlock()
	if seen.valid && seen.missing == from.Missing && (from.Missing || seen.rev == from.Revision) {
		return seen.header + 1, nil
	}
	resp, err := s.cli.Get(ctx, s.key)
	if err != nil {
		return 0, fmt.Errorf("etcd: watch %s: get: %w", s.key, err)
	}
	now := datasource.Snapshot{Missing: true}
	if len(resp.Kvs) > 0 {
		now = datasource.Snapshot{Data: resp.Kvs[0].Value, Revision: revision(resp.Kvs[0].ModRevision)}
	}
	if now.Missing != from.Missing || now.Revision != from.Revision {
		changed(now)
	}
	return resp.Header.GetRevision() + 1, nil
}

// observe records what a response said about the key.
func (s *Source) observe(snap datasource.Snapshot, header int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen.valid && header < s.seen.header {
		return // an older response that finished late
	}
	s.seen = observation{valid: true, missing: snap.Missing, rev: snap.Revision, header: header}
}

func revision(rev int64) string { return strconv.FormatInt(rev, 10) }
