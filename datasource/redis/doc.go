// Package redis keeps rules in Redis: the rule document is the value of a
// string key, and writers announce changes on a Pub/Sub channel. [New]
// returns a [Source] that is a datasource.Source, a datasource.Watcher and
// a datasource.Sink, over a go-redis client the caller configured
// (github.com/redis/go-redis/v9: a *redis.Client, a *redis.ClusterClient,
// a failover client, or any redis.UniversalClient). TLS, ACL users and
// passwords, the database number, timeouts and retries are the client's
// settings; the Source never closes the client.
//
//	client := goredis.NewClient(&goredis.Options{Addr: "redis:6379", Username: "bulwark", Password: pw})
//	src := redis.New(client, "bulwark:order-service:prod:flow", "bulwark:order-service:prod:flow:changed")
//	ds := datasource.NewReadable(src, converter.FlowRules())
//	core.Default().Flow().Register(ds.Property())
//	if err := ds.Start(ctx); err != nil { /* no rules yet */ }
//	defer ds.Close()
//
// The layout is the one of Alibaba Sentinel's Java Redis datasource (a
// key holding the rules as JSON, and a channel on which writers publish
// the new document), so Go and Java services can share a key and its
// channel, and documents pushed by Sentinel-style tools are applied.
//
// # Reading
//
// Read reads the key. A key that does not exist is a missing document
// (the rules are cleared, or kept with datasource.WithKeepOnMissing), not
// an error. Redis keeps no version of a value: the revision is the content
// revision (the first 16 bytes of the SHA-256 of the bytes, in hex).
//
// A read is bounded by the size limit of its context (datasource.ReadLimit,
// which the Readable and the Writable set from datasource.WithMaxSize): it
// is one transaction, MULTI EXISTS key, STRLEN key, GETRANGE key 0
// limit-1, EXEC, so the size and the bytes are read at the same moment,
// and a document over the limit is refused (an error wrapping
// datasource.ErrTooLarge that names the key and the size) after receiving
// at most limit bytes of it. (ACL users that read need EXISTS, STRLEN,
// GETRANGE, MULTI and EXEC, all in +@read and +@transaction; GET without
// a limit.) Write's compare-and-set still GETs the current value whole.
//
// go-redis lets a context interrupt only the wait for a connection, not a
// command waiting for its answer (that lasts until the client's
// ReadTimeout; only a deadline, and only with ContextTimeoutEnabled,
// reaches the socket). So Read and Write run their command on a goroutine
// and return as soon as their context ends; Close waits for such commands
// up to 5 s, so a frozen server never holds a
// Readable's Close.
//
// # Naming
//
// The Source's String (the Readable's default name, in errors, logs and
// the last-good cache file name) is "redis://<addresses>/<db>/<key>", for
// example "redis://10.0.0.1:6379/0/bulwark:order-service:prod:flow". The
// addresses and the database come from the client: Options().Addr and DB
// of a *redis.Client, the Addrs of a *redis.ClusterClient (database 0) or
// a *redis.Ring (sorted). A failover (Sentinel) client, or another
// UniversalClient, tells no address: name its servers with [WithServers],
// or the name has none ("redis:///0/key"). No credentials are in it.
//
// # Watching, and why no update is missed
//
// Watch SUBSCRIBEs to the channel on its own connection. A message is only
// a hint that makes the Readable read the key again: the key is the truth,
// whatever the message holds (the whole document, as Java Sentinel's
// writers publish, or anything else). That makes delivery safe from three
// ways Pub/Sub loses or reorders things:
//
//   - Changes before the subscription. Watch waits for the server's
//     confirmation of SUBSCRIBE, then reads the key and reports a change if
//     it differs from the snapshot the Readable read before calling Watch.
//     Every change is either before the confirmation (seen by that read) or
//     after it (announced on the channel, if its writer publishes).
//   - Messages lost while disconnected. Redis does not queue messages for
//     a subscriber that is away. Watch never resumes a subscription by
//     itself: any receive error (connection reset, server restarted,
//     authentication refused on reconnect) ends Watch with that error, and
//     the Readable then backs off, reads the key again and calls Watch
//     again, which subscribes and reads again. go-redis may still
//     re-subscribe silently inside a call (its PubSub reconnects after a
//     failed read or ping); the new subscription confirmation that then
//     arrives is reported as a change too, so the key is read after every
//     subscription, never only before.
//   - Silent connections. A frozen server or a connection dropped by a
//     middlebox without a reset delivers no error. When the subscription
//     has been silent for the health-check interval
//     (5 s) Watch sends a PING; if nothing arrives
//     within another interval, Watch returns an error and the Readable
//     resyncs as above. Status shows it: WatchErr names the cause, and the
//     reads that fail while the server is away set Err and count Failures.
//
// Reading whole documents in order also means several messages that
// arrive together cost one read (the Readable coalesces hints) and a burst
// of writes ends with the latest document. The Readable's periodic
// reconcile read (datasource.WithReconcileInterval) is a last resort for a
// writer that SETs the key without publishing.
//
// # Writing
//
// Write is a compare-and-set on the content revision: WATCH key, GET key,
// compare its content revision with the expected one ("" meaning the key
// must not exist), then MULTI, SET key, PUBLISH channel, EXEC. A revision
// mismatch, or another client changing the key between WATCH and EXEC
// (EXEC aborts, redis.TxFailedErr), stores nothing and returns an error
// wrapping datasource.ErrConflict. The whole document is published, as
// Java Sentinel's Redis datasource expects of its writers, so Java
// services that share the channel apply the write too.
//
// Delete is the same transaction with DEL key and PUBLISH channel "" (an
// empty message) in place of SET and PUBLISH of the document: a
// revision mismatch or an aborted EXEC deletes nothing, and a key that
// does not exist is not an error (nothing is published then). With the
// expected revision "" it compares nothing: MULTI, DEL, PUBLISH, EXEC.
//
// With a *redis.ClusterClient the transaction runs on the key's node, and
// Redis Cluster forwards the PUBLISH to subscribers on every node. A
// *redis.Ring shards Pub/Sub by channel name: give the key and the channel
// one hash tag ("{order-service:prod}:flow" and
// "{order-service:prod}:flow:changed") so they live on one shard. (The
// tests run against a single server, plain, with ACL users, and with TLS;
// not against a cluster or a ring.)
//
// # Errors
//
// Errors are "redis: <operation> <key or channel>: <cause>" and wrap the
// go-redis error (redis.Nil is never returned: a missing key is a missing
// document).
package redis
