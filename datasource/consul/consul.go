package consul

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/backend"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/internal/logctx"
	"github.com/bulwark-go/bulwark/datasource/internal/overlay"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
)

// Option configures a Source. (None is public yet: the client's
// api.Config holds what a user sets.)
type Option func(*Source)

// waitTime is how long one blocking query of Watch waits for a change
// before the server answers with the same index (Consul caps it at 10
// minutes, 5 by default).
const waitTime = 30 * time.Second

// withWaitTime sets how long each blocking query of Watch may wait for a
// change (default waitTime). Each query is also bounded on the client by
// this time plus the server's jitter (a sixteenth) plus 10 s, so a server
// that stops answering (a frozen process, a dropped connection) ends the
// Watch with an error instead of holding it forever. Tests shorten it.
func withWaitTime(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.wait = d
		}
	}
}

// Source is a rule document stored as the value of one Consul KV key: a
// datasource.Source, a datasource.Watcher, a datasource.Sink and a
// datasource.Registry. Its revision is the key's ModifyIndex, in decimal.
// It is safe for concurrent use.
type Source struct {
	kv     *api.KV
	txn    *api.Txn
	key    string
	name   string        // String
	wait   time.Duration // of one blocking query
	life   backend.Lifecycle
	reg    *registry.Registry
	reopen func(key string) *Source // New with the same client and options

	mu   sync.Mutex
	seen observation // the latest read or write
}

// observation is what the key was at one index: Watch blocks from there,
// so a change made between that read and the watch is delivered too.
type observation struct {
	valid   bool
	missing bool
	rev     string // ModifyIndex, "" when missing
	index   uint64 // the response's X-Consul-Index
}

var (
	_ datasource.Source   = (*Source)(nil)
	_ datasource.Watcher  = (*Source)(nil)
	_ datasource.Sink     = (*Source)(nil)
	_ datasource.Registry = (*Source)(nil)
)

// New returns a Source for key, read, watched and written through client.
// It touches nothing: the key may not exist yet (a missing document). The
// client stays the caller's: address, ACL token, TLS, datacenter and
// namespace are configured there (api.Config).
func New(client *api.Client, key string, opts ...Option) *Source {
	s := &Source{key: key, wait: waitTime}
	s.reopen = func(k string) *Source { return New(client, k, opts...) }
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	st := &instanceStore{prefix: registry.Prefix(key), sessions: map[string]string{}}
	if client != nil {
		s.kv, s.txn = client.KV(), client.Txn()
		st.kv, st.session = client.KV(), client.Session()
	}
	s.name = "consul://" + describe(client) + key
	s.reg = registry.New("consul", st)
	return s
}

// describe returns "ADDR/DC/" for the client's configuration, with the
// namespace, when set, before the datacenter ("ADDR/NS@DC/"). api.Client keeps its api.Config unexported and
// offers no accessor, so it is read by reflection, without credentials.
func describe(client *api.Client) string {
	var addr, dc, ns string
	if client != nil {
		if cfg := reflect.ValueOf(client).Elem().FieldByName("config"); cfg.IsValid() && cfg.Kind() == reflect.Struct {
			str := func(name string) string {
				if f := cfg.FieldByName(name); f.IsValid() && f.Kind() == reflect.String {
					return f.String()
				}
				return ""
			}
			addr, dc, ns = str("Address"), str("Datacenter"), str("Namespace")
		}
	}
	if ns != "" {
		dc = ns + "@" + dc
	}
	return addr + "/" + dc + "/"
}

// String names the document: "consul://", the client's address, "/", its
// datacenter ("" for the agent's own), "/" and the key, as in
// "consul://127.0.0.1:8500/dc1/bulwark/flow"; a namespace set on the
// client comes before the datacenter ("consul://10.0.0.1:8500/team@dc1/bulwark/flow").
// It holds no credentials. The Readable names its last-good cache after it.
func (s *Source) String() string { return s.name }

// Overlay returns the Source of the overlay of group (see
// datasource.WithOverlay): the key followed by ".overlay." and group
// ("bulwark/flow.overlay.canary"), through the same client and options.
func (s *Source) Overlay(group string) datasource.Source {
	return s.reopen(overlay.Name(s.key, group))
}

// Overlays returns the canary groups that have an overlay beside the
// document (see Overlay), sorted: one listing of the keys that begin with
// the key followed by ".overlay." (values are not fetched).
func (s *Source) Overlays(ctx context.Context) ([]string, error) {
	if s.life.Closed() {
		return nil, datasource.ErrClosed
	}
	keys, _, err := s.kv.Keys(overlay.Prefix(s.key), "", query(ctx))
	if err != nil {
		return nil, fmt.Errorf("consul: list the overlays of %s: %w", s.key, explain(err))
	}
	return overlay.Groups(s.key, keys), nil
}

