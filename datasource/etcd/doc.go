// Package etcd is the etcd datasource: a rule document stored as the value
// of one etcd key, read, watched and written through a *clientv3.Client
// (go.etcd.io/etcd/client/v3) that the caller configures and owns. [New]
// returns a [Source] that is a datasource.Source, a datasource.Watcher and
// a datasource.Sink; retries, resync, dedupe, the cache and Status live in
// package datasource.
//
//	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
//	if err != nil { ... }
//	defer cli.Close()
//	ds := datasource.NewReadable(etcd.New(cli, "/bulwark/order-service/prod/flow"), converter.FlowRules())
//	core.Default().Flow().Register(ds.Property())
//	if err := ds.Start(ctx); err != nil { /* no rules yet: etcd down and no cache */ }
//	defer ds.Close()
//
// TLS, user/password authentication (the client gets and refreshes its
// token) and the endpoints come from the client. Close does not close it.
// A key prefix is best given with [WithNamespace] (the Source then wraps
// the client's KV and Watcher with namespace.NewKV and NewWatcher itself):
// a prefix set on the client works too, but the Source cannot see it.
//
// Naming: the Source's String, which the Readable uses as its default
// name (errors, logs, the last-good cache file), is "etcd://", the
// client's endpoints when New was called (sorted, without scheme), "/" and
// the key as stored (WithNamespace's prefix and the key), for example
// "etcd://10.0.0.1:2379,10.0.0.2:2379//bulwark/order-service/prod/flow".
// Two Sources of one key on two clusters, or under two prefixes, have two
// names and never share a cache. A prefix set on the client is not in the
// name: give such Readables distinct names with datasource.WithName, or
// use WithNamespace.
//
// Reading: a Get of the key. An absent key is a missing document (the
// rules are cleared, or kept with datasource.WithKeepOnMissing), not an
// error; the revision of a present document is the key's mod revision in
// decimal. The Source also remembers the store revision of the response.
// A value larger than the read's size limit (datasource.ReadLimit, from
// datasource.WithMaxSize) is refused with an error wrapping
// datasource.ErrTooLarge that names the key. etcd sends a value whole (it
// has no ranged or size-only read of a value), so the client has received
// it by then; what bounds that is the server, which refuses requests
// larger than --max-request-bytes (1.5 MiB by default) and so stores no
// larger value, and the client's clientv3.Config.MaxCallRecvMsgSize
// (unbounded by default: set it to bound a response). Watch asks only for
// the key's revision, never for its value.
//
// Watching: Watch watches the key from the store revision right after the
// read it is given (list, then watch from revision + 1, as etcd's mirror
// package does), so a change made between the read and the watch is not
// missed; a put or a delete is a hint for the Readable to read again. The
// watch context carries clientv3.WithRequireLeader, so a member that lost
// its leader cancels the watch. While the server is unreachable, the
// client keeps the watch and resumes it by itself from the next revision;
// when that revision has been compacted meanwhile, or the server cancels
// the watch, or its channel closes, Watch returns an error and the
// Readable reads again and watches again from that read, with backoff.
// A stalled server (frozen, partitioned without a leader change) sends
// nothing: it is noticed by the Readable's reconcile read
// (datasource.WithReconcileInterval, which fails and shows in Status) and
// by the client's keepalive (clientv3.Config.DialKeepAliveTime) if set.
//
// Writing: Write is one transaction: if the key's mod revision equals the
// expected revision (or, for "", the key does not exist: its create
// revision is 0) put the document, else get the key's revision. A failed
// comparison stores nothing and returns an error wrapping
// datasource.ErrConflict. The snapshot returned carries the new mod
// revision. Delete is one transaction too: if the key's mod revision
// equals the expected one (no comparison for "") delete the key, else get
// its revision; a failed comparison deletes nothing, and an absent key is
// not an error.
//
// Errors are "etcd: <operation> <key>: ..." and wrap the client's error
// (test them with errors.Is against go.etcd.io/etcd/api/v3/v3rpc/rpctypes
// errors, context errors, datasource.ErrConflict and ErrClosed).
//
// Run the tests against a real server with the integration package:
// BULWARK_IT_MODE=local (embedded etcd) or docker.
package etcd
