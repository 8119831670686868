// Package integration gives a test a real etcd, Redis or ZooKeeper server (and, in
// nacos*.go, a Nacos-protocol server; in consul.go, a Consul dev agent) with controls over it: its address, Stop, Start again
// with its data on the same address, Pause and Resume.
//
//	func TestSomething(t *testing.T) {
//		srv := integration.StartRedis(t)
//		client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
//		// ...
//		require.NoError(t, srv.Stop(ctx))  // the server is down, its data is kept
//		require.NoError(t, srv.Start(ctx)) // up again on the same address, ready to serve
//	}
//
// # Modes
//
// The mode is chosen once per test binary by BULWARK_IT_MODE:
//
//   - docker: testcontainers-go starts a container from the image named by
//     BULWARK_IT_IMAGE_ETCD, BULWARK_IT_IMAGE_REDIS or BULWARK_IT_IMAGE_ZOOKEEPER (defaults:
//     the official public images, see [DefaultEtcdImage] and its siblings). The container's
//     port is published on a fixed free port of 127.0.0.1, so the address survives Stop and
//     Start. Stop is docker kill (SIGKILL), Start is docker start, Pause and Resume are
//     docker pause and unpause. The harness passes explicit commands that work both in the
//     official images and in a plain Debian bookworm root filesystem without CMD or
//     ENTRYPOINT (.ci/image.sh builds one), so one local image can serve all three.
//     Containers are removed in t.Cleanup; set TESTCONTAINERS_RYUK_DISABLED=true when the
//     reaper image cannot be pulled.
//   - local: etcd is embedded in the test binary (go.etcd.io/etcd/server/v3/embed) behind a
//     small loopback TCP proxy; Redis (redis-server) and ZooKeeper (Debian's jars in
//     /usr/share/java, ZooKeeperServerMain, run by java) are child processes on free
//     loopback ports. Child processes are killed with their process group at cleanup and
//     get SIGKILL when the test binary dies (Pdeathsig). Stop is SIGKILL (a crash), Pause
//     and Resume are SIGSTOP and SIGCONT; for the embedded etcd, Stop closes the server and
//     the proxy's listener, and Pause makes the proxy stop forwarding bytes (connections stay
//     open and hang, new ones are accepted and hang, as with a frozen process).
//   - auto (the default): docker when a Docker daemon answers and the server's image is
//     present locally, else local. The choice is made per server kind, once per binary.
//
// Stop simulates a crash in every mode; what the server acknowledged is kept (etcd and
// ZooKeeper fsync their logs; Redis runs with appendonly yes and appendfsync always).
// Start returns only when the server really serves: etcd answers a Get, Redis answers
// PING, ZooKeeper's srvr command reports a Mode (ruok answers too early). The exception is
// Consul ([StartConsul]): a dev agent keeps its data in memory, so after Start it is empty
// and its Raft indexes start again, the index reset Consul clients must handle.
//
// # Redis Cluster
//
// [StartRedisCluster] starts three Redis servers as a Redis Cluster of three masters and
// returns their addresses for a go-redis ClusterClient; each node is a [Server] with its
// own controls. Local mode runs three redis-server processes. Docker mode runs the three
// in one container of BULWARK_IT_IMAGE_REDIS, each publishing its port on the same port
// of 127.0.0.1 and announcing 127.0.0.1, so that the addresses the cluster hands out are
// reachable from the test; a node's controls signal its process in the container.
//
// # Cutting one client off
//
// [Cutter] is a loopback TCP proxy for a fault that hits one client only: give that client
// [Cutter.Addr] and let every other client talk to the server directly. Disconnect closes
// the Cutter's listeners and every connection through it (the client sees resets, then
// refused dials) while the server keeps running; Reconnect listens again on the same
// addresses. The two methods fit datasourcetest.Fault as method values. [NewCutter] forwards
// any number of targets, each from a free port; [NewCutterSameOffsets] keeps the targets'
// port distances, for a Nacos client, which dials gRPC on its HTTP port + 1000. A Cutter
// shares its code with the proxy in front of the embedded etcd, is closed at the test's
// cleanup and leaves no goroutine behind.
//
// # Skips
//
// When a server cannot be had (no redis-server or java binary, no Docker daemon, an image
// that cannot be found or pulled), the test is skipped with a message saying how to get
// one. BULWARK_IT_REQUIRE=1 (set in CI) turns every such skip into a failure.
//
// # Logs
//
// Server output goes to a file in the test's temporary directory (container logs in
// docker mode); when the test has failed, its last lines are printed at cleanup.
//
// # Environment
//
//	BULWARK_IT_MODE             docker | local | auto (default auto)
//	BULWARK_IT_REQUIRE          1: a missing server fails the test instead of skipping it
//	BULWARK_IT_IMAGE_ETCD       docker image for etcd (default DefaultEtcdImage)
//	BULWARK_IT_IMAGE_REDIS      docker image for Redis (default DefaultRedisImage)
//	BULWARK_IT_IMAGE_ZOOKEEPER  docker image for ZooKeeper (default DefaultZooKeeperImage)
//	BULWARK_IT_REDIS_SERVER     local mode: path of redis-server (default: looked up in PATH)
//	BULWARK_IT_JAVA             local mode: path of java (default: looked up in PATH)
//	BULWARK_IT_ZOOKEEPER_CLASSPATH  local mode: class path holding ZooKeeperServerMain
//	                            (default /usr/share/java/zookeeper.jar plus slf4j-simple.jar)
//
// # Adding a server kind
//
// A server kind implements the unexported backend interface (start, stop, pause, resume,
// close, logs) and is wrapped by newServer, which adds the state machine, the cleanup and
// the log printing; StartNacos and StartConsul live beside StartEtcd that way.
package integration