// Close marks the Source closed: later calls return datasource.ErrClosed,
// and a running Watch returns datasource.ErrClosed. It closes the
// registrations made through the Source (destroying their sessions) and
// returns the error of those removals. The client is not closed. Close is
// idempotent.
func (s *Source) Close() error {
	err := s.reg.Close()
	s.life.Close(0) // nothing else runs in the background: every call is the caller's
	return err
}

func query(ctx context.Context) *api.QueryOptions { return (&api.QueryOptions{}).WithContext(ctx) }

// explain adds what a 403 means to the client's error.
func explain(err error) error {
	var se api.StatusError
	if errors.As(err, &se) && se.Code == http.StatusForbidden {
		return fmt.Errorf("permission denied: the client's ACL token lacks the key's policy: %w", err)
	}
	return err
}

// Read gets the key. An absent key is a missing document; the revision of
// a present one is its ModifyIndex. A value larger than the size limit of
// ctx (datasource.ReadLimit) is refused with an error wrapping
// datasource.ErrTooLarge (Consul sends a value whole; the server stores
// none larger than its kv_max_value_size, 512 KiB by default).
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	if s.life.Closed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	snap, index, err := s.get(ctx, query(ctx))
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("consul: get %s: %w", s.key, err)
	}
	s.observe(snap, index)
	return snap, nil
}

// get reads the key with q and returns it with the response's index.
func (s *Source) get(ctx context.Context, q *api.QueryOptions) (datasource.Snapshot, uint64, error) {
	pair, meta, err := s.kv.Get(s.key, q)
	if err != nil {
		return datasource.Snapshot{}, 0, explain(err)
	}
	if pair == nil {
		return datasource.Snapshot{Missing: true}, meta.LastIndex, nil
	}
	if err := limit.Check(ctx, int64(len(pair.Value))); err != nil {
		return datasource.Snapshot{}, 0, err
	}
	return datasource.Snapshot{Data: pair.Value, Revision: revision(pair.ModifyIndex)}, meta.LastIndex, nil
}

// parseRevision is expectRevision as a ModifyIndex.
func parseRevision(op, key, expectRevision string) (uint64, error) {
	want, err := strconv.ParseUint(expectRevision, 10, 64)
	if err != nil || want == 0 {
		return 0, fmt.Errorf("consul: %s %s: expected revision %q is not a Consul ModifyIndex: %w",
			op, key, expectRevision, datasource.ErrConflict)
	}
	return want, nil
}

// Write stores data as the key's value with a check-and-set on the key's
// ModifyIndex (a transaction of one "cas" operation: index 0, for
// expectRevision "", creates the key only if it is absent), and returns
// the new snapshot. When the check fails nothing is stored and the error
// wraps datasource.ErrConflict (and names the revision found).
func (s *Source) Write(ctx context.Context, data []byte, expectRevision string) (datasource.Snapshot, error) {
	if s.life.Closed() {
		return datasource.Snapshot{}, datasource.ErrClosed
	}
	var want uint64
	if expectRevision != "" {
		var err error
		if want, err = parseRevision("put", s.key, expectRevision); err != nil {
			return datasource.Snapshot{}, err
		}
	}
	ops := api.TxnOps{{KV: &api.KVTxnOp{Verb: api.KVCAS, Key: s.key, Value: data, Index: want}}}
	ok, resp, _, err := s.txn.Txn(ops, query(ctx))
	if err != nil {
		return datasource.Snapshot{}, fmt.Errorf("consul: put %s: %w", s.key, explain(err))
	}
	if !ok {
		var msgs []string
		stale := false
		for _, e := range resp.Errors {
			msgs = append(msgs, e.What)
			stale = stale || strings.Contains(e.What, "index is stale")
		}
		if !stale {
			return datasource.Snapshot{}, fmt.Errorf("consul: put %s: %s", s.key, strings.Join(msgs, "; "))
		}
		found := "absent"
		if cur, _, err := s.get(ctx, query(ctx)); err == nil && !cur.Missing {
			found = "at revision " + cur.Revision
		}
		wanted := "absent"
		if expectRevision != "" {
			wanted = "at revision " + expectRevision
		}
		return datasource.Snapshot{}, fmt.Errorf("consul: put %s: key is %s, expected %s: %w", s.key, found, wanted, datasource.ErrConflict)
	}
	if len(resp.Results) == 0 || resp.Results[0].KV == nil {
		return datasource.Snapshot{}, fmt.Errorf("consul: put %s: the transaction returned no result", s.key)
	}
	index := resp.Results[0].KV.ModifyIndex
	snap := datasource.Snapshot{Data: bytes.Clone(data), Revision: revision(index)}
	s.observe(snap, index)
	return snap, nil
}

