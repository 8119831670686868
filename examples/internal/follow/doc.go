// Package follow is the printing the config-center examples (etcd, redis,
// nacos, zookeeper) share: each follows flow rules from its backend and
// prints every rule change and every change of the datasource's Status
// the same way. It is a helper of those examples, not a public API: each
// example keeps its own backend wiring (flags, client, source, start,
// failing fast without a server) so that a reader sees how to connect it,
// and leaves the printing here.
package follow
