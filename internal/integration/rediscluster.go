package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisCluster is a Redis Cluster of three masters (no replicas), each a local
// redis-server process, for t's lifetime.
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

// StartRedisCluster starts three redis-server processes with --cluster-enabled yes,
// joins them with redis-cli --cluster create (the 16384 slots split three ways) and
// returns when every node reports cluster_state:ok. Writes are not fsynced (appendonly
// no): the cluster is for tests of sharded keys, not of crashes.
//
// It runs local processes in every mode (there is no container image for it yet):
// redis-server and redis-cli from PATH (Debian packages redis-server and
// redis-tools), or BULWARK_IT_REDIS_SERVER and the redis-cli beside it. Options:
// WithRedisArgs, passed to every node.
func StartRedisCluster(t testing.TB, opts ...Option) *RedisCluster {
	t.Helper()
	o := buildOptions(t, opts)
	bin := os.Getenv("BULWARK_IT_REDIS_SERVER")
	if bin == "" {
		bin, _ = exec.LookPath("redis-server")
	}
	cli := filepath.Join(filepath.Dir(bin), "redis-cli")
	if bin == "" {
		unavailable(t, "redis cluster: redis-server not found in PATH; install it (apt-get install -y redis-server)")
	}
	if _, err := os.Stat(cli); err != nil {
		unavailable(t, "redis cluster: no redis-cli beside %s; install it (apt-get install -y redis-tools)", bin)
	}
	c := &RedisCluster{}
	for i := range 3 {
		port, err := clusterPort()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		argv := append([]string{bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "2000", "--save", "", "--appendonly", "no", "--dir", dir},
			o.redisArgs...)
		p := &process{name: fmt.Sprintf("redis-server (cluster node %d)", i), argv: argv, dir: dir,
			logPath: filepath.Join(dir, "redis.log")}
		ready := func(ctx context.Context, addr string) error { return redisPing(ctx, addr, nil) }
		c.Nodes = append(c.Nodes, startProcess(t, "redis", p, port, nil, ready))
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis cluster: redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, n := range c.Nodes {
		host, port, _ := net.SplitHostPort(n.Addr())
		err := poll(ctx, 50*time.Millisecond, func(ctx context.Context) error {
			out, err := exec.CommandContext(ctx, cli, "-h", host, "-p", port, "cluster", "info").Output()
			if err != nil {
				return err
			}
			if !strings.Contains(string(out), "cluster_state:ok") {
				return fmt.Errorf("node %s: cluster not ok yet", n.Addr())
			}
			return nil
		})
		if err != nil {
			t.Fatalf("redis cluster: %v", err)
		}
	}
	return c
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
