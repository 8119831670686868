package etcd

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/backend"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/internal/logctx"
	"github.com/bulwark-go/bulwark/datasource/internal/overlay"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
)

// Option configures a Source.
type Option func(*Source)

// WithNamespace puts the key under prefix, as etcd's namespace package
// does: the Source reads, watches and writes prefix+key through
// namespace.NewKV and namespace.NewWatcher over the client, and its name
// (String) holds prefix+key. Use it instead of wrapping the client's KV and
// Watcher yourself: a prefix set on the client cannot be seen by the
// Source (clientv3 does not expose it), so its name, and the Readable's
// last-good cache, would leave it out. Do not use both: the prefixes would
// add up.
func WithNamespace(prefix string) Option { return func(s *Source) { s.prefix = prefix } }

// Source is a rule document stored as the value of one etcd key: a
// datasource.Source, a datasource.Watcher and a datasource.Sink. Its
// revision is the key's mod revision, in decimal. It is safe for
// concurrent use.
type Source struct {
	kv        clientv3.KV      // the client's, under WithNamespace's prefix
	watcher   clientv3.Watcher // likewise
	key       string
	prefix    string // WithNamespace
	endpoints string // the client's endpoints at New, sorted, for String
	life      backend.Lifecycle
	reg       *registry.Registry
	reopen    func(key string) *Source // New with the same client and options

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
	_ datasource.Source   = (*Source)(nil)
	_ datasource.Watcher  = (*Source)(nil)
	_ datasource.Sink     = (*Source)(nil)
	_ datasource.Registry = (*Source)(nil)
)

// New returns a Source for key, read, watched and written through client.
// It touches nothing: the key may not exist yet (a missing document). The
// client stays the caller's: TLS, authentication, a namespace
// (namespace.NewKV) and endpoints are configured there, and Close does not
// close it.
func New(client *clientv3.Client, key string, opts ...Option) *Source {
	s := &Source{key: key}
	s.reopen = func(k string) *Source { return New(client, k, opts...) }
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	if client != nil {
		s.kv, s.watcher = client.KV, client.Watcher
		if s.prefix != "" {
			s.kv = namespace.NewKV(client.KV, s.prefix)
			s.watcher = namespace.NewWatcher(client.Watcher, s.prefix)
		}
		s.endpoints = hosts(client.Endpoints())
	}
	st := &instanceStore{kv: s.kv, prefix: registry.Prefix(s.key), leases: map[string]clientv3.LeaseID{}}
	if client != nil {
		st.lessor = client.Lease
	}
	s.reg = registry.New("etcd", st)
	return s
}

// String names the document: "etcd://", the client's endpoints when New
// was called (without their scheme, sorted, comma-separated), "/" and the
// key as the server stores it (WithNamespace's prefix, then the key), as in
// "etcd://10.0.0.1:2379,10.0.0.2:2379//bulwark/flow" for the key
// "/bulwark/flow". It holds no credentials. The Readable names its
// last-good cache after it.
func (s *Source) String() string { return "etcd://" + s.endpoints + "/" + s.name() }

// Overlay returns the Source of the overlay of group (see
// datasource.WithOverlay): the key followed by ".overlay." and group
// ("/bulwark/flow.overlay.canary"), through the same client and options.
func (s *Source) Overlay(group string) datasource.Source {
	return s.reopen(overlay.Name(s.key, group))
}

// Overlays returns the canary groups that have an overlay beside the
// document (see Overlay), sorted: one range read, keys only, of the keys
// that begin with the key followed by ".overlay.".
func (s *Source) Overlays(ctx context.Context) ([]string, error) {
	if s.life.Closed() {
		return nil, datasource.ErrClosed
	}
	resp, err := s.kv.Get(ctx, overlay.Prefix(s.key), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, fmt.Errorf("etcd: list the overlays of %s: %w", s.name(), err)
	}
	keys := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return overlay.Groups(s.key, keys), nil
}

// name is the key as the server stores it: WithNamespace's prefix, then
// the key. Errors and logs name it.
func (s *Source) name() string { return s.prefix + s.key }

// hosts is the endpoints without their scheme, sorted and comma-separated.
func hosts(endpoints []string) string {
	hs := make([]string, 0, len(endpoints))
	for _, ep := range endpoints {
		if _, rest, ok := strings.Cut(ep, "://"); ok {
			ep = rest
		}
		hs = append(hs, ep)
	}
	slices.Sort(hs)
	return strings.Join(slices.Compact(hs), ",")
}

// Close marks the Source closed: later calls return datasource.ErrClosed,
// and a running Watch returns datasource.ErrClosed. It closes the
// registrations made through the Source (revoking their leases) and
// returns the error of those removals. The client is not closed. Close is
// idempotent.
func (s *Source) Close() error {
	err := s.reg.Close()
	s.life.Close(0) // nothing else runs in the background: every call is the caller's
	return err
}

