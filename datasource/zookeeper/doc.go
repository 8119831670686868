// Package zookeeper keeps rules in a ZooKeeper node. [New] returns a
// [Source] that is a datasource.Source, a datasource.Watcher and a
// datasource.Sink over a *zk.Conn (github.com/go-zookeeper/zk) that the
// caller made and owns: servers, session timeout, digest auth (AddAuth),
// logger and dialer are configured there, and Close leaves it open.
//
//	conn, _, err := zk.Connect([]string{"zk1:2181", "zk2:2181"}, 10*time.Second, zk.WithLogInfo(false))
//	if err != nil { ... }
//	defer conn.Close()
//	_ = conn.AddAuth("digest", []byte("order-service:secret")) // if the node has a digest ACL
//	src := zookeeper.New(conn, "/bulwark/order-service/prod/flow", zookeeper.WithServers("zk1:2181", "zk2:2181"))
//	ds := datasource.NewReadable(src, converter.FlowRules())
//	core.Default().Flow().Register(ds.Property())
//	if err := ds.Start(ctx); err != nil { /* no rules yet */ }
//	defer ds.Close()
//
// # Naming
//
// The Source's String (the Readable's default name, in its errors, logs
// and last-good cache file name) is "zk://<servers>/<path>", for example
// "zk://zk1:2181,zk2:2181/bulwark/order-service/prod/flow". go-zookeeper
// does not tell which servers a connection was given (it has no chroot
// either: paths are absolute), so pass the same list to [WithServers];
// without it the name is "zk:///<path>", and two Readables of one path on
// two ensembles that share a cache directory need datasource.WithName.
//
// Everything beyond reading, watching and writing one node (retry with
// backoff, resync after a broken watch, dedupe, Status, the last-good
// cache, the periodic reconcile) is the datasource package's.
//
// # Reading
//
// Read is a Get of the node. A node that does not exist (zk.ErrNoNode) is
// a missing document: the rules are cleared, or kept with
// datasource.WithKeepOnMissing. The revision is "<czxid>.<version>" from
// the node's Stat: the version counts the node's data changes, and the
// creation zxid tells a node deleted and created again (version 0 again)
// from the old one. A node whose ACL the connection may not read fails
// with zk.ErrNoAuth, and Status.Err says so; AddAuth the credentials on
// the connection (go-zookeeper sends them again after every reconnect).
//
// Read enforces the size limit of its context (datasource.ReadLimit, set
// by the Readable and the Writable from datasource.WithMaxSize): it asks
// for the node's Stat first (Exists) and refuses a node whose DataLength is
// over the limit, with an error wrapping datasource.ErrTooLarge that names
// the path, without fetching its data; it checks the data it then Gets
// again, in case the node grew in between. (ZooKeeper itself bounds a
// node's data by the server's jute.maxbuffer, 1 MB by default, and
// zk.WithMaxBufferSize bounds what the client accepts.)
//
// # Watching
//
// ZooKeeper watches fire once. Watch sets one with ExistsW (it fires when
// the node is created, changed or deleted, and works whether the node
// exists or not), compares the node's Stat with the snapshot the Readable
// read, and after every event reports a change and sets the watch again,
// so a change made between an event and the next watch is seen by the
// comparison.
//
// # Session events
//
// The event channel that zk.Connect returns stays the caller's: the Source
// does not read it (go-zookeeper drops events when nobody does, so it may
// be ignored), and the Source needs no option to learn about the session.
// It learns from the connection it is given, two ways:
//
//   - go-zookeeper ends every watch of a session that expired, and of a
//     connection that is closed, with an EventNotWatching event on the
//     watch's own channel; Watch returns that error;
//   - while disconnected, go-zookeeper keeps the session's watches and
//     queues calls until it reconnects, which would hide an outage. Watch
//     therefore checks conn.State() every 100 ms and
//     returns an error ("no session") as soon as the connection
//     has no session, and every call fails at once with that error while
//     there is none (instead of waiting in go-zookeeper's queue).
//
// Either way the Readable's watch breaks: Status shows Watching false,
// the read error (Err, Failures) while the server cannot be reached, and
// the recovery; the Readable reads again with backoff and, once a read
// succeeds (after a reconnect, in the same session or a new one), sets a
// new watch from that read. Nothing written meanwhile is missed.
//
// Calls honour their context: each go-zookeeper call (which takes none)
// runs in a goroutine that the Source counts; a cancelled caller returns
// at once, and Close waits for the goroutines still in flight, up to
// 5 s. Such a call ends when the server answers or when
// go-zookeeper drops the connection (after two thirds of the session
// timeout without an answer) or is closed.
//
// # Writing
//
// Write with an expected revision checks that the node still has that
// creation zxid and sets its data with the expected version:
// zk.ErrBadVersion (another writer was first) and zk.ErrNoNode are
// errors wrapping datasource.ErrConflict, and nothing is stored. Write
// with the empty revision creates the node, and its missing parents
// (empty), with WithACL's ACL (default world-writable);
// zk.ErrNodeExists is a conflict. The snapshot Write returns is what it
// wrote, with the revision of its own write, never a later writer's: a
// create is one transaction (Multi) that creates the node empty and sets
// its data at version 0, whose Stat gives the revision (go-zookeeper has
// no create2 that returns the new node's Stat, and reading the node back
// could return another writer's document). A node Write created is
// therefore at version 1. The node's data is the document as is,
// the same bytes Java Sentinel's ZookeeperDataSource reads, so a Go and a
// Java service can share a node.
//
// Delete with an expected revision checks the node's creation zxid and
// deletes it with the expected version (zk.ErrBadVersion is a conflict);
// with the empty revision it deletes whatever version is there. A node
// that does not exist is not an error; a node with children cannot be
// deleted, and the parents Write created stay.
package zookeeper
