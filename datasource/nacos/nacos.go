package nacos

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/common/nacos_error"
	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/backend"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/internal/logctx"
	"github.com/bulwark-go/bulwark/datasource/internal/overlay"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
	"github.com/bulwark-go/bulwark/internal/listeners"
)

// ReconcileInterval is the reconcile interval recommended for a Readable over
// a Nacos Source (datasource.WithReconcileInterval): the SDK arms listeners on
// a 5 s tick and can lose a subscription across a reconnect, so the
// framework's default of 30 s would leave a missed change unseen for long.
const ReconcileInterval = 10 * time.Second

// configType is the config type sent with every publish, which the Nacos
// console uses to show the content: rule documents are JSON (Sentinel's
// dashboard and Spring Cloud Alibaba send the same).
const configType = "json"

// armDelay is how long after ListenConfig a Watch reads the config once to
// compare with the snapshot it started from: by then the SDK's listen loop
// (one pass every 5 s) has registered the listener with the server.
const armDelay = 6 * time.Second

// emptyMd5 is the md5 of "". No stored config has it (the SDK refuses to
// publish empty content), so a publish with it as CasMd5 fails on any config
// that exists and creates one that does not.
var emptyMd5 = md5Hex("")

// Source is a rule document stored as one Nacos config (a dataId in a group,
// in the namespace of the client): a datasource.Source, a datasource.Watcher
// and a datasource.Sink. Its revision is the md5 of the content in hex, the
// value Nacos itself compares for CasMd5. It is safe for concurrent use.
type Source struct {
	cli    config_client.IConfigClient
	dataID string
	group  string
	ident  string // String: servers and namespace of the client, group, dataId

	life    backend.Lifecycle // counts the SDK calls of Read and Write (which may give up on one early)
	present atomic.Bool       // the last read found the config
	reopen  func(dataID string) *Source
	reg     *registry.Registry
	regCfg  *Source // the config of the registry's records
}

var (
	_ datasource.Source   = (*Source)(nil)
	_ datasource.Watcher  = (*Source)(nil)
	_ datasource.Sink     = (*Source)(nil)
	_ datasource.Registry = (*Source)(nil)
)

// New returns a Source for the config dataID in group, read, watched and
// written through client. It touches nothing: the config may not exist yet
// (a missing document). The client stays the caller's: server addresses,
// namespace, authentication, TLS, timeouts and the SDK's cache directory are
// configured there, and Close does not close it.
//
// The SDK keeps one listener per config and client: do not ListenConfig the
// same dataID and group on client yourself while a Readable watches it.
// Several Sources on one client and config are fine (they share one
// listener).
func New(client config_client.IConfigClient, dataID, group string) *Source {
	s := &Source{cli: client, dataID: dataID, group: group}
	g := group
	if g == "" {
		g = constant.DEFAULT_GROUP // as the SDK does
	}
	servers, ns := describe(client)
	s.ident = "nacos://" + servers + "/" + ns + "/" + g + "/" + dataID
	s.reopen = func(id string) *Source { return New(client, id, group) }
	return s.withRegistry()
}

// withRegistry gives s its instance registry, over the config beside it.
func (s *Source) withRegistry() *Source {
	s.regCfg = &Source{cli: s.cli, dataID: s.dataID + instancesSuffix, group: s.group}
	s.regCfg.ident = s.ident + instancesSuffix
	s.reg = registry.New("nacos", &instanceStore{cfg: s.regCfg})
	return s
}

// Overlay returns the Source of the overlay of group (see
// datasource.WithOverlay): the config in the same group and namespace
// whose dataId is the document's followed by ".overlay." and group
// ("order-service-flow-rules.overlay.canary"), through the same client
// and options.
func (s *Source) Overlay(group string) datasource.Source {
	return s.reopen(overlay.Name(s.dataID, group))
}

// searchPage is how many configs one page of Overlays' search asks for.
const searchPage = 100

