// Package datasource is bulwark's dynamic rule datasource framework: it
// keeps a [core.Property] (and so the RuleManager registered on it) in step
// with a rule document that lives in a config center or a file, and writes
// documents back safely.
//
// A backend (package file, etcd, redis, zookeeper, nacos) is thin: a
// [Source] that reads the document, usually a [Watcher] that pushes change
// hints, and a [Sink] that writes with compare-and-set. Everything else
// lives here, once: the first read, following pushes, resync after a
// broken watch, polling when there is no push, the periodic reconcile,
// dedupe, retry with backoff and jitter, the last-good cache, Status, and
// the read-modify-write loop of [Writable.Update].
//
// # Reading: Readable
//
//	src := file.New("/etc/order-service/flow-rules.json")
//	ds := datasource.NewReadable(src, converter.FlowRules(), datasource.WithCacheDir(cacheDir))
//	engine.Flow().Register(ds.Property())
//	if err := ds.Start(ctx); err != nil { /* no rules yet: source down and no cache */ }
//	defer ds.Close()
//
// [Readable.Start] reads the document and applies it before it returns;
// when the Source cannot be read (or its document is rejected) it applies
// the last-good cache (WithCacheDir), and Status().FromCache says so. It
// returns an error only when nothing could be applied, and keeps trying in
// the background in every case, until Close.
//
// Then, if the Source is a Watcher, the Readable watches from the snapshot
// it read. A push is a hint: the Readable reads again. When a watch breaks
// (Watch returns), it backs off, reads again, and watches again from that
// read, so nothing that changed while it was disconnected is missed. A
// reconcile read every WithReconcileInterval (30 s) catches a push that
// was lost anyway. A Source without a Watcher, or whose Watch reports
// [ErrWatchUnsupported], is read every WithPollInterval (1 s).
//
// One goroutine reads, decodes and sets, so values are applied in order;
// hints that arrive while it works coalesce into one read, and the latest
// document wins for every interleaving: a push naming the document read
// last is dropped only when no read is in flight (a read in flight may
// have started before the change the push reports, as in X, B, X again).
// While the source fails, pushes do not add reads: retries follow the
// backoff. A document whose revision (or content) is the one read last is
// not decoded nor set again. The Readable keeps a hash of the document,
// never a copy.
//
// Documents are bounded: a document larger than WithMaxSize (4 MiB) is
// refused while it is read (the limit travels in the read's context, see
// [ReadLimit]; backends stream or ask the server for the size first), the
// running rules stay, and Status.Err wraps [ErrTooLarge].
//
// Lenient rule managers: when a document decodes but some of its rules are
// invalid, a Property whose listeners all apply partial values (every
// one a RuleManager with SetLenient(true); a function added with
// Property.Listen takes whole values only) gets the valid rules, and Status.Err names the refused ones ("applied
// in part"), with Failures at zero. Otherwise the document is rejected
// whole. A cached copy of such a document counts as applied at boot too.
//
// Absent, empty and unreachable are different:
//
//   - a read error (unreachable, timeout) never changes the value; Status.Err
//     names it, Failures counts, and the read is retried with exponential
//     backoff (WithBackoff, 100 ms doubling to 30 s, each delay jittered
//     within its upper half);
//   - a missing document sets the zero value of T (no rules), unless
//     WithKeepOnMissing, and is logged as a warning (at Start too: a
//     mistyped path is not silent); with WithKeepOnMissing and a cache, a
//     document missing at Start applies the cache; an empty document ("[]"
//     for rule lists) is a document, and clears the rules as any other
//     would;
//   - a document that does not decode, or that a listener of the Property
//     rejects (a RuleManager returns its validation error from Property.Set),
//     is rejected: the running rules stay, the cache keeps the last good
//     document, Status.Err wraps the decode or validation error and
//     Failures counts. It is not decoded again until its revision changes.
//
// The engine's rule events (core.RuleEvent) name the datasource (WithName)
// and the revision of every document it applies or rejects, one that does
// not decode included: the Readable tells a RuleManager registered on its
// Property where each value came from.
//
// The last-good cache (WithCacheDir) keeps one file per document, named
// after WithName (or the Source's String) and a hash of the Source's
// identity (its String: server, namespace or database, key), so two
// Readables of one key on two servers never share it. Files are 0600 in a
// 0700 directory; a failed update or removal is retried with backoff until
// it succeeds, so a later boot never applies stale rules. Status.FromCache
// stays true for as long as the cached value is in force.
//
// [Readable.Close] is idempotent: it cancels, waits for every goroutine the
// Readable started, and closes the Source. A Source call that ignores its
// context (a read of a hung network mount) is waited for up to
// 5 seconds, then abandoned: Close returns an error saying so, and the
// call's result is never applied.
//
// [WithOverlay] makes a Readable follow an overlay beside its document, a
// canary group's version of it: while the overlay exists it is the
// document for this Readable, and when it is deleted the base is again.
// Both are watched; Status.Revision tells which is in force ("overlay:"
// and the group, then the overlay's revision). Every backend of this
// module names its overlays (an Overlay(group) method): the base's key,
// path or dataId followed by ".overlay." and the group.
//
// # Writing: Writable
//
// A [Writable] encodes a value and writes it through the backend's Sink
// with compare-and-set against a revision the caller holds: [Writable.Read]
// returns the value and its revision, [Writable.Write] takes them back, so
// a concurrent edit (by another process, or another goroutine sharing the
// Writable) makes the write fail with [ErrConflict] instead of being lost.
// [Writable.Update] reads, decodes, applies a function and writes with
// compare-and-set, starting again on conflict: this is how a tool changes
// one threshold without losing someone else's edit. The running rules
// change only when the Readable reads the new document; [WaitApplied]
// makes writes wait for that (and report a rejection). With a codec of
// package converter, Update writes over the document it read (see the
// converter's "Writing over a document"): unchanged rules keep their
// exact text, changed ones their dashboard entity fields.
//
// The contract does not promise read-after-write: a Source may be
// eventually consistent (a Nacos-protocol server answers reads from a
// cache refreshed every second), so a read soon after a write may return
// the document the write replaced. The wait of WaitApplied knows that
// revision and treats such a read as stale: it reads again, with a growing
// pause, until it sees the write or a later document. Update's pauses
// between attempts grow up to a second, so that its attempts outlast such
// staleness.
//
// A document that does not decode is reported by Read and Update as an
// error wrapping a [*DecodeError] (match it with errors.As), which holds
// its revision and content: a tool shows it, and a Write at that revision
// replaces it. Update never writes over it.
//
// # Instances: Registry
//
// Every backend's Source is also a [Registry]: a service registers an
// [Instance] (ID, app, version, address, admin URL) beside its rule
// document, and a console that reads the document lists the instances
// with [Registry.Instances]. Register refreshes the record every
// Instance.Interval (5 s when zero) from a goroutine that the
// returned io.Closer owns; the record expires [MissedBeats] intervals
// after its last beat, in the backend's own way (each backend's Register
// says how), and a record that outlives its beats is listed Stale. The
// beat loop, its jitter and backoff are the same for every backend.
//
// # Implementing a backend
//
// Source.Read returns the document as it is now:
//
//   - a document that does not exist is Snapshot{Missing: true} and a nil
//     error (never an error: "absent" is an answer, "unreachable" is not);
//   - any error means the backend could not answer; Read must respect ctx
//     (its cancellation, and its size limit: [ReadLimit]; a document over
//     it is an error wrapping [ErrTooLarge]);
//   - Revision must change whenever the content changes, and two snapshots
//     with the same Revision must hold the same bytes. Use the backend's
//     version (etcd mod revision, ZooKeeper version) or a hash of the
//     content. An empty Revision on a present document is replaced by its
//     content revision (the first 16 bytes of its SHA-256, in hex); a Sink
//     without versions compares with the same. A missing document's
//     Revision is "".
//   - Read must not keep Data: the framework may hold it.
//
// Every backend has one lifecycle. Source.Close releases what the Source
// owns (not a client the user passed in), makes later calls (Read, Watch,
// Write) return an error wrapping [ErrClosed], makes a running Watch
// return promptly with an error wrapping ErrClosed, and waits, bounded,
// for the calls the Source left running when their callers gave up on them
// (a call that takes no context); it is idempotent. The Readable calls it
// once, from its Close, after its own Watch has returned. A backend has no
// logger of its own: its Watch logs what it alone sees (a watch armed, an
// event ignored, a re-subscription, a broken watch) at Debug to the logger
// of the Readable that calls it ([WithLogger]), which the Readable passes
// in Watch's context.
//
// Watcher.Watch blocks until ctx is done (then it returns, with ctx.Err()
// or nil), the Source is closed (then it returns ErrClosed), or the watch
// breaks (then it returns the cause). It calls
// changed after every change later than from, including changes made
// between the read of from and the moment the watch was set up (etcd:
// watch from revision+1; others: read once the watch is armed and compare
// with from). changed is a hint and never blocks: the Snapshot it is given
// may be empty or partial; the framework reads again. changed may be
// called from any goroutine, but not after Watch returned. A Watch that
// can never work here returns an error wrapping ErrWatchUnsupported at
// once (it is not called again; the Readable polls). Watch must not retry forever by
// itself: returning is how the framework learns it must resync.
//
// Sink.Write stores data only if the document's current revision equals
// expectRevision, where "" means the document must not exist (create), and
// returns what it wrote: data and the revision the write gave it, known
// from that same step (a read afterwards may already return another
// writer's document, whose revision a later compare-and-set would then
// wrongly match). Otherwise it stores nothing and returns an error
// wrapping [ErrConflict]. The comparison and the store are one atomic step
// in the backend (a transaction, a lock).
// A backend's Sink is also its Source.
//
// A backend that can keep overlays has a method Overlay(group string)
// Source returning the Source of the overlay of group, with the same
// client and options; WithOverlay uses it. It may also have a method
// Overlays(ctx) ([]string, error) returning, sorted, the groups whose
// overlay exists (tools list them with it): only names that are exactly
// an overlay's, with a group WithOverlay accepts; an error wrapping
// errors.ErrUnsupported when the server cannot list them. Every backend of
// this module has one, and says how it lists.
//
// A backend may also have a method Delete(ctx, expectRevision string)
// error. The framework does not need it; tools use it (removing a canary
// overlay, to abort it or once it is promoted). It removes the document
// only if its current revision equals expectRevision ("" meaning: whatever
// it holds), with the comparison and the removal one atomic step where the
// backend allows it; otherwise it removes nothing and returns an error
// wrapping [ErrConflict]. A document that does not exist is not an error,
// whatever expectRevision: deleting is idempotent, so a retry after a lost
// answer succeeds. It respects ctx and the lifecycle as Write does
// (ErrClosed after Close). Every backend of this module has one, and says
// how atomic it is.
//
// Errors are "datasource: <name>: ..." and wrap their cause: test them
// with errors.Is ([ErrClosed], [ErrConflict], [ErrNotApplied], the
// converter's and the RuleManager's errors).
//
// Package datasourcetest checks all of this against a real backend.
package datasource
