package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/testcontainers/testcontainers-go"
)

// StartRedis starts a Redis server for t, running until t's cleanup, and returns when it
// answers PING. It runs with --save "" --appendonly yes --appendfsync always, so what a
// client wrote survives Stop and Start. Options: WithTLS (the server then accepts TLS only,
// with client certificates), WithRedisArgs.
//
// Local mode runs redis-server (BULWARK_IT_REDIS_SERVER, else from PATH; Debian package
// redis-server); docker mode uses BULWARK_IT_IMAGE_REDIS (default DefaultRedisImage).
func StartRedis(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := buildOptions(t, opts)
	image := envOr(EnvImageRedis, DefaultRedisImage)
	mode := chooseMode(t, image)

	var clientTLS *tls.Config
	if o.tls {
		clientTLS = o.certs.ClientConfig()
		clientTLS.ServerName = "127.0.0.1"
	}
	ready := func(ctx context.Context, addr string) error { return redisPing(ctx, addr, clientTLS) }

	args := func(port int, dir, certDir string) []string {
		a := []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir}
		if mode == ModeDocker {
			a[1] = "0.0.0.0"
			a = append(a, "--protected-mode", "no")
		}
		if o.tls {
			a = append(a, "--port", "0", "--tls-port", strconv.Itoa(port),
				"--tls-cert-file", certDir+"/server.pem", "--tls-key-file", certDir+"/server-key.pem",
				"--tls-ca-cert-file", certDir+"/ca.pem", "--tls-auth-clients", "yes")
		} else {
			a = append(a, "--port", strconv.Itoa(port))
		}
		return append(a, o.redisArgs...)
	}

	if mode == ModeDocker {
		spec := containerSpec{
			kind: "redis", image: image, imageEnv: EnvImageRedis, port: 6379,
			// /tmp exists in both images; redis-server is in PATH in both.
			entrypoint: append([]string{"redis-server"}, args(6379, "/tmp", "/tmp/bulwark-certs")...),
			ready:      ready,
		}
		if o.tls {
			spec.files = certFiles(o.certs, "/tmp/bulwark-certs")
		}
		b, addr := startContainer(t, spec)
		return newServer(t, "redis", ModeDocker, addr, clientTLS, b)
	}

	bin := os.Getenv("BULWARK_IT_REDIS_SERVER")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			unavailable(t, "redis in local mode: redis-server not found in PATH; install it (apt-get install -y redis-server, or .ci/deps.sh) or set %s=docker", EnvMode)
		}
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	certDir := ""
	if o.tls {
		certDir = o.certs.Dir
	}
	p := &process{
		name:    "redis-server",
		argv:    append([]string{bin}, args(port, dir, certDir)...),
		dir:     dir,
		logPath: filepath.Join(dir, "redis.log"),
	}
	return startProcess(t, "redis", p, port, clientTLS, ready)
}

// redisPing sends PING over RESP and expects +PONG; an authentication error (ACL setups
// without a default user) also proves the server serves.
func redisPing(ctx context.Context, addr string, tlsConf *tls.Config) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if tlsConf != nil {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return fmt.Errorf("tls handshake: %w", err)
		}
		conn = tc
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read PING reply: %w", err)
	}
	line = strings.TrimSpace(line)
	if line == "+PONG" || strings.HasPrefix(line, "-NOAUTH") {
		return nil
	}
	// -LOADING: still replaying the append-only file.
	return fmt.Errorf("PING answered %q", line)
}

// startProcess runs p, a server of the given kind listening on 127.0.0.1:port, as a
// local-mode Server: it returns once ready answers for that address, or fails t.
func startProcess(t testing.TB, kind string, p *process, port int, clientTLS *tls.Config, ready func(ctx context.Context, addr string) error) *Server {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	b := &processBackend{p: p, addr: addr, ready: ready}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := b.start(ctx); err != nil {
		failStart(t, kind, b, err)
	}
	return newServer(t, kind, ModeLocal, addr, clientTLS, b)
}

// processBackend is a server run as a child process on a fixed loopback address.
type processBackend struct {
	p     *process
	addr  string
	ready func(ctx context.Context, addr string) error
}

func (b *processBackend) start(ctx context.Context) error {
	return b.p.startAndWait(ctx, func(ctx context.Context) error { return b.ready(ctx, b.addr) })
}
func (b *processBackend) stop(ctx context.Context) error  { return b.p.kill(ctx) }
func (b *processBackend) pause(ctx context.Context) error { return b.p.freeze(ctx) }
func (b *processBackend) resume(context.Context) error    { return b.p.signal(sigCont) }
func (b *processBackend) close(ctx context.Context) error {
	return b.p.kill(ctx)
}
func (b *processBackend) logTail(_ context.Context, lines int) string { return b.p.logTail(lines) }

// certFiles copies the server side of certs into a container directory.
func certFiles(c *Certs, dir string) []testcontainers.ContainerFile {
	return []testcontainers.ContainerFile{
		{HostFilePath: c.CAFile, ContainerFilePath: dir + "/ca.pem", FileMode: 0o644},
		{HostFilePath: c.ServerCertFile, ContainerFilePath: dir + "/server.pem", FileMode: 0o644},
		{HostFilePath: c.ServerKeyFile, ContainerFilePath: dir + "/server-key.pem", FileMode: 0o644},
	}
}

// buildOptions applies opts and makes certificates when TLS was asked without them.
func buildOptions(t testing.TB, opts []Option) *options {
	t.Helper()
	o := &options{}
	for _, opt := range opts {
		opt(o)
	}
	if o.tls && o.certs == nil {
		o.certs = NewCerts(t)
	}
	return o
}
