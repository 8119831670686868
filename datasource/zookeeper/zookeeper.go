package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/backend"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/internal/logctx"
	"github.com/bulwark-go/bulwark/datasource/internal/overlay"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
)

// defaultSessionCheck is how often Watch looks at the connection's state.
const defaultSessionCheck = 100 * time.Millisecond

// errNoSession is wrapped by the errors of calls made while the connection
// has no ZooKeeper session (disconnected, reconnecting, expired, closed):
// they fail at once instead of waiting in go-zookeeper's queue.
var errNoSession = errors.New("zookeeper: no session")

// Option configures a Source.
type Option func(*Source)

// WithACL sets the ACL of the nodes Write creates: the document's node and
// any missing parent (default zk.WorldACL(zk.PermAll)). A node that exists
// keeps its own ACL. To create a node only its owner can read, pass
// zk.DigestACL(zk.PermAll, user, password) and AddAuth the same digest
// credentials on every connection that reads it.
func WithACL(acl ...zk.ACL) Option {
	return func(s *Source) { s.acl = append([]zk.ACL(nil), acl...) }
}

// withSessionCheck sets how often Watch checks the connection's state
// (default 100 ms): a watch ends, with an error wrapping
// errNoSession, at most this long after the connection lost its session.
func withSessionCheck(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.check = d
		}
	}
}

// WithServers names the ZooKeeper ensemble the connection talks to: pass
// the server list given to zk.Connect. go-zookeeper does not tell a
// connection's servers, and a node path names a document only within one
// ensemble, so the Source's name (String, and so the Readable's default
// name and last-good cache file) includes these servers: two Sources of the
// same path on different ensembles then never share a cache. Each server
// gets the default port 2181 if it has none (zk.FormatServers), and the
// list is sorted. It changes nothing else.
func WithServers(servers ...string) Option {
	return func(s *Source) {
		srvs := zk.FormatServers(servers)
		slices.Sort(srvs)
		s.servers = slices.Compact(srvs)
	}
}

// withCloseWait bounds how long Close waits for ZooKeeper calls still in
// flight (default backend.CloseWait, 5 s). Zero or less waits without
// bound. Tests shorten it.
func withCloseWait(d time.Duration) Option { return func(s *Source) { s.closeWait = d } }

// Source is a rule document in one ZooKeeper node: a datasource.Source, a
// datasource.Watcher and a datasource.Sink over a connection the caller
// owns. See the package documentation. It is safe for concurrent use.
type Source struct {
	conn      *zk.Conn
	path      string
	acl       []zk.ACL
	check     time.Duration
	closeWait time.Duration
	servers   []string          // WithServers, sorted; for String only
	life      backend.Lifecycle // counts the zk calls in flight (each runs in its own goroutine)
	reg       *registry.Registry
	reopen    func(path string) *Source
}

var (
	_ datasource.Source   = (*Source)(nil)
	_ datasource.Watcher  = (*Source)(nil)
	_ datasource.Sink     = (*Source)(nil)
	_ datasource.Registry = (*Source)(nil)
)

