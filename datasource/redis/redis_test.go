package redis_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// testHealth is the health-check interval of the Sources under test: short,
// so a frozen server is noticed within a second.
const testHealth = 300 * time.Millisecond

// newClient returns a client of srv (TLS when srv has it) with short
// timeouts, closed at t's cleanup.
func newClient(t testing.TB, srv *integration.Server, opt *goredis.Options) *goredis.Client {
	t.Helper()
	if opt == nil {
		opt = &goredis.Options{}
	}
	opt.Addr = srv.Addr()
	if opt.TLSConfig == nil {
		opt.TLSConfig = srv.TLS()
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = time.Second
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = time.Second
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = time.Second
	}
	c := goredis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// keyFor names a fresh key and its channel for t.
func keyFor(t testing.TB) (key, channel string) {
	key = "bulwark-test:" + strings.ReplaceAll(t.Name(), "/", ":")
	return key, key + ":changed"
}

// javaWrite stores doc the way Java Sentinel's Redis datasource expects
// its writers to: SET the key, then PUBLISH the whole document.
func javaWrite(ctx context.Context, c goredis.UniversalClient, key, channel, doc string) error {
	if err := c.Set(ctx, key, doc, 0).Err(); err != nil {
		return err
	}
	return c.Publish(ctx, channel, doc).Err()
}

// startKey starts a server of t's own (with opts) and returns it, a
// context that ends after d, a fresh key and its channel, and a client
// that writes as another service would; a first document, unless "", is
// written (javaWrite) before it returns.
func startKey(t *testing.T, d time.Duration, first string, opts ...integration.Option) (srv *integration.Server, ctx context.Context, key, channel string, writer *goredis.Client) {
	t.Helper()
	srv = integration.StartRedis(t, opts...)
	ctx = testCtx(t, d)
	key, channel = keyFor(t)
	writer = newClient(t, srv, nil)
	if first != "" {
		require.NoError(t, javaWrite(ctx, writer, key, channel, first))
	}
	return srv, ctx, key, channel, writer
}

// pushOnly follows key through a Source of cli with the tests' health
// check, reconciling an hour away: only pushes, and the resync after a
// broken subscription, deliver.
func pushOnly(t *testing.T, cli *goredis.Client, key, channel string) (*redis.Source, *flowrig.Rig) {
	t.Helper()
	src := redis.New(cli, key, channel, redis.WithHealthCheckInterval(testHealth))
	return src, flowrig.Start(t, src, datasource.WithReconcileInterval(time.Hour))
}

// ---- conformance ----

// TestConformance runs the datasource conformance suite. Every Backend
// gets its own ACL user for its Source's client, so the Fault hook can cut
// off that client alone (ACL SETUSER off, then CLIENT KILL USER) while the
// suite's Put and Delete (another client) keep working: messages published
// meanwhile are lost for the Source, as for a real network cut.
func TestConformance(t *testing.T) {
	srv := integration.StartRedis(t)
	admin := newClient(t, srv, nil)
	var users atomic.Int64
	datasourcetest.Run(t, datasourcetest.Harness{
		RecordExpiry: time.Second, // the key's TTL: 3 beats of 200 ms
		New: func(t *testing.T) datasourcetest.Backend {
			ctx := testCtx(t, 30*time.Second)
			user := fmt.Sprintf("source-%d", users.Add(1))
			require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all").Err())
			cli := newClient(t, srv, &goredis.Options{Username: user, Password: "pw"})
			key, channel := keyFor(t)
			at := func(key, channel string) datasourcetest.Backend {
				return datasourcetest.Backend{
					Put: func(ctx context.Context, data []byte) error {
						return javaWrite(ctx, admin, key, channel, string(data))
					},
					Delete: func(ctx context.Context) error {
						if err := admin.Del(ctx, key).Err(); err != nil {
							return err
						}
						return admin.Publish(ctx, channel, "").Err()
					},
				}
			}
			b := at(key, channel)
			b.Source = redis.New(cli, key, channel, redis.WithHealthCheckInterval(testHealth))
			b.Overlay = func(g string) datasourcetest.Backend { return at(key+".overlay."+g, channel+".overlay."+g) }
			b.Fault = &datasourcetest.Fault{
				Disconnect: func(t *testing.T) { cutUser(t, admin, cli, user) },
				Reconnect: func(t *testing.T) {
					require.NoError(t, admin.Do(testCtx(t, 10*time.Second), "ACL", "SETUSER", user, "on").Err())
				},
				Freeze: func(t *testing.T) func() { return srv.Freeze(t) },
			}
			return b
		},
	})
}

// cutUser disables user and kills its connections, and returns once a
// command through cli fails.
func cutUser(t *testing.T, admin, cli *goredis.Client, user string) {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", user, "off").Err())
	require.NoError(t, admin.Do(ctx, "CLIENT", "KILL", "USER", user).Err())
	require.Eventually(t, func() bool { return cli.Ping(ctx).Err() != nil }, 5*time.Second, 10*time.Millisecond,
		"the cut-off client still answers")
}

// ---- security: ACL users and TLS against the real server ----

// pushedAndWrittenBack checks that f, following key through src, applies
// a document that writer pushes (a: 2), then one written back through src
// as a Sink (a: 3).
func pushedAndWrittenBack(t *testing.T, ctx context.Context, writer *goredis.Client, key, channel string, src *redis.Source, f *flowrig.Rig) {
	t.Helper()
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowrig.Doc("a", 2)))
	f.WaitCount(t, "a", 2)

	w := datasource.NewWritable(src, converter.FlowRules(), datasource.WaitApplied(f.DS, 10*time.Second))
	_, rev, err := w.Read(ctx)
	require.NoError(t, err)
	require.NoError(t, w.Write(ctx, []flow.Rule{{Resource: "a", Count: 3}}, rev))
	assert.Equal(t, 3.0, f.Count("a"))
}