// Delete removes the key with a check-and-set on its ModifyIndex
// (expectRevision "": no check, whatever it holds is removed). When the
// check fails nothing is removed and the error wraps
// datasource.ErrConflict (and names the revision found). An absent key is
// not an error: deleting is idempotent. Delete is not part of the
// datasource contract; tools use it (removing a canary overlay).
func (s *Source) Delete(ctx context.Context, expectRevision string) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	s.forget()
	wo := (&api.WriteOptions{}).WithContext(ctx)
	if expectRevision == "" {
		if _, err := s.kv.Delete(s.key, wo); err != nil {
			return fmt.Errorf("consul: delete %s: %w", s.key, explain(err))
		}
		return nil
	}
	want, err := parseRevision("delete", s.key, expectRevision)
	if err != nil {
		return err
	}
	ok, _, err := s.kv.DeleteCAS(&api.KVPair{Key: s.key, ModifyIndex: want}, wo)
	if err != nil {
		return fmt.Errorf("consul: delete %s: %w", s.key, explain(err))
	}
	if ok { // deleted, or absent already
		return nil
	}
	cur, _, err := s.get(ctx, query(ctx))
	if err != nil {
		return fmt.Errorf("consul: delete %s: key is not at revision %s: %w", s.key, expectRevision, datasource.ErrConflict)
	}
	if _, err := backend.MayDelete(cur, expectRevision); err != nil {
		return fmt.Errorf("consul: delete %s: %w", s.key, err)
	}
	return nil
}

// Watch watches the key with blocking queries, each waiting at most 30 s
// for the index to move past the last one seen. While the key exists it
// blocks on the key itself (a get: its answer carries the value and the
// ModifyIndex). While it is missing it blocks on the keys that begin with
// it (a keys-only listing, whose index counts deletions), then gets the
// key: Consul's get of a missing key keeps blocking when the key is missing
// again by the time the server looks, so a key created and deleted at once
// would go unseen although a read may have caught it in between. It
// starts from the index of the read that returned from (or, for a
// snapshot from elsewhere, answers at once), so a change made between that
// read and the watch is delivered too.
//
// Every answer whose index differs from the one asked for calls changed
// with what the key is now: the Readable drops a hint that names the
// document it read last, and reads again for any other. Consul documents
// that an index can go backwards (a server restored or restarted empty, as
// a dev agent is): such an answer is a fresh read like any other, and the
// next query blocks from its index. An index of 0 is taken as 1.
//
// Watch returns datasource.ErrClosed when the Source is closed, and, for
// the Readable to read again and watch again, on any error of a query
// (the server unreachable, a query not answered in time: each is bounded
// on the client by its wait plus a sixteenth plus 10 s, a permission
// denied, a value over the size limit).
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	ctx, stop := s.life.WatchContext(ctx)
	defer stop()
	missing := from.Missing
	index := s.startIndex(from)
	log := logctx.From(ctx)
	log.Debug("consul watch", "key", s.key, "from_index", index)
	for {
		snap, got, err := s.block(ctx, index, missing)
		if err != nil {
			err = fmt.Errorf("consul: watch %s from index %d: %w", s.key, index, err)
			log.Debug("consul watch broke", "key", s.key, "err", err)
			return s.life.WatchEnded(ctx, err)
		}
		if got == index {
			continue // the wait ended without a change
		}
		if got < index {
			log.Debug("consul watch: index went backwards, read again", "key", s.key, "index", got, "was", index)
		}
		log.Debug("consul watch event", "key", s.key, "missing", snap.Missing, "revision", snap.Revision, "index", got)
		changed(snap)
		missing, index = snap.Missing, max(got, 1)
	}
}

// block runs one blocking query from index (on the key, or on the keys
// that begin with it while it is missing) and returns what the key is
// once the index moved, with the index to wait from next; the index
// returned equals index when nothing changed.
func (s *Source) block(ctx context.Context, index uint64, missing bool) (datasource.Snapshot, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.wait+s.wait/16+10*time.Second)
	defer cancel()
	q := (&api.QueryOptions{WaitIndex: index, WaitTime: s.wait}).WithContext(ctx)
	if !missing {
		return s.get(ctx, q)
	}
	_, meta, err := s.kv.Keys(s.key, "", q)
	if err != nil {
		return datasource.Snapshot{}, 0, explain(err)
	}
	if meta.LastIndex == index {
		return datasource.Snapshot{}, index, nil
	}
	return s.get(ctx, query(ctx))
}

// startIndex returns the index to block from: that of the response in
// which the key was last seen as from says, or 0 (answer at once) when
// from was not the latest thing this Source saw.
func (s *Source) startIndex(from datasource.Snapshot) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen.valid && s.seen.missing == from.Missing && (from.Missing || s.seen.rev == from.Revision) {
		return s.seen.index
	}
	return 0
}

// observe records what a response said about the key.
func (s *Source) observe(snap datasource.Snapshot, index uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = observation{valid: true, missing: snap.Missing, rev: snap.Revision, index: index}
}

// forget drops the observation: after a delete, Watch starts with a read.
func (s *Source) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = observation{}
}

func revision(index uint64) string { return strconv.FormatUint(index, 10) }