// Overlays returns the canary groups that have an overlay beside the
// document (see Overlay), sorted: the configs of the document's group and
// namespace that the SDK's SearchConfig finds by a blur search for the
// dataId followed by ".overlay.*", page by page. The search is Nacos'
// config list API over HTTP (/v1/cs/configs?search=blur, else Nacos 3's
// /v3/admin/cs/config/list), not its gRPC protocol; the client needs the
// right to list configs. A server that answers neither with a list (404:
// PolarisMesh's Nacos API has no search) makes Overlays return an error
// wrapping errors.ErrUnsupported. Like Read, it returns when ctx ends.
func (s *Source) Overlays(ctx context.Context) ([]string, error) {
	group := s.group
	if group == "" {
		group = constant.DEFAULT_GROUP
	}
	var names []string
	for page := 1; ; page++ {
		res, err := backend.Call(ctx, &s.life, func() (*model.ConfigPage, error) {
			return s.cli.SearchConfig(vo.SearchConfigParam{Search: "blur", DataId: overlay.Prefix(s.dataID) + "*",
				Group: group, PageNo: page, PageSize: searchPage})
		})
		var nerr *nacos_error.NacosError
		switch {
		case errors.Is(err, datasource.ErrClosed):
			return nil, err
		case errors.As(err, &nerr) && nerr.ErrorCode() == "404":
			return nil, fmt.Errorf("nacos: list the overlays of %s: the server has no config search (%w): %v", s.name(), errors.ErrUnsupported, err)
		case err != nil:
			return nil, fmt.Errorf("nacos: list the overlays of %s: %w", s.name(), err)
		case res == nil:
			return nil, fmt.Errorf("nacos: list the overlays of %s: no answer", s.name())
		}
		for _, it := range res.PageItems {
			if it.Group == group { // a blur search matches the group with LIKE
				names = append(names, it.DataId)
			}
		}
		if len(res.PageItems) == 0 || page >= res.PagesAvailable {
			return overlay.Groups(s.dataID, names), nil
		}
	}
}

// configured is what the SDK's own config client (*config_client.ConfigClient,
// through its embedded nacos_client.INacosClient) tells about its settings.
type configured interface {
	GetClientConfig() (constant.ClientConfig, error)
	GetServerConfig() ([]constant.ServerConfig, error)
}

// describe returns the servers (sorted, comma-separated host:port, or the
// address server's endpoint when the client finds its servers through one)
// and the namespace of client, as far as it tells.
func describe(client config_client.IConfigClient) (servers, namespace string) {
	c, ok := client.(configured)
	if !ok {
		return "", ""
	}
	cc, _ := c.GetClientConfig()
	scs, _ := c.GetServerConfig()
	addrs := make([]string, 0, len(scs))
	for _, sc := range scs {
		addrs = append(addrs, net.JoinHostPort(sc.IpAddr, strconv.FormatUint(sc.Port, 10)))
	}
	if len(addrs) == 0 && cc.Endpoint != "" {
		addrs = append(addrs, cc.Endpoint)
	}
	slices.Sort(addrs)
	return strings.Join(slices.Compact(addrs), ","), cc.NamespaceId
}

// String names the document: "nacos://", the client's servers (sorted,
// comma-separated), "/", its namespace ("" is Nacos' public namespace),
// "/", the group and "/" the dataId, as in
// "nacos://10.0.0.1:8848/prod/SENTINEL_GROUP/order-service-flow-rules". It
// holds no credentials. The Readable names its last-good cache after it.
func (s *Source) String() string { return s.ident }

// Close marks the Source closed (later calls return datasource.ErrClosed),
// ends running Watches (they cancel their listener and return
// datasource.ErrClosed), and waits for SDK calls that a Read or Write gave
// up on when its context ended, up to WithCloseWait (each is bounded by the
// client's TimeoutMs, 10 s by default). The client is not closed. Close is
// idempotent. It closes the registrations made through the Source
// (removing their records) first, and returns the error of those
// removals too.
func (s *Source) Close() error {
	err := s.reg.Close()
	if !s.regCfg.life.Close(backend.CloseWait) || !s.life.Close(backend.CloseWait) {
		return errors.Join(err, fmt.Errorf("nacos: close %s: SDK calls still waiting for the server after %v", s.name(), backend.CloseWait))
	}
	return err
}

