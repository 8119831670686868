package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// EnvImageNacos names the docker image for the Nacos-protocol server.
const EnvImageNacos = "BULWARK_IT_IMAGE_NACOS"

// DefaultNacosImage is the official Nacos server image, run in standalone mode.
const DefaultNacosImage = "nacos/nacos-server:v2.4.3"

// PolarisImage is the local image .ci/polaris.sh builds: PolarisMesh (see PolarisVersion)
// with the harness' configuration, listening like the official image on 8848 and 9848.
const PolarisImage = "bulwark-nacos:polaris-v1.18.1-casfix"

// NacosGRPCPortOffset is what the Nacos SDKs add to the HTTP port to dial gRPC. A Nacos
// server's Addr is its HTTP address; its gRPC port is the HTTP port plus this offset, in
// every mode.
const NacosGRPCPortOffset = 1000

// NacosGRPCAddr returns the gRPC address that the Nacos SDKs dial for the server at HTTP
// address httpAddr: the same host, the port plus [NacosGRPCPortOffset].
func NacosGRPCAddr(httpAddr string) (string, error) {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "", fmt.Errorf("nacos address: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("bad port in %q: %w", httpAddr, err)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+NacosGRPCPortOffset)), nil
}

// StartNacos starts a server speaking the Nacos config protocol (v1 HTTP on Addr, v2 gRPC on
// Addr's port + NacosGRPCPortOffset) for t, running until t's cleanup, and returns when it
// serves. No options apply to it yet.
//
// Docker mode runs BULWARK_IT_IMAGE_NACOS (default DefaultNacosImage, the official server
// in standalone mode; CI uses PolarisImage), both ports published on 127.0.0.1. Local mode
// runs PolarisMesh PolarisVersion from BULWARK_POLARIS_BIN or DefaultPolarisBin (built from
// internal/integration/tools/polaris when missing; .ci/polaris.sh builds it ahead). Polaris opens a
// UDP socket on 0.0.0.0 that cannot be turned off, so in local mode it runs in a private
// network namespace (which needs root) behind a loopback forwarder, or directly when the
// whole test already runs in a loopback-only namespace (unshare -n).
//
// Stop kills the server (SIGKILL); Start brings it back on the same ports with its data
// (Polaris keeps it in a boltdb file). Pause and Resume freeze it (SIGSTOP, docker pause).
//
// Polaris maps the Nacos namespace "" or "public" to its own "default"; configs published
// through the SDK are readable after about a second (it is eventually consistent).
func StartNacos(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := buildOptions(t, opts)
	if o.tls || len(o.redisArgs) > 0 {
		t.Fatal("StartNacos: WithTLS and WithRedisArgs are not supported")
	}
	image := envOr(EnvImageNacos, DefaultNacosImage)
	if chooseMode(t, image) == ModeDocker {
		return startNacosDocker(t, image)
	}
	return startNacosLocal(t)
}

// nacosReady reports whether the Nacos server at addr serves: the v1 HTTP API answers a
// config query (404 for a missing config, with a JSON body on Polaris) and the gRPC port
// accepts connections.
func nacosReady(ctx context.Context, addr string) error {
	url := "http://" + addr + "/nacos/v1/cs/configs?dataId=bulwark-probe&group=bulwark-probe"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := nacosProbeClient.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusNotFound, http.StatusForbidden:
		// 403: the official server with authentication on; it serves.
	default:
		return fmt.Errorf("config query answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	grpcAddr, err := NacosGRPCAddr(addr)
	if err != nil {
		return err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", grpcAddr)
	if err != nil {
		return fmt.Errorf("grpc port: %w", err)
	}
	return c.Close()
}

// nacosProbeClient makes every probe on a new connection, so that probes never reuse a
// connection a stop has broken, and never go through an HTTP proxy from the environment.
var nacosProbeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// nacosContainer is a Nacos-protocol server in a container: both ports published on fixed
// loopback ports.
type nacosContainer struct {
	*containerBackend
}

func startNacosDocker(t testing.TB, image string) *Server {
	t.Helper()
	cli, err := dockerClient()
	if err != nil {
		unavailable(t, "nacos in docker mode: %v; start a Docker daemon or set %s=local", err, EnvMode)
	}
	port, err := freePortPair()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	httpPort := network.MustParsePort("8848/tcp")
	grpcPort := network.MustParsePort("9848/tcp")
	loopback := netip.MustParseAddr("127.0.0.1")

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        image,
			ExposedPorts: []string{httpPort.String(), grpcPort.String()},
			// For the official image; the Polaris image ignores them.
			Env: map[string]string{
				"MODE":              "standalone",
				"NACOS_AUTH_ENABLE": "false",
				"JVM_XMS":           "256m",
				"JVM_XMX":           "512m",
				"JVM_XMN":           "128m",
			},
			Labels: map[string]string{
				"org.bulwark-go.integration":     "nacos",
				"org.bulwark-go.integration.pid": strconv.Itoa(os.Getpid()),
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				// Fixed loopback ports: the address survives stop and start, and the
				// gRPC port stays at the HTTP port + 1000 as the SDK expects.
				hc.PortBindings = network.PortMap{
					httpPort: {{HostIP: loopback, HostPort: strconv.Itoa(port)}},
					grpcPort: {{HostIP: loopback, HostPort: strconv.Itoa(port + NacosGRPCPortOffset)}},
				}
			},
		},
		Started: true,
		Logger:  tclog.TestLogger(t),
	}
	spec := containerSpec{kind: "nacos", image: image, imageEnv: EnvImageNacos, port: 8848, ready: nacosReady}
	present := dockerImagePresent(image)
	ctr, err := testcontainers.GenericContainer(ctx, req)
	c, _ := ctr.(*testcontainers.DockerContainer)
	if err != nil {
		if c != nil {
			failStart(t, "nacos", nacosContainer{&containerBackend{spec: spec, addr: addr, cli: cli, c: c}}, err)
		}
		if !present {
			unavailable(t, "nacos in docker mode: image %s is not present and could not be pulled: %v; "+
				"build a local image with .ci/polaris.sh and set %s=%s, or set %s=local",
				image, err, EnvImageNacos, PolarisImage, EnvMode)
		}
		t.Fatalf("start nacos container from %s: %v", image, err)
	}
	b := nacosContainer{&containerBackend{spec: spec, addr: addr, cli: cli, c: c}}
	if err := b.waitReady(ctx); err != nil {
		failStart(t, "nacos", b, err)
	}
	return newServer(t, "nacos", ModeDocker, addr, nil, b)
}

// logTail adds Polaris' Nacos API server log, when the image is Polaris, to the container's
// output.
func (b nacosContainer) logTail(ctx context.Context, lines int) string {
	out := b.containerBackend.logTail(ctx, lines/2)
	rc, err := b.c.CopyFileFromContainer(ctx, "/var/lib/polaris/log/nacos-apiserver.log")
	if err != nil {
		return out
	}
	defer rc.Close()
	data, _ := io.ReadAll(rc)
	return out + "\n--- log/nacos-apiserver.log\n" + tailLines(string(data), lines/2)
}
