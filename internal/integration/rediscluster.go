package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// RedisCluster is a Redis Cluster of three masters (no replicas) for t's lifetime.
type RedisCluster struct {
	// Nodes are the masters; each has the controls of a Server (Stop, Start, Pause,
	// Resume), which act on that node only.
	Nodes []*Server
}

// Addrs returns the masters' addresses, for a go-redis ClusterClient's Addrs.
func (c *RedisCluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		a[i] = n.Addr()
	}
	return a
}

// clusterNodes is the number of masters of a RedisCluster.
const clusterNodes = 3

// StartRedisCluster starts three Redis servers with cluster mode enabled, joins them
// into one cluster (the 16384 slots split three ways, as redis-cli --cluster create
// does) and returns when every node reports cluster_state:ok and knows the other two.
// Writes are not kept across a node's Stop (appendonly no): the cluster is for tests of
// sharded keys, not of crashes. Options: WithRedisArgs, passed to every node.
//
// Local mode runs three redis-server processes (BULWARK_IT_REDIS_SERVER, else from
// PATH). Docker mode runs the three in one container of BULWARK_IT_IMAGE_REDIS
// (default DefaultRedisImage), each on a port published on the same port of 127.0.0.1
// and announcing 127.0.0.1, so that the addresses the nodes give clients (MOVED
// redirections, CLUSTER SLOTS) are the ones the test reaches, and the cluster bus runs
// over the container's own loopback. A node's Stop, Start, Pause and Resume signal its
// process inside the container (docker exec).
func StartRedisCluster(t testing.TB, opts ...Option) *RedisCluster {
	t.Helper()
	o := buildOptions(t, opts)
	image := envOr(EnvImageRedis, DefaultRedisImage)
	c := &RedisCluster{}
	if chooseMode(t, image) == ModeDocker {
		c.Nodes = startClusterContainer(t, image, o.redisArgs)
	} else {
		c.Nodes = startClusterProcesses(t, o.redisArgs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := joinCluster(ctx, c.Addrs()); err != nil {
		t.Fatalf("redis cluster: %v", err)
	}
	return c
}

// clusterNodeArgs are the redis-server arguments of a cluster node on port, keeping its
// files in dir; extra (WithRedisArgs) come last, so they win.
func clusterNodeArgs(port int, dir string, extra []string) []string {
	a := []string{"--port", strconv.Itoa(port), "--cluster-enabled", "yes",
		"--cluster-config-file", dir + "/nodes.conf", "--cluster-node-timeout", "2000",
		"--save", "", "--appendonly", "no", "--dir", dir}
	return append(a, extra...)
}

// startClusterProcesses runs the nodes as local redis-server processes.
func startClusterProcesses(t testing.TB, extra []string) []*Server {
	t.Helper()
	bin := os.Getenv("BULWARK_IT_REDIS_SERVER")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			unavailable(t, "redis cluster in local mode: redis-server not found in PATH; install it (apt-get install -y redis-server) or set %s=docker", EnvMode)
		}
	}
	var nodes []*Server
	for i := range clusterNodes {
		port, err := clusterPort()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		argv := append([]string{bin, "--bind", "127.0.0.1"}, clusterNodeArgs(port, dir, extra)...)
		p := &process{name: fmt.Sprintf("redis-server (cluster node %d)", i), argv: argv, dir: dir,
			logPath: filepath.Join(dir, "redis.log")}
		ready := func(ctx context.Context, addr string) error { return redisPing(ctx, addr, nil) }
		nodes = append(nodes, startProcess(t, "redis", p, port, nil, ready))
	}
	return nodes
}

// clusterPort returns a free port whose cluster bus port (port + 10000) is free too.
func clusterPort() (int, error) {
	for range 100 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if port+10000 > 65535 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port pair (port, port+10000) for a cluster node")
}

// containerPorts returns ports for the nodes of a cluster in a container: free on the
// host a moment ago (each is published on itself), and with their bus ports (+10000,
// inside the container only) clear of each other.
func containerPorts() ([]int, error) {
	used := map[int]bool{}
	var ports []int
	for range 100 {
		if len(ports) == clusterNodes {
			return ports, nil
		}
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if p+10000 > 65535 || used[p] || used[p+10000] {
			continue
		}
		used[p], used[p+10000] = true, true
		ports = append(ports, p)
	}
	return nil, errors.New("no free ports for the cluster's nodes")
}

// startClusterContainer runs the nodes in one container. A host port taken by another
// program between choosing and publishing it fails the start; it is retried with new
// ports.
func startClusterContainer(t testing.TB, image string, extra []string) []*Server {
	t.Helper()
	for attempt := 1; ; attempt++ {
		ports, err := containerPorts()
		if err != nil {
			t.Fatal(err)
		}
		ctr, argvs, err := runClusterContainer(t, image, ports, extra)
		if err != nil {
			if attempt < 3 && portTaken(err) {
				t.Logf("redis cluster: a port was taken, trying others: %v", err)
				continue
			}
			t.Fatalf("start redis cluster: %v", err)
		}
		// Registered before the nodes, so it runs after theirs (which read the nodes' logs).
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
			defer cancel()
			if err := ctr.close(ctx); err != nil {
				t.Errorf("close redis cluster container: %v", err)
			}
		})
		nodes := make([]*Server, len(ports))
		for i, port := range ports {
			n := &containerNode{ctr: ctr, addr: fmt.Sprintf("127.0.0.1:%d", port), dir: nodeDir(port), argv: argvs[i]}
			nodes[i] = newServer(t, "redis", ModeDocker, n.addr, nil, n)
		}
		return nodes
	}
}

// portTaken reports whether a container failed to start because a host port it
// publishes was in use.
func portTaken(err error) bool {
	s := err.Error()
	return strings.Contains(s, "address already in use") || strings.Contains(s, "port is already allocated")
}

