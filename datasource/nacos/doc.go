// Package nacos is the Nacos datasource: a rule document stored as one Nacos
// config (a dataId in a group), read, watched and written through a
// config_client.IConfigClient (github.com/nacos-group/nacos-sdk-go/v2) that
// the caller configures and owns. It reads and writes the same dataId as
// Sentinel's Java NacosDataSource and Spring Cloud Alibaba, so Go and Java
// services can share their rules. [New] returns a [Source] that is a
// datasource.Source, a datasource.Watcher and a datasource.Sink; retries,
// resync, dedupe, the cache and Status live in package datasource.
//
//	cli, err := clients.NewConfigClient(vo.NacosClientParam{ClientConfig: cc, ServerConfigs: servers})
//	if err != nil { ... }
//	defer cli.CloseClient()
//	src := nacos.New(cli, "order-service-flow-rules", "SENTINEL_GROUP")
//	ds := datasource.NewReadable(src, converter.FlowRules(),
//		datasource.WithReconcileInterval(nacos.ReconcileInterval))
//	core.Default().Flow().Register(ds.Property())
//	if err := ds.Start(ctx); err != nil { /* no rules yet: Nacos down and no cache */ }
//	defer ds.Close()
//
// Server addresses, the namespace, authentication, TLS, timeouts and the
// SDK's log and cache directories all come from the client; Close does not
// close it. Set constant.WithDisableUseSnapShot(true) on the client so that a
// read during an outage fails (and the rules in force stay) instead of
// answering from the SDK's local snapshot, and keep a last-good copy with
// datasource.WithCacheDir instead.
//
// Naming: the Source's String, the Readable's default name (errors, logs,
// the last-good cache file), is "nacos://<servers>/<namespace>/<group>/<dataId>",
// for example "nacos://10.0.0.1:8848/prod/SENTINEL_GROUP/order-service-flow-rules".
// The servers (sorted host:port, or the address server's endpoint) and the
// namespace are read from the SDK's client (its GetServerConfig and
// GetClientConfig); the public namespace is the empty one
// ("nacos://10.0.0.1:8848//SENTINEL_GROUP/..."), and an empty group is
// DEFAULT_GROUP, as for the SDK. So one dataId in two namespaces or on two
// clusters never shares a cache. A client that is not the SDK's own tells
// nothing: the name then has no servers nor namespace; name such
// Readables with datasource.WithName. No credentials are in the name.
//
// Reading: GetConfig. Empty content is a missing document (the rules are
// cleared, or kept with datasource.WithKeepOnMissing): the SDK answers "" for
// a config that does not exist, and Nacos stores no empty config. The
// revision is the md5 of the content in hex, what Nacos itself computes and
// compares. The SDK allows 5 GetConfig calls a second per config in a
// process, shared by every reader of that config (a Readable, the Writables
// of concurrent Updates); Read waits for a token (up to 5 s, or its context)
// rather than fail when the SDK says "limited". A config longer than the
// read's size limit (datasource.ReadLimit, from datasource.WithMaxSize) is
// refused with an error wrapping datasource.ErrTooLarge that names the
// group and dataId. Nacos sends a config whole, with no size first, so the
// SDK holds it by then: what bounds that is the server's own limit on a
// config (Nacos: 10 MiB by default, its maxContent property; PolarisMesh:
// config.contentMaxLength, 20000 characters by default). GetConfig takes no context: Read returns when
// its context ends, and Close waits for the SDK call it left behind up to
// 5 s (each is bounded by the client's TimeoutMs).
//
// Watching: ListenConfig. Its callbacks are hints for the Readable to read
// again (an empty callback sometimes comes before the new content: it is
// only a hint). The SDK keeps one listener per config and client, so Sources
// watching the same config on one client share one listener; do not listen
// to that config on that client yourself. The SDK registers a listener with
// the server on its next pass (every 5 s), so Watch reads once after that
// and reports a change made before the listener was armed. Watch ends, and
// cancels the listener (CancelListenConfig, once the last Source sharing it
// is done), when its context ends or the Source is closed. While the server
// is unreachable the SDK reconnects by itself and listens again; it is known
// to lose a subscription across a reconnect now and then, so use a reconcile
// interval shorter than the framework's default: [ReconcileInterval] (10 s).
//
// Writing: PublishConfig with CasMd5 set to the expected revision (the md5
// of the content last read): the server stores the document only if the
// config still holds that content, and a concurrent edit (by another
// service, the dashboard, the console) makes Write fail with an error
// wrapping datasource.ErrConflict. For the expected revision "" (the
// document must not exist) CasMd5 is the md5 of empty content, which no
// stored config has: the publish creates a missing config and fails on an
// existing one. The SDK reports a refused CAS as an error carrying the
// server's message (not as false); Write recognises Nacos' and PolarisMesh's
// messages. The snapshot returned carries the md5 of the new content. The
// config type sent with the publish is "json". Empty data cannot be written (it would read as deleted).
//
// Delete is not atomic: DeleteConfig compares nothing, so with an expected
// revision Delete reads the config, compares its md5, then deletes it. A
// publish by another client between that read and the delete is deleted
// too, and a read served from the server's cache (below) may miss a change
// made just before. Use it where no other writer is expected at the
// moment (removing a canary overlay that only the rollout tool writes).
//
// Reads may lag writes: the server answers GetConfig from a cache, so for a
// moment after a publish (about a second on PolarisMesh) a read may still
// return the previous content. The framework allows for that: a write with
// datasource.WaitApplied waits until the Readable reads the new md5 (a read
// of the md5 it replaced is stale and is retried), and Update's attempts
// outlast the lag.
//
// Note for PolarisMesh (a Go server speaking the Nacos protocol, used by
// this module's integration tests): v1.18.1 as released drops CasMd5 when
// it converts a publish request, so it refuses every compare-and-set update
// of an existing config as a conflict (creating works); against it,
// Writable.Write and Update fail with ErrConflict once the document exists.
// The integration harness builds it with that fixed
// (internal/integration/tools/polaris/build.sh); real Nacos compares CasMd5 as
// described above. PolarisMesh v1.18.1 may also answer a config as missing
// for a moment after a publish (its cache can drop the active release of
// the old version after storing the new one, both under one key). So a
// Read that finds a config gone right after a read found it reads once more
// 1.2 s later (past the server's one-second cache tick) before it reports
// the config missing: a deletion clears the rules about a second later, and
// the swap never does.
//
// nacos-sdk-go v2.3.2 itself has a data race when its gRPC client
// reconnects (upstream issues 741 and 905): programs and tests built with
// -race report it whenever the server goes away and comes back.
//
// Errors are "nacos: <operation> <group>/<dataId>: ..." and wrap the cause
// (the SDK's error, a context error, datasource.ErrConflict, ErrClosed).
//
// Run the tests against a real server with the integration package
// (integration.StartNacos): BULWARK_IT_MODE=local (PolarisMesh in a private
// network namespace) or docker.
package nacos