// New returns a Source for the node at path, read and written through
// conn. It touches nothing: the node may not exist yet (a missing
// document) and is created, with its parents, by the first Write. conn
// stays the caller's: Close does not close it, and its event channel is
// not read (see the package documentation for how session events are
// learnt).
func New(conn *zk.Conn, path string, opts ...Option) *Source {
	s := &Source{
		conn:      conn,
		path:      path,
		acl:       zk.WorldACL(zk.PermAll),
		check:     defaultSessionCheck,
		closeWait: backend.CloseWait,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	s.reopen = func(p string) *Source { return New(conn, p, opts...) }
	s.reg = registry.New("zookeeper", instanceStore{s})
	return s
}

// Overlay returns the Source of the overlay of group (see
// datasource.WithOverlay): the node beside the document whose name is the
// document's followed by ".overlay." and group
// ("/bulwark/flow.overlay.canary"), through the same connection and
// options.
func (s *Source) Overlay(group string) datasource.Source {
	return s.reopen(overlay.Name(s.path, group))
}

// Overlays returns the canary groups that have an overlay beside the
// document (see Overlay), sorted: the children of the node's parent named
// as an overlay of it. A parent that does not exist holds none.
func (s *Source) Overlays(ctx context.Context) ([]string, error) {
	dir, base := path.Split(s.path)
	if dir != "/" {
		dir = strings.TrimSuffix(dir, "/")
	}
	r, err := call(ctx, s, "list the overlays of", func() (got, error) {
		children, _, err := s.conn.Children(dir)
		return got{children: children}, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return overlay.Groups(base, r.children), nil
}

// String names the document: "zk://" followed by the servers given with
// WithServers (sorted, comma-separated) and the node's path, as in
// "zk://10.0.0.1:2181,10.0.0.2:2181/bulwark/flow". Without WithServers
// the server part is empty ("zk:///bulwark/flow"): go-zookeeper does not
// tell which ensemble a connection talks to (conn.Server is only the
// member it happens to use), and a name must not change from one run to
// the next. It holds no credentials. The Readable names its last-good
// cache after it.
func (s *Source) String() string {
	return "zk://" + strings.Join(s.servers, ",") + s.path
}

// Close marks the Source closed (later calls return datasource.ErrClosed),
// makes a running Watch return datasource.ErrClosed, and waits, up to
// WithCloseWait, for its ZooKeeper calls still in flight; they end when the
// server answers, when go-zookeeper gives up on the connection, or when the
// connection is closed. It closes the registrations made through the
// Source (deleting their nodes) and returns the error of those removals.
// It does not close the connection. Close is idempotent.
func (s *Source) Close() error {
	err := s.reg.Close()
	if !s.life.Close(s.closeWait) {
		return errors.Join(err, fmt.Errorf("zookeeper: close %s: calls still waiting for the server after %v", s.path, s.closeWait))
	}
	return err
}

// Read returns the node's data. A node that does not exist is a missing
// document. The revision is "<czxid>.<version>" of the node's Stat, so a
// node deleted and created again is a new revision even at version 0.
//
// A node larger than the size limit that ctx carries
// (datasource.ReadLimit) is refused with an error wrapping
// datasource.ErrTooLarge before its data is fetched: Read first asks for
// the node's Stat (Exists) and compares its DataLength with the limit,
// then Gets the data and checks its length again (the node may have grown
// in between).
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	if limit.Of(ctx) > 0 {
		r, err := s.exists(ctx)
		switch {
		case err != nil:
			return datasource.Snapshot{}, err
		case !r.exists:
			return datasource.Snapshot{Missing: true}, nil
		}
		if err := limit.Check(ctx, int64(r.stat.DataLength)); err != nil {
			return datasource.Snapshot{}, fmt.Errorf("zookeeper: get %s: %w", s.path, err)
		}
	}
	r, err := call(ctx, s, "get", func() (got, error) {
		data, stat, err := s.conn.Get(s.path)
		return got{data: data, stat: stat}, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return datasource.Snapshot{Missing: true}, nil
	case err != nil:
		return datasource.Snapshot{}, err
	}
	if err := limit.Check(ctx, int64(len(r.data))); err != nil {
		return datasource.Snapshot{}, fmt.Errorf("zookeeper: get %s: %w", s.path, err)
	}
	return datasource.Snapshot{Data: r.data, Revision: revision(r.stat)}, nil
}

// Watch arms a one-shot ZooKeeper watch on the node (ExistsW: it fires on
// creation, data change and deletion), reports the node's state when it
// differs from the last one seen (from, at first), and arms it again after
// every event, until ctx is done or the Source is closed (then it returns
// datasource.ErrClosed). It returns an error, so the Readable reads again
// and watches again, when the connection loses its session (checked every
// 100 ms), when go-zookeeper invalidates the watch
// (EventNotWatching: session expired, connection closed), or when a call
// fails.
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	ctx, stop := s.life.WatchContext(ctx)
	defer stop()
	tick := time.NewTicker(s.check)
	defer tick.Stop()
	last := from
	for {
		events, now, err := s.arm(ctx)
		if err != nil {
			return s.life.WatchEnded(ctx, err)
		}
		if now.Missing != last.Missing || now.Revision != last.Revision {
			last = now
			changed(now) // a change between from and the watch, or since the last event
		}
		if err := s.waitEvent(ctx, tick.C, events); err != nil {
			return s.life.WatchEnded(ctx, err)
		}
		// Created, changed or deleted: tell the reader at once, then arm
		// the watch again (it fired and is gone).
		last = datasource.Snapshot{}
		changed(datasource.Snapshot{})
	}
}

// arm sets a watch on the node and returns its event channel and the
// node's state (its revision, or missing) when the watch was set.
func (s *Source) arm(ctx context.Context) (<-chan zk.Event, datasource.Snapshot, error) {
	r, err := call(ctx, s, "watch", func() (got, error) {
		ok, stat, ch, err := s.conn.ExistsW(s.path)
		return got{exists: ok, stat: stat, events: ch}, err
	})
	if err != nil {
		return nil, datasource.Snapshot{}, err
	}
	now := datasource.Snapshot{Missing: true}
	if r.exists {
		now = datasource.Snapshot{Revision: revision(r.stat)}
	}
	logctx.From(ctx).Debug("zookeeper watch armed", "path", s.path, "revision", now.Revision, "missing", now.Missing)
	return r.events, now, nil
}

// waitEvent waits for the watch set by arm to fire. It returns nil when
// the node changed, and an error when ctx ends, the connection has no
// session at a tick, or go-zookeeper ends the watch.
func (s *Source) waitEvent(ctx context.Context, tick <-chan time.Time, events <-chan zk.Event) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			if st := s.conn.State(); st != zk.StateHasSession {
				logctx.From(ctx).Debug("zookeeper watch: no session", "path", s.path, "state", st.String())
				return fmt.Errorf("zookeeper: watch %s: %w (connection %s)", s.path, errNoSession, st)
			}
		case ev, ok := <-events:
			switch {
			case !ok:
				return fmt.Errorf("zookeeper: watch %s: event channel closed", s.path)
			case ev.Type == zk.EventNotWatching || ev.Err != nil:
				logctx.From(ctx).Debug("zookeeper watch ended by the client", "path", s.path, "event", ev.Type.String(), "err", ev.Err)
				return fmt.Errorf("zookeeper: watch %s: %s: %w", s.path, ev.Type, eventErr(ev))
			}
			logctx.From(ctx).Debug("zookeeper watch fired", "path", s.path, "event", ev.Type.String())
			return nil
		}
	}
}