// Read gets the config. Empty content is a missing document: the SDK answers
// "" both for a config that does not exist and (were it possible) for an
// empty one. The revision of a present document is the md5 of its content.
//
// The SDK's GetConfig takes no context: Read returns when ctx is done, and
// the call it left behind ends within the client's TimeoutMs.
//
// A read that finds the config gone when the previous read found it reads
// once more after confirmMissing (unless ctx ends sooner): a
// Nacos-protocol server with a release cache (PolarisMesh) answers "not
// found" for a moment while it swaps in a newly published release, and a
// rule set must not be cleared by that. A real deletion is seen about a
// second later.
func (s *Source) Read(ctx context.Context) (datasource.Snapshot, error) {
	snap, err := s.read(ctx)
	switch {
	case err != nil:
		return snap, err
	case !snap.Missing || !s.present.Load():
		s.present.Store(!snap.Missing)
		return snap, nil
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < 2*confirmMissing {
		s.present.Store(false)
		return snap, nil
	}
	t := time.NewTimer(confirmMissing)
	select {
	case <-ctx.Done():
		t.Stop()
		return datasource.Snapshot{}, fmt.Errorf("nacos: get %s: %w", s.name(), ctx.Err())
	case <-t.C:
	}
	snap, err = s.read(ctx)
	if err == nil {
		s.present.Store(!snap.Missing)
	}
	return snap, err
}

// confirmMissing is how long Read waits before it reads a config that has
// just vanished again: longer than PolarisMesh's one-second cache tick.
const confirmMissing = 1200 * time.Millisecond

func (s *Source) read(ctx context.Context) (datasource.Snapshot, error) {
	deadline := time.Now().Add(limitedFor)
	for {
		content, err := s.get(ctx)
		if err == nil {
			// The SDK has the content whole by now (Nacos sends no size
			// first); what bounds it is the server's limit on a config.
			if err := limit.Check(ctx, int64(len(content))); err != nil {
				return datasource.Snapshot{}, fmt.Errorf("nacos: get %s: %w", s.name(), err)
			}
			return snapshot(content), nil
		}
		// The SDK allows 5 GetConfig calls a second per config, for the whole
		// process, and refuses more without asking the server: wait for a
		// token rather than report the server as failing. Several readers of
		// one config (a Readable, the Writables of concurrent Updates) share
		// the tokens, so the waits are jittered and bounded in time, not in
		// attempts.
		if !isLimited(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return datasource.Snapshot{}, fmt.Errorf("nacos: get %s: %w", s.name(), err)
		}
		t := time.NewTimer(limitedWait/2 + rand.N(limitedWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return datasource.Snapshot{}, fmt.Errorf("nacos: get %s: %w", s.name(), ctx.Err())
		case <-t.C:
		}
	}
}

// The SDK's own limit on GetConfig: how long Read keeps trying, and the mean
// wait between tries (a token comes every 200 ms; each wait is drawn from
// [limitedWait/2, 3*limitedWait/2)).
const (
	limitedFor  = 5 * time.Second
	limitedWait = 200 * time.Millisecond
)

// get calls GetConfig, returning early when ctx is done.
func (s *Source) get(ctx context.Context) (string, error) {
	return backend.Call(ctx, &s.life, func() (string, error) {
		return s.cli.GetConfig(vo.ConfigParam{DataId: s.dataID, Group: s.group})
	})
}

func isLimited(err error) bool { return strings.Contains(err.Error(), "is limited") }

// Write publishes data with compare-and-set: CasMd5 is expectRevision (the
// md5 of the content last read), so the server stores data only if the
// config still holds that content. For expectRevision "" (the document must
// not exist) CasMd5 is the md5 of empty content, which no stored config has:
// the publish creates a config that does not exist and fails on one that
// does. A failed comparison stores nothing and returns an error wrapping
// datasource.ErrConflict.
//
// Empty data cannot be published (Nacos has no empty config); it is an
// error. Like Read, Write returns when ctx is done; the publish it left
// behind may still complete.
func (s *Source) Write(ctx context.Context, data []byte, expectRevision string) (datasource.Snapshot, error) {
	if len(data) == 0 {
		return datasource.Snapshot{}, fmt.Errorf("nacos: publish %s: empty content cannot be stored (it reads as a deleted config)", s.name())
	}
	cas := expectRevision
	if cas == "" {
		cas = emptyMd5
	}
	content := string(data)
	ok, err := backend.Call(ctx, &s.life, func() (bool, error) {
		return s.cli.PublishConfig(vo.ConfigParam{
			DataId:  s.dataID,
			Group:   s.group,
			Content: content,
			Type:    configType,
			CasMd5:  cas,
		})
	})
	want := "absent"
	if expectRevision != "" {
		want = "at md5 " + expectRevision
	}
	switch {
	case errors.Is(err, datasource.ErrClosed):
		return datasource.Snapshot{}, err
	case err != nil && isConflict(err):
		return datasource.Snapshot{}, fmt.Errorf("nacos: publish %s: config is not %s: %w (server: %v)",
			s.name(), want, datasource.ErrConflict, err)
	case err != nil:
		return datasource.Snapshot{}, fmt.Errorf("nacos: publish %s: %w", s.name(), err)
	case !ok:
		// The SDK answers (false, nil) only when it got no response at all.
		return datasource.Snapshot{}, fmt.Errorf("nacos: publish %s: not published (no response)", s.name())
	}
	return snapshot(content), nil
}

// Delete removes the config if its content's md5 is expectRevision (""
// meaning: whatever it holds), and returns an error wrapping
// datasource.ErrConflict, removing nothing, otherwise. A config that does
// not exist is not an error: deleting is idempotent. Delete is not part of
// the datasource contract; tools use it (removing a canary overlay).
//
// It is not atomic. The SDK's DeleteConfig compares nothing, so Delete
// reads the config (a Read, which confirms a config gone right after it
// was seen), compares its md5, then deletes: a publish by another client
// that lands between that read and the delete is deleted with it. And the
// server answers the read from its cache, so a change made just before
// (within about a second on PolarisMesh) may not be seen: Delete then
// reports a conflict with the previous content's md5, or deletes the
// change as above. With expectRevision "" it deletes at once, without
// reading. Like Write, it returns when ctx ends; the call it leaves behind
// may still complete.
func (s *Source) Delete(ctx context.Context, expectRevision string) error {
	if expectRevision != "" {
		cur, err := s.Read(ctx)
		if err != nil {
			return err
		}
		if ok, err := backend.MayDelete(cur, expectRevision); !ok {
			if err != nil {
				return fmt.Errorf("nacos: delete %s: %w", s.name(), err)
			}
			return nil
		}
	}
	ok, err := backend.Call(ctx, &s.life, func() (bool, error) {
		return s.cli.DeleteConfig(vo.ConfigParam{DataId: s.dataID, Group: s.group})
	})
	switch {
	case errors.Is(err, datasource.ErrClosed):
		return err
	case err != nil:
		return fmt.Errorf("nacos: delete %s: %w", s.name(), err)
	case !ok:
		return fmt.Errorf("nacos: delete %s: not deleted (no response)", s.name())
	}
	s.present.Store(false)
	return nil
}

// Watch listens to the config (ListenConfig) and calls changed, as a hint,
// for every callback of the SDK, until ctx is done or the Source is closed;
// then it cancels the listener (CancelListenConfig) and returns ctx.Err()
// or datasource.ErrClosed.
//
// The SDK registers a new listener with the server on its next listen pass
// (every 5 s), so Watch reads the config once after that and calls changed
// if it differs from from: a change made between the read of from and the
// moment the listener was armed is not missed. While the server is away the
// SDK reconnects by itself and listens again; a change it misses meanwhile
// is caught by the Readable's reconcile read (see ReconcileInterval).
func (s *Source) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	if s.life.Closed() {
		return datasource.ErrClosed
	}
	ctx, stop := s.life.WatchContext(ctx)
	defer stop()
	// Callbacks run on goroutines of the SDK: after Watch returns they must
	// not reach changed.
	var mu sync.Mutex
	live := true
	hint := func(content string) {
		mu.Lock()
		defer mu.Unlock()
		if live {
			logctx.From(ctx).Debug("nacos listener callback", "config", s.name(), "md5", md5Hex(content))
			changed(snapshot(content))
		}
	}
	unsubscribe, err := subscribe(s.cli, s.dataID, s.group, hint)
	if err != nil {
		return fmt.Errorf("nacos: listen %s: %w", s.name(), err)
	}
	defer func() {
		mu.Lock()
		live = false
		mu.Unlock()
		if err := unsubscribe(); err != nil {
			logctx.From(ctx).Debug("nacos cancel listen", "config", s.name(), "err", err)
		}
	}()
	logctx.From(ctx).Debug("nacos watch", "config", s.name(), "from_md5", from.Revision, "from_missing", from.Missing)

	armed := time.NewTimer(armDelay)
	defer armed.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.life.WatchEnded(ctx, ctx.Err())
		case <-armed.C:
			now, err := s.Read(ctx)
			switch {
			case errors.Is(err, datasource.ErrTooLarge):
				// ctx carries no limit of the Readable's: let its own
				// read decide.
				changed(datasource.Snapshot{})
			case err != nil:
				return s.life.WatchEnded(ctx, fmt.Errorf("nacos: watch %s: read after listening: %w", s.name(), err))
			case now.Missing != from.Missing || (!now.Missing && now.Revision != from.Revision):
				hint(string(now.Data))
			}
		}
	}
}