func TestACLUser(t *testing.T) {
	srv := integration.StartRedis(t, integration.WithRedisArgs(
		"--user", "default", "off",
		"--user", "alice", "on", ">pw", "~*", "&*", "+@all",
		// bob may read and write keys but use no channel.
		"--user", "bob", "on", ">pw", "~*", "resetchannels", "+@all",
	))
	ctx := testCtx(t, 60*time.Second)
	key, channel := keyFor(t)
	alice := newClient(t, srv, &goredis.Options{Username: "alice", Password: "pw"})
	require.NoError(t, javaWrite(ctx, alice, key, channel, flowrig.Doc("a", 1)))

	src, f := pushOnly(t, newClient(t, srv, &goredis.Options{Username: "alice", Password: "pw"}), key, channel)
	assert.Equal(t, 1.0, f.Count("a"))
	f.WaitWatching(t)
	pushedAndWrittenBack(t, ctx, alice, key, channel, src, f)

	// A wrong password: nothing can be read, Start says why.
	wrong := redis.New(newClient(t, srv, &goredis.Options{Username: "alice", Password: "nope"}), key, channel)
	ds := datasource.NewReadable(wrong, converter.FlowRules())
	t.Cleanup(func() { _ = ds.Close() })
	err := ds.Start(ctx)
	require.Error(t, err)
	assert.Contains(t, strings.ToUpper(err.Error()), "WRONGPASS")

	// bob may GET but not SUBSCRIBE: the rules load, and Status names the
	// refused watch.
	bob := redis.New(newClient(t, srv, &goredis.Options{Username: "bob", Password: "pw"}), key, channel)
	fb := flowrig.Start(t, bob)
	assert.Equal(t, 3.0, fb.Count("a"))
	require.Eventually(t, func() bool {
		werr := fb.DS.Status().WatchErr
		return werr != nil && strings.Contains(werr.Error(), "NOPERM")
	}, 10*time.Second, 5*time.Millisecond, "status %+v", fb.DS.Status())
}