func nodeDir(port int) string { return fmt.Sprintf("/tmp/redis-node-%d", port) }

// runClusterContainer starts a container running one redis-server per port and returns
// it once every node answers PING, with each node's command line.
func runClusterContainer(t testing.TB, image string, ports []int, extra []string) (*containerBackend, [][]string, error) {
	t.Helper()
	var script strings.Builder
	argvs := make([][]string, len(ports))
	publish := map[int]int{}
	for i, port := range ports {
		dir := nodeDir(port)
		// Every address a node gives out is 127.0.0.1:port: what the host reaches through
		// the published port, and, for the bus, what the other nodes reach inside the
		// container.
		argvs[i] = append([]string{"redis-server", "--bind", "0.0.0.0", "--protected-mode", "no",
			"--cluster-announce-ip", "127.0.0.1", "--pidfile", dir + "/redis.pid", "--logfile", dir + "/redis.log"},
			clusterNodeArgs(port, dir, extra)...)
		fmt.Fprintf(&script, "mkdir -p %s && %s &\n", dir, shellJoin(argvs[i]))
		publish[port] = port
	}
	// The shell stays PID 1 and reaps the nodes that are killed.
	script.WriteString("while :; do wait; sleep 1; done\n")
	addrs := make([]string, len(ports))
	for i, p := range ports {
		addrs[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	spec := containerSpec{
		kind: "redis cluster", image: image, imageEnv: EnvImageRedis,
		entrypoint: []string{"sh", "-c", script.String()},
		ready: func(ctx context.Context, _ string) error {
			for _, a := range addrs {
				if err := redisPing(ctx, a, nil); err != nil {
					return fmt.Errorf("node %s: %w", a, err)
				}
			}
			return nil
		},
	}
	b, err := runContainer(t, spec, addrs[0], publish)
	return b, argvs, err
}

// shellJoin quotes each word for sh.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// containerNode is one node of a cluster whose nodes share a container: its controls
// signal its redis-server process through docker exec, and the container is closed with
// the cluster.
type containerNode struct {
	ctr  *containerBackend
	addr string
	dir  string
	argv []string // the node's command line, to start it again
}

// exec runs script with sh in the container and returns its output.
func (n *containerNode) exec(ctx context.Context, script string) (string, error) {
	code, r, err := n.ctr.c.Exec(ctx, []string{"sh", "-c", script}, tcexec.Multiplexed())
	if err != nil {
		return "", fmt.Errorf("docker exec: %w", err)
	}
	out, _ := io.ReadAll(r)
	if code != 0 {
		return string(out), fmt.Errorf("docker exec %q: exit code %d: %s", script, code, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func (n *containerNode) signal(ctx context.Context, sig string) error {
	_, err := n.exec(ctx, fmt.Sprintf("kill -%s $(cat %s/redis.pid)", sig, n.dir))
	return err
}

func (n *containerNode) start(ctx context.Context) error {
	if _, err := n.exec(ctx, shellJoin(n.argv)+" --daemonize yes"); err != nil {
		return err
	}
	return poll(ctx, 50*time.Millisecond, func(ctx context.Context) error { return redisPing(ctx, n.addr, nil) })
}

func (n *containerNode) stop(ctx context.Context) error {
	if err := n.signal(ctx, "KILL"); err != nil {
		return err
	}
	return poll(ctx, 50*time.Millisecond, func(ctx context.Context) error {
		if redisPing(ctx, n.addr, nil) == nil {
			return errors.New("node still answers")
		}
		return nil
	})
}

func (n *containerNode) pause(ctx context.Context) error  { return n.signal(ctx, "STOP") }
func (n *containerNode) resume(ctx context.Context) error { return n.signal(ctx, "CONT") }
func (n *containerNode) close(context.Context) error      { return nil }

func (n *containerNode) logTail(ctx context.Context, lines int) string {
	out, err := n.exec(ctx, fmt.Sprintf("tail -n %d %s/redis.log", lines, n.dir))
	if err != nil {
		return fmt.Sprintf("(no node log: %v)", err)
	}
	return out
}

// joinCluster makes the nodes at addrs one cluster: each takes an equal range of the
// slots and a config epoch of its own, the first meets the others, and it returns when
// every node reports cluster_state:ok and knows them all.
func joinCluster(ctx context.Context, addrs []string) error {
	clients := make([]*goredis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = goredis.NewClient(&goredis.Options{Addr: a})
		defer clients[i].Close()
	}
	per := 16384 / len(addrs)
	for i, c := range clients {
		lo, hi := i*per, (i+1)*per-1
		if i == len(addrs)-1 {
			hi = 16383
		}
		if err := c.Do(ctx, "cluster", "addslotsrange", lo, hi).Err(); err != nil {
			return fmt.Errorf("node %s: cluster addslotsrange %d %d: %w", addrs[i], lo, hi, err)
		}
		if err := c.Do(ctx, "cluster", "set-config-epoch", i+1).Err(); err != nil {
			return fmt.Errorf("node %s: cluster set-config-epoch: %w", addrs[i], err)
		}
	}
	for _, a := range addrs[1:] {
		host, port, _ := net.SplitHostPort(a)
		if err := clients[0].Do(ctx, "cluster", "meet", host, port).Err(); err != nil {
			return fmt.Errorf("node %s: cluster meet %s: %w", addrs[0], a, err)
		}
	}
	known := fmt.Sprintf("cluster_known_nodes:%d", len(addrs))
	for i, c := range clients {
		err := poll(ctx, 50*time.Millisecond, func(ctx context.Context) error {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, known) {
				return fmt.Errorf("node %s: cluster not ok yet", addrs[i])
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
