package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Consul's environment variables and defaults.
const (
	// EnvImageConsul names the docker image for Consul (default DefaultConsulImage).
	EnvImageConsul = "BULWARK_IT_IMAGE_CONSUL"
	// EnvConsulBin names the Consul binary for local mode (default DefaultConsulBin).
	EnvConsulBin = "BULWARK_CONSUL_BIN"
)

// ConsulVersion is the Consul release the harness runs, built from its Go module
// (internal/integration/tools/consul) by .ci/consul.sh: the last MPL-licensed line whose
// module the proxy serves complete.
const ConsulVersion = "v1.14.11"

// DefaultConsulImage is the local image .ci/consul.sh builds: bulwark-it:bookworm with the
// Consul binary. Nothing is pulled from a registry.
const DefaultConsulImage = "bulwark-consul:" + ConsulVersion

// DefaultConsulBin returns where .ci/consul.sh puts the Consul binary:
// $XDG_CACHE_HOME/bulwark/consul-v1.14.11 (or ~/.cache/... without XDG_CACHE_HOME).
func DefaultConsulBin() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "bulwark", "consul-"+ConsulVersion)
}

// WithConsulACL enables Consul's ACL system with default policy "deny" and token as the
// initial management token: a request without a token reads and writes nothing.
// Supported by Consul only.
func WithConsulACL(token string) Option {
	return func(o *options) { o.consulACL = token }
}

// StartConsul starts a Consul agent in dev mode (a single server, data in memory) for t,
// running until t's cleanup, and returns when its HTTP API (Addr) has a leader and answers a
// KV read. Option: WithConsulACL.
//
// Dev mode keeps nothing across Stop and Start: the server comes back empty, its Raft
// indexes start again from 1 (the index reset that Consul's blocking-query clients must
// handle). Pause and Resume freeze it (SIGSTOP, docker pause).
//
// Local mode runs BULWARK_CONSUL_BIN (default DefaultConsulBin); docker mode runs
// BULWARK_IT_IMAGE_CONSUL (default DefaultConsulImage). .ci/consul.sh builds both.
func StartConsul(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := buildOptions(t, opts)
	if o.tls || len(o.redisArgs) > 0 {
		t.Fatal("StartConsul: only WithConsulACL is supported")
	}
	image := envOr(EnvImageConsul, DefaultConsulImage)
	mode := chooseMode(t, image)
	ready := func(ctx context.Context, addr string) error { return consulReady(ctx, addr, o.consulACL) }
	hcl := `disable_update_check = true
ports { grpc_tls = -1 }`
	if o.consulACL != "" {
		hcl += fmt.Sprintf("\nacl { enabled = true default_policy = \"deny\" tokens { initial_management = %q } }", o.consulACL)
	}
	args := func(client string, http, serfLAN, serfWAN, server int) []string {
		return []string{"agent", "-dev", "-bind", "127.0.0.1", "-client", client,
			"-http-port", strconv.Itoa(http), "-dns-port", "-1", "-grpc-port", "-1",
			"-serf-lan-port", strconv.Itoa(serfLAN), "-serf-wan-port", strconv.Itoa(serfWAN),
			"-server-port", strconv.Itoa(server), "-hcl", hcl}
	}

	if mode == ModeDocker {
		spec := containerSpec{
			kind: "consul", image: image, imageEnv: EnvImageConsul, port: 8500,
			entrypoint: append([]string{"consul"}, args("0.0.0.0", 8500, 8301, 8302, 8300)...),
			ready:      ready,
		}
		b, addr := startContainer(t, spec)
		return newServer(t, "consul", ModeDocker, addr, nil, b)
	}

	bin := envOr(EnvConsulBin, DefaultConsulBin())
	if _, err := exec.LookPath(bin); err != nil {
		unavailable(t, "consul in local mode: %v; build it with .ci/consul.sh (or set %s), or set %s=docker", err, EnvConsulBin, EnvMode)
	}
	var ports [4]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	dir := t.TempDir()
	p := &process{
		name:    "consul",
		argv:    append([]string{bin}, args("127.0.0.1", ports[0], ports[1], ports[2], ports[3])...),
		dir:     dir,
		logPath: filepath.Join(dir, "consul.log"),
	}
	return startProcess(t, "consul", p, ports[0], nil, ready)
}

// consulReady proves that the agent serves KV: it has a leader, and a read of a missing key
// is answered (404). With ACLs on, the read carries the initial management token, which the
// agent installs some time after it has a leader: until then it answers 403 "ACL not found",
// and a test's first request with the token would fail the same way.
func consulReady(ctx context.Context, addr, token string) error {
	get := func(path string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("X-Consul-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, strings.TrimSpace(string(body)), err
	}
	code, leader, err := get("/v1/status/leader")
	if err != nil {
		return err
	}
	if code != http.StatusOK || leader == "" || leader == `""` {
		return fmt.Errorf("no leader yet (%d %s)", code, leader)
	}
	code, body, err := get("/v1/kv/bulwark-integration-readiness-probe")
	if err != nil {
		return err
	}
	if code == http.StatusOK || code == http.StatusNotFound {
		return nil
	}
	return fmt.Errorf("kv read answered %d %s", code, body)
}