// Write stores data in the node if its revision is expectRevision, else
// returns an error wrapping datasource.ErrConflict. With expectRevision ""
// it creates the node (and its missing parents, with WithACL's ACL), and
// an existing node is a conflict. Otherwise the node must exist with the
// same creation (czxid) and it is set with compare-and-set on its version
// (zk.ErrBadVersion is a conflict). It returns the snapshot a Read would
// now return.
func (s *Source) Write(ctx context.Context, data []byte, expectRevision string) (datasource.Snapshot, error) {
	if expectRevision == "" {
		return s.create(ctx, data)
	}
	czxid, version, ok := parseRevision(expectRevision)
	if !ok {
		return datasource.Snapshot{}, fmt.Errorf("zookeeper: set %s: revision %q is not one of this node's: %w", s.path, expectRevision, datasource.ErrConflict)
	}
	cur, err := s.exists(ctx)
	switch {
	case err != nil:
		return datasource.Snapshot{}, err
	case !cur.exists:
		return datasource.Snapshot{}, fmt.Errorf("zookeeper: set %s: node does not exist, expected revision %s: %w", s.path, expectRevision, datasource.ErrConflict)
	case cur.stat.Czxid != czxid || cur.stat.Version != version:
		return datasource.Snapshot{}, fmt.Errorf("zookeeper: set %s: node is at revision %s, expected %s: %w", s.path, revision(cur.stat), expectRevision, datasource.ErrConflict)
	}
	// Between the check and the set, only a delete and a re-creation that
	// reaches the same version could slip through: the set compares the
	// version, not the creation.
	r, err := call(ctx, s, "set", func() (got, error) {
		stat, err := s.conn.Set(s.path, data, version)
		return got{stat: stat}, err
	})
	switch {
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		return datasource.Snapshot{}, fmt.Errorf("%w: %w", err, datasource.ErrConflict)
	case err != nil:
		return datasource.Snapshot{}, err
	}
	return datasource.Snapshot{Data: append([]byte(nil), data...), Revision: revision(r.stat)}, nil
}

// Delete removes the node if its revision is expectRevision, else
// returns an error wrapping datasource.ErrConflict and removes nothing.
// The node must have the same creation (czxid) and it is deleted with
// compare-and-set on its version (zk.ErrBadVersion is a conflict), as
// Write sets it. With expectRevision "" whatever version it has is
// deleted. A node that does not exist is not an error: deleting is
// idempotent. A node with children cannot be deleted (zk.ErrNotEmpty);
// its parents are left in place. Delete is not part of the datasource
// contract; tools use it (removing a canary overlay).
func (s *Source) Delete(ctx context.Context, expectRevision string) error {
	version, remove, err := s.deletable(ctx, expectRevision)
	if !remove || err != nil {
		return err
	}
	// As in Write, only a delete and a re-creation that reaches the same
	// version could slip in between: the delete compares the version.
	_, err = call(ctx, s, "delete", func() (got, error) { return got{}, s.conn.Delete(s.path, version) })
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil // deleted by someone else meanwhile
	case errors.Is(err, zk.ErrBadVersion):
		return fmt.Errorf("%w: %w", err, datasource.ErrConflict)
	}
	return err
}