func (s *Source) name() string { return s.group + "/" + s.dataID }

// snapshot is what a read of content means: "" is a missing config.
func snapshot(content string) datasource.Snapshot {
	if content == "" {
		return datasource.Snapshot{Missing: true}
	}
	return datasource.Snapshot{Data: []byte(content), Revision: md5Hex(content)}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// isConflict reports whether a failed publish was refused because the
// content's md5 was not CasMd5. Nacos answers "publish cas config fail,server
// md5 may have changed." (or a message with "cas"), PolarisMesh "data is
// conflict, please try again"; the SDK passes only the message on.
func isConflict(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "conflict") || strings.Contains(msg, "cas config") ||
		strings.Contains(msg, "md5 may have changed")
}

// ---- one SDK listener per client and config ----

// The SDK keeps one listener per config in a client: a second ListenConfig
// for the same config keeps the first callback, and CancelListenConfig drops
// it whoever registered it. Watches of one config on one client therefore
// share one SDK listener, registered by the first and cancelled by the last.

type listenKey struct {
	cli           config_client.IConfigClient
	dataID, group string
}

type listenEntry struct {
	subs listeners.Set[func(string)]
}

var (
	listenMu sync.Mutex
	listens  = map[listenKey]*listenEntry{}
)

var errNotComparable = errors.New("client type is not comparable")