func TestTLS(t *testing.T) {
	srv, ctx, key, channel, writer := startKey(t, 60*time.Second, flowrig.Doc("a", 1), integration.WithTLS(nil))

	src, f := pushOnly(t, newClient(t, srv, nil), key, channel)
	assert.Equal(t, 1.0, f.Count("a"))
	pushedAndWrittenBack(t, ctx, writer, key, channel, src, f)

	// Without TLS the server refuses the client: an error, no rules.
	plainOpt := &goredis.Options{Addr: srv.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1}
	plain := goredis.NewClient(plainOpt)
	t.Cleanup(func() { _ = plain.Close() })
	ds := datasource.NewReadable(redis.New(plain, key, channel), converter.FlowRules())
	t.Cleanup(func() { _ = ds.Close() })
	require.Error(t, ds.Start(ctx))
}

// ---- writers that are not bulwark ----

// A Java-Sentinel-style writer SETs the key and PUBLISHes the whole
// document; a writer that publishes only a word works too (the key is the
// truth), and so does a publish that arrives before the reader could have
// seen the SET of a pipelined writer.
func TestJavaSentinelWriter(t *testing.T) {
	srv, ctx, key, channel, writer := startKey(t, 60*time.Second, "")

	src, f := pushOnly(t, newClient(t, srv, nil), key, channel)
	assert.Equal(t, -1.0, f.Count("a"), "a missing key: no rules")
	assert.True(t, f.DS.Status().Missing)
	f.WaitWatching(t)

	// The whole document as the message.
	require.NoError(t, javaWrite(ctx, writer, key, channel, flowrig.Doc("a", 5)))
	f.WaitCount(t, "a", 5)

	// A message that is not the document: still a hint.
	require.NoError(t, writer.Set(ctx, key, flowrig.Doc("a", 6), 0).Err())
	require.NoError(t, writer.Publish(ctx, channel, "changed").Err())
	f.WaitCount(t, "a", 6)

	// SET and PUBLISH in one MULTI, as a careful writer does.
	_, err := writer.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Set(ctx, key, flowrig.Doc("a", 7), 0)
		p.Publish(ctx, channel, flowrig.Doc("a", 7))
		return nil
	})
	require.NoError(t, err)
	f.WaitCount(t, "a", 7)

	// What our Sink publishes is the document itself, for Java subscribers.
	sub := writer.Subscribe(ctx, channel)
	t.Cleanup(func() { _ = sub.Close() })
	_, err = sub.ReceiveTimeout(ctx, 5*time.Second) // the subscription confirmation
	require.NoError(t, err)
	snap, err := src.Read(ctx)
	require.NoError(t, err)
	_, err = src.Write(ctx, []byte(flowrig.Doc("a", 8)), snap.Revision)
	require.NoError(t, err)
	msg, err := sub.ReceiveMessage(ctx)
	require.NoError(t, err)
	assert.JSONEq(t, flowrig.Doc("a", 8), msg.Payload)
	f.WaitCount(t, "a", 8)
}

// ---- documents: deleted, invalid ----

func TestDeletedKey(t *testing.T) {
	srv, ctx, key, channel, writer := startKey(t, 60*time.Second, flowrig.Doc("a", 4))

	cleared := flowrig.Start(t, redis.New(newClient(t, srv, nil), key, channel), datasource.WithReconcileInterval(time.Hour))
	kept := flowrig.Start(t, redis.New(newClient(t, srv, nil), key, channel),
		datasource.WithReconcileInterval(time.Hour), datasource.WithKeepOnMissing())
	require.Equal(t, 4.0, cleared.Count("a"))
	require.Equal(t, 4.0, kept.Count("a"))

	require.NoError(t, writer.Del(ctx, key).Err())
	require.NoError(t, writer.Publish(ctx, channel, "deleted").Err())
	cleared.WaitCount(t, "a", -1)
	assert.Empty(t, cleared.Engine.Flow().Rules(), "a deleted key clears the rules")
	kept.WaitStatus(t, "missing", func(st datasource.Status) bool { return st.Missing })
	assert.Equal(t, 4.0, kept.Count("a"), "WithKeepOnMissing keeps them")
	for _, f := range []*flowrig.Rig{cleared, kept} {
		st := f.DS.Status()
		assert.True(t, st.Missing)
		assert.NoError(t, st.Err)
	}

	require.NoError(t, javaWrite(ctx, writer, key, channel, flowrig.Doc("a", 9)))
	cleared.WaitCount(t, "a", 9)
	kept.WaitCount(t, "a", 9)
}