// deletable returns the version a Delete that expects expectRevision
// deletes (-1, any, for ""), or false when the node is gone already.
func (s *Source) deletable(ctx context.Context, expectRevision string) (version int32, remove bool, err error) {
	if expectRevision == "" {
		return -1, true, nil
	}
	cur, err := s.exists(ctx)
	if err != nil {
		return 0, false, err
	}
	found := datasource.Snapshot{Missing: !cur.exists}
	if cur.exists {
		found.Revision = revision(cur.stat)
	}
	remove, err = backend.MayDelete(found, expectRevision)
	if err != nil {
		return 0, false, fmt.Errorf("zookeeper: delete %s: %w", s.path, err)
	}
	if !remove {
		return 0, false, nil
	}
	return cur.stat.Version, true, nil
}

// exists asks for the node's Stat.
func (s *Source) exists(ctx context.Context) (got, error) {
	return call(ctx, s, "exists", func() (got, error) {
		ok, stat, err := s.conn.Exists(s.path)
		return got{exists: ok, stat: stat}, err
	})
}

// create creates the node with data, and its missing parents empty, and
// returns what it wrote with the revision of that write.
//
// go-zookeeper has no create2 (the create that returns the new node's
// Stat), and a Stat read after a Create may already be another writer's.
// So the node is created by one transaction (Multi) of two operations,
// applied together or not at all: create the node empty, then set its data
// at version 0. The set's Stat (the new node's czxid, version 1) is the
// revision of exactly this document; nobody can see the node in between.
func (s *Source) create(ctx context.Context, data []byte) (datasource.Snapshot, error) {
	mk := func() (got, error) {
		return call(ctx, s, "create", func() (got, error) {
			res, err := s.conn.Multi(
				&zk.CreateRequest{Path: s.path, Data: []byte{}, Acl: s.acl, Flags: 0},
				&zk.SetDataRequest{Path: s.path, Data: data, Version: 0},
			)
			if err != nil {
				return got{}, err
			}
			if len(res) != 2 || res[1].Stat == nil {
				return got{}, fmt.Errorf("unexpected answer to create and set: %d results", len(res))
			}
			return got{stat: res[1].Stat}, nil
		})
	}
	r, err := mk()
	if errors.Is(err, zk.ErrNoNode) {
		if err = s.createParents(ctx); err == nil {
			r, err = mk()
		}
	}
	switch {
	case errors.Is(err, zk.ErrNodeExists):
		return datasource.Snapshot{}, fmt.Errorf("%w: %w", err, datasource.ErrConflict)
	case err != nil:
		return datasource.Snapshot{}, err
	}
	return datasource.Snapshot{Data: append([]byte(nil), data...), Revision: revision(r.stat)}, nil
}

func (s *Source) createParents(ctx context.Context) error {
	for i := 1; i < len(s.path); i++ {
		if s.path[i] != '/' {
			continue
		}
		parent := s.path[:i]
		_, err := call(ctx, s, "create parent", func() (got, error) {
			_, err := s.conn.Create(parent, nil, 0, s.acl)
			return got{}, err
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// got carries the results of one zk call.
type got struct {
	data     []byte
	children []string
	stat     *zk.Stat
	exists   bool
	events   <-chan zk.Event
}

// call runs f, one go-zookeeper call, so that ctx bounds the wait:
// go-zookeeper's calls take no context and queue while disconnected. It
// fails at once when the connection has no session. The goroutine is
// counted, and Close waits for it. Errors are "zookeeper: <op> <path>: ...".
func call(ctx context.Context, s *Source, op string, f func() (got, error)) (got, error) {
	fail := func(err error) (got, error) {
		return got{}, fmt.Errorf("zookeeper: %s %s: %w", op, s.path, err)
	}
	if s.life.Closed() {
		return got{}, datasource.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if st := s.conn.State(); st != zk.StateHasSession {
		return fail(fmt.Errorf("%w (connection %s)", errNoSession, st))
	}
	g, err := backend.Call(ctx, &s.life, f)
	switch {
	case err == nil:
		return g, nil
	case errors.Is(err, datasource.ErrClosed):
		return got{}, err
	case errors.Is(err, zk.ErrNoAuth):
		return fail(fmt.Errorf("%w (does the connection AddAuth the node's ACL credentials?)", err))
	}
	return fail(err)
}

func eventErr(ev zk.Event) error {
	if ev.Err != nil {
		return ev.Err
	}
	return errors.New("watch invalidated")
}

// revision is "<czxid>.<version>": the version alone would repeat when a
// node is deleted and created again.
func revision(st *zk.Stat) string {
	return strconv.FormatInt(st.Czxid, 10) + "." + strconv.FormatInt(int64(st.Version), 10)
}

func parseRevision(rev string) (czxid int64, version int32, ok bool) {
	c, v, found := strings.Cut(rev, ".")
	if !found {
		return 0, 0, false
	}
	cz, err1 := strconv.ParseInt(c, 10, 64)
	ver, err2 := strconv.ParseInt(v, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return cz, int32(ver), true
}