// subscribe adds fn to the callbacks of the config's SDK listener,
// registering the listener first if fn is the first, and returns how to
// remove it.
func subscribe(cli config_client.IConfigClient, dataID, group string, fn func(content string)) (unsubscribe func() error, err error) {
	if cli == nil {
		return nil, errors.New("nil client")
	}
	if !reflect.TypeOf(cli).Comparable() {
		return nil, fmt.Errorf("%w: %T", errNotComparable, cli)
	}
	key := listenKey{cli: cli, dataID: dataID, group: group}
	listenMu.Lock()
	defer listenMu.Unlock()
	e, ok := listens[key]
	if !ok {
		e = &listenEntry{}
		err := cli.ListenConfig(vo.ConfigParam{
			DataId: dataID,
			Group:  group,
			OnChange: func(_, _, _, data string) {
				for _, f := range e.subs.List() {
					f(data)
				}
			},
		})
		if err != nil {
			return nil, err
		}
		listens[key] = e
	}
	remove := e.subs.Add(fn)
	return func() error {
		listenMu.Lock()
		defer listenMu.Unlock()
		remove()
		if e.subs.Len() > 0 || listens[key] != e {
			return nil
		}
		delete(listens, key)
		return cli.CancelListenConfig(vo.ConfigParam{DataId: dataID, Group: group})
	}, nil
}