func TestInvalidDocumentKeepsLastGood(t *testing.T) {
	srv, ctx, key, channel, writer := startKey(t, 60*time.Second, flowrig.Doc("a", 10))
	f := flowrig.Start(t, redis.New(newClient(t, srv, nil), key, channel), datasource.WithReconcileInterval(time.Hour))
	good := f.DS.Status().Revision

	// A rule that does not validate.
	require.NoError(t, javaWrite(ctx, writer, key, channel, `[{"resource":"a","count":-1}]`))
	f.WaitStatus(t, "an error", func(st datasource.Status) bool { return st.Err != nil })
	st := f.DS.Status()
	assert.ErrorContains(t, st.Err, "count")
	assert.GreaterOrEqual(t, st.Failures, 1)
	assert.Equal(t, good, st.Revision)
	assert.Equal(t, 10.0, f.Count("a"), "the last good rules stay")

	// Bytes that are not JSON.
	require.NoError(t, javaWrite(ctx, writer, key, channel, `[{"resource":"a",`))
	require.Eventually(t, func() bool {
		err := f.DS.Status().Err
		return err != nil && !strings.Contains(err.Error(), "count")
	}, 10*time.Second, 2*time.Millisecond)
	assert.ErrorContains(t, f.DS.Status().Err, "decode")
	assert.Equal(t, 10.0, f.Count("a"))

	require.NoError(t, javaWrite(ctx, writer, key, channel, flowrig.Doc("a", 11)))
	f.WaitCount(t, "a", 11)
	f.WaitStatus(t, "the error to clear", func(st datasource.Status) bool { return st.Err == nil && st.Failures == 0 })
}

// ---- several engines and writers on one key ----

func TestTwoEnginesOneKey(t *testing.T) {
	srv, ctx, key, channel, writer := startKey(t, 60*time.Second, flowrig.Doc("a", 1))
	f1 := flowrig.Start(t, redis.New(newClient(t, srv, nil), key, channel), datasource.WithReconcileInterval(time.Hour))
	f2 := flowrig.Start(t, redis.New(newClient(t, srv, nil), key, channel), datasource.WithReconcileInterval(time.Hour))

	// A burst, with several resources, some writes through a Sink.
	sink := redis.New(newClient(t, srv, nil), key, channel)
	for i := 2; i <= 40; i++ {
		doc := fmt.Sprintf(`[{"resource":"a","count":%d},{"resource":"r%d","count":1,"grade":0}]`, i, i%3)
		if i%5 == 0 {
			snap, err := sink.Read(ctx)
			require.NoError(t, err)
			_, err = sink.Write(ctx, []byte(doc), snap.Revision)
			require.NoError(t, err)
			continue
		}
		require.NoError(t, javaWrite(ctx, writer, key, channel, doc))
	}
	f1.WaitCount(t, "a", 40)
	f2.WaitCount(t, "a", 40)
	assert.Equal(t, f1.Engine.Flow().Rules(), f2.Engine.Flow().Rules())
	// Status is updated just after the rules swap: wait for both to catch up.
	require.Eventually(t, func() bool { return f1.DS.Status().Revision == f2.DS.Status().Revision },
		10*time.Second, 10*time.Millisecond, "both datasources report the same revision")
}

