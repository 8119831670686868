// Package consul is the Consul datasource: a rule document stored as the
// value of one Consul KV key, read, watched and written through an
// *api.Client (github.com/hashicorp/consul/api) that the caller configures
// and owns, as Java Sentinel's sentinel-datasource-consul reads it. [New]
// returns a [Source] that is a datasource.Source, a datasource.Watcher, a
// datasource.Sink and a datasource.Registry; retries, resync, dedupe, the
// cache and Status live in package datasource.
//
//	cfg := api.DefaultConfig() // CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, ... from the environment
//	cli, err := api.NewClient(cfg)
//	if err != nil { ... }
//	ds := datasource.NewReadable(consul.New(cli, "bulwark/order-service/prod/flow"), converter.FlowRules())
//	core.Default().Flow().Register(ds.Property())
//	if err := ds.Start(ctx); err != nil { /* no rules yet: Consul down and no cache */ }
//	defer ds.Close()
//
// The address, ACL token, TLS, datacenter and namespace come from the
// client's api.Config; the Source adds nothing to them.
//
// Naming: the Source's String, which the Readable uses as its default name
// (errors, logs, the last-good cache file), is "consul://", the client's
// address, "/", its datacenter (empty for the agent's own), "/" and the
// key, as in "consul://10.0.0.1:8500/dc1/bulwark/order-service/prod/flow";
// a namespace comes before the datacenter as "NS@DC". It never holds the
// token.
//
// Reading: a KV get of the key. An absent key is a missing document (the
// rules are cleared, or kept with datasource.WithKeepOnMissing), not an
// error; the revision of a present document is the key's ModifyIndex in
// decimal. A value larger than the read's size limit (datasource.ReadLimit)
// is refused with an error wrapping datasource.ErrTooLarge that names the
// key; the server stores no value larger than its kv_max_value_size
// (512 KiB by default) and refuses such a write.
//
// Watching: blocking queries (WaitIndex, WaitTime 30 s), starting from
// the index of the read the Readable made, so a change made in between is
// delivered. While the key exists Watch blocks on it; while it is missing,
// on the keys that begin with it (a keys-only listing whose index counts
// deletions: Consul's get of a missing key does not return when the key
// was created and deleted meanwhile), then reads it. Every answer whose
// index moved is a hint with what the key is now; the Readable drops one
// that names the document it read last. Consul documents that an index
// can go backwards (a restored or restarted server: a dev agent restarts
// empty): such an answer is taken as a fresh read and the watch goes on
// from its index. Every query is bounded on the client too (wait time +
// 1/16 + 10 s): a frozen server ends the Watch with an error. On any error
// Watch returns and the Readable reads again, with backoff, and watches
// again from that read.
//
// Writing: Write is a transaction of one check-and-set ("cas" on the
// ModifyIndex; index 0, for the expected revision "", creates the key only
// if it is absent). A failed check stores nothing and returns an error
// wrapping datasource.ErrConflict; the snapshot returned carries the new
// ModifyIndex. Delete is a check-and-set delete ("" deletes whatever is
// there); an absent key is not an error.
//
// Instances (datasource.Registry): each registered instance is the key
// KEY.instances/ID, held by a Consul session (behavior "delete", TTL
// datasource.MissedBeats beats and at least 10 s) that each beat renews;
// Consul deletes the record when the session expires (up to twice its
// TTL) or when the agent's node fails its health check.
//
// Overlays (datasource.WithOverlay) are the keys KEY.overlay.GROUP; the
// Source lists them with one keys-only listing of that prefix.
//
// Errors are "consul: <operation> <key>: ..." and wrap the client's error
// (api.StatusError: a 403 is described as a permission the ACL token
// lacks), context errors, datasource.ErrConflict and ErrClosed.
//
// Run the tests against a real server with the integration package:
// BULWARK_IT_MODE=local (the binary of .ci/consul.sh) or docker (its image).
package consul