// Read gets the key (a linearizable read, unless the client says
// otherwise). An absent key is a missing document; the revision of a
// present one is its mod revision. A value larger than the size limit of
// ctx (datasource.ReadLimit) is refused with an error wrapping
// datasource.ErrTooLarge; etcd cannot tell a value's size without sending
// it, so the client has received it by then (see the package
// documentation for what bounds that).
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	if s.life.Closed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	resp, err := s.kv.Get(ctx, s.key)
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("etcd: get %s: %w", s.name(), err)
	}
	var snap datasource.Snapshot
	if len(resp.Kvs) == 0 {
		snap = datasource.Snapshot{Missing: true}
	} else {
		kv := resp.Kvs[0]
		if err := limit.Check(ctx, int64(len(kv.Value))); err != nil {
			return datasource.Snapshot{}, fmt.Errorf("etcd: get %s: %w", s.name(), err)
		}
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
	if s.life.Closed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	var cmp clientv3.Cmp
	if expectRevision == "" {
		cmp = clientv3.Compare(clientv3.CreateRevision(s.key), "=", 0)
	} else {
		want, err := strconv.ParseInt(expectRevision, 10, 64)
		if err != nil || want <= 0 {
			return datasource.Snapshot{}, fmt.Errorf("etcd: put %s: expected revision %q is not an etcd mod revision: %w",
				s.name(), expectRevision, datasource.ErrConflict)
		}
		cmp = clientv3.Compare(clientv3.ModRevision(s.key), "=", want)
	}
	resp, err := s.kv.Txn(ctx).
		If(cmp).
		Then(clientv3.OpPut(s.key, string(data))).
		Else(clientv3.OpGet(s.key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("etcd: put %s: %w", s.name(), err)
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
		return datasource.Snapshot{}, fmt.Errorf("etcd: put %s: key is %s, expected %s: %w", s.name(), found, want, datasource.ErrConflict)
	}
	// The put is the transaction's only write: the key's new mod revision
	// is the store revision of the response.
	header := resp.Header.GetRevision()
	snap := datasource.Snapshot{Data: bytes.Clone(data), Revision: revision(header)}
	s.observe(snap, header)
	return snap, nil
}

// Delete removes the key in one transaction that compares its mod
// revision with expectRevision ("": no comparison, whatever it holds is
// removed). When the comparison fails nothing is removed and the error
// wraps datasource.ErrConflict (and names the revision found). An absent
// key is not an error: deleting is idempotent. Delete is not part of the
// datasource contract; tools use it (removing a canary overlay).
func (s *Source) Delete(ctx context.Context, expectRevision string) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	var cmps []clientv3.Cmp // none for "": the delete always applies
	if expectRevision != "" {
		want, err := strconv.ParseInt(expectRevision, 10, 64)
		if err != nil || want <= 0 {
			return fmt.Errorf("etcd: delete %s: expected revision %q is not an etcd mod revision: %w",
				s.name(), expectRevision, datasource.ErrConflict)
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.key), "=", want))
	}
	resp, err := s.kv.Txn(ctx).
		If(cmps...).
		Then(clientv3.OpDelete(s.key)).
		Else(clientv3.OpGet(s.key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return fmt.Errorf("etcd: delete %s: %w", s.name(), err)
	}
	// What the key is after the transaction: deleted, absent already, or
	// at the revision that failed the comparison.
	found := datasource.Snapshot{Missing: true}
	if rr := resp.Responses[0].GetResponseRange(); !resp.Succeeded && rr != nil && len(rr.Kvs) > 0 {
		found = datasource.Snapshot{Revision: revision(rr.Kvs[0].ModRevision)}
	}
	s.observe(found, resp.Header.GetRevision())
	if _, err := backend.MayDelete(found, expectRevision); err != nil {
		return fmt.Errorf("etcd: delete %s: %w", s.name(), err)
	}
	return nil
}

// Watch watches the key from the store revision right after the read
// that returned from, so a change made between that read and the watch is
// delivered too; each put or delete calls changed. The watch context
// requires a leader (clientv3.WithRequireLeader), so a member cut off from
// its cluster ends the watch instead of going silent.
//
// Watch returns datasource.ErrClosed when the Source is closed, and, for
// the Readable to read again and watch again, when the revision to start
// from was compacted (the error wraps rpctypes.ErrCompacted), when the
// server cancels the watch (no leader, permission denied) and when the
// watch channel closes. While the server is unreachable the client keeps
// the watch and resumes it by itself, from the next revision, when the
// server answers again.
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	ctx, stop := s.life.WatchContext(ctx)
	defer stop()
	start, err := s.startRevision(ctx, from, changed)
	if err != nil {
		return s.life.WatchEnded(ctx, err)
	}
	logctx.From(ctx).Debug("etcd watch", "key", s.name(), "from_revision", start)
	for resp := range s.watcher.Watch(clientv3.WithRequireLeader(ctx), s.key, clientv3.WithRev(start)) {
		if err := resp.Err(); err != nil {
			if resp.CompactRevision != 0 {
				err = fmt.Errorf("etcd: watch %s from revision %d (compacted up to %d): %w", s.name(), start, resp.CompactRevision, err)
			} else {
				err = fmt.Errorf("etcd: watch %s: %w", s.name(), err)
			}
			logctx.From(ctx).Debug("etcd watch broke", "key", s.name(), "err", err)
			return s.life.WatchEnded(ctx, err)
		}
		for _, ev := range resp.Events {
			var snap datasource.Snapshot
			if ev.Type == clientv3.EventTypeDelete {
				snap = datasource.Snapshot{Missing: true}
			} else {
				snap = datasource.Snapshot{Data: ev.Kv.Value, Revision: revision(ev.Kv.ModRevision)}
			}
			logctx.From(ctx).Debug("etcd watch event", "key", s.name(), "type", ev.Type.String(), "revision", ev.Kv.ModRevision)
			changed(snap)
		}
	}
	return s.life.WatchEnded(ctx, fmt.Errorf("etcd: watch %s: channel closed", s.name()))
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
	// The revision is all it needs: the value is left on the server.
	resp, err := s.kv.Get(ctx, s.key, clientv3.WithKeysOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd: watch %s: get: %w", s.name(), err)
	}
	now := datasource.Snapshot{Missing: true}
	if len(resp.Kvs) > 0 {
		now = datasource.Snapshot{Revision: revision(resp.Kvs[0].ModRevision)}
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