func TestTwoWritersCAS(t *testing.T) {
	srv := integration.StartRedis(t)
	ctx := testCtx(t, 60*time.Second)
	key, channel := keyFor(t)
	require.NoError(t, javaWrite(ctx, newClient(t, srv, nil), key, channel, `[]`))
	f := flowrig.Start(t, redis.New(newClient(t, srv, nil), key, channel), datasource.WithReconcileInterval(time.Hour))

	w1 := datasource.NewWritable(redis.New(newClient(t, srv, nil), key, channel), converter.FlowRules())
	w2 := datasource.NewWritable(redis.New(newClient(t, srv, nil), key, channel), converter.FlowRules())
	_, rev1, err := w1.Read(ctx)
	require.NoError(t, err)
	_, rev2, err := w2.Read(ctx)
	require.NoError(t, err)

	require.NoError(t, w1.Write(ctx, []flow.Rule{{Resource: "one", Count: 1}}, rev1))
	err = w2.Write(ctx, []flow.Rule{{Resource: "two", Count: 2}}, rev2)
	require.ErrorIs(t, err, datasource.ErrConflict, "the second writer must not overwrite what it has not seen")
	assert.Contains(t, err.Error(), "redis: ")

	// The loser retries with Update: both edits are kept.
	require.NoError(t, w2.Update(ctx, func(rules []flow.Rule) ([]flow.Rule, error) {
		return append(slices.Clone(rules), flow.Rule{Resource: "two", Count: 2}), nil
	}))

	// Many concurrent updates: none lost.
	const each = 10
	errs := make(chan error, 2*each)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range each {
			errs <- w1.Update(ctx, func(rules []flow.Rule) ([]flow.Rule, error) {
				return append(slices.Clone(rules), flow.Rule{Resource: fmt.Sprintf("w1-%d", i), Count: 1}), nil
			})
		}
	}()
	for i := range each {
		errs <- w2.Update(ctx, func(rules []flow.Rule) ([]flow.Rule, error) {
			return append(slices.Clone(rules), flow.Rule{Resource: fmt.Sprintf("w2-%d", i), Count: 1}), nil
		})
	}
	<-done
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(f.Engine.Flow().Rules()) == 2+2*each }, 10*time.Second, 2*time.Millisecond,
		"the engine to run every rule; has %d", len(f.Engine.Flow().Rules()))
	var names []string
	for _, r := range f.Engine.Flow().Rules() {
		names = append(names, r.Resource)
	}
	assert.Contains(t, names, "one")
	assert.Contains(t, names, "two")
	for i := range each {
		assert.Contains(t, names, fmt.Sprintf("w1-%d", i))
		assert.Contains(t, names, fmt.Sprintf("w2-%d", i))
	}
}

// TestOverlays: Overlays matches the key literally (a key with glob
// characters finds its overlays, and only them), and a cluster client
// lists the overlays on every master.
func TestOverlays(t *testing.T) {
	const key = `bulwark-test:[ab]*?\x:flow`
	groups := []string{"a1", "b2", "c3", "canary-x", "d4", "e5", "f6"}
	check := func(t *testing.T, c goredis.UniversalClient) {
		ctx := testCtx(t, 30*time.Second)
		src := redis.New(c, key, key+":changed")
		t.Cleanup(func() { _ = src.Close() })
		got, err := src.Overlays(ctx)
		require.NoError(t, err)
		assert.Empty(t, got)
		for _, g := range groups {
			require.NoError(t, c.Set(ctx, key+".overlay."+g, `["x"]`, 0).Err())
		}
		for _, k := range []string{
			`bulwark-test:aZZZQx:flow.overlay.decoy`, // the key's characters taken as a pattern
			key + ".overlay.", key + ".overlay.a.b", key + ".overlayX", key,
		} {
			require.NoError(t, c.Set(ctx, k, `["x"]`, 0).Err())
		}
		got, err = src.Overlays(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"a1", "b2", "c3", "canary-x", "d4", "e5", "f6"}, got)
		require.NoError(t, c.Del(ctx, key+".overlay.c3").Err())
		got, err = src.Overlays(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"a1", "b2", "canary-x", "d4", "e5", "f6"}, got)
	}
	t.Run("Client", func(t *testing.T) {
		check(t, newClient(t, integration.StartRedis(t), nil))
	})
	t.Run("Cluster", func(t *testing.T) {
		cl := integration.StartRedisCluster(t)
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs()})
		t.Cleanup(func() { _ = c.Close() })
		check(t, c)
		// The overlays are spread over the masters, so one master's SCAN
		// would not have found them all.
		holding := 0
		for _, n := range cl.Nodes {
			one := goredis.NewClient(&goredis.Options{Addr: n.Addr()})
			keys, err := one.Keys(testCtx(t, 10*time.Second), "*.overlay.*").Result()
			_ = one.Close()
			require.NoError(t, err)
			if len(keys) > 0 {
				holding++
			}
		}
		assert.GreaterOrEqual(t, holding, 2, "masters holding overlays")
	})
}
