package integration

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// StartEtcd starts a single-member etcd server for t, running until t's cleanup, and
// returns when it answers a Get. User/password auth needs nothing from the server: enable
// it through the client (UserAdd, RoleGrant, AuthEnable). Option: WithTLS (the server then
// accepts TLS only, with client certificates).
//
// Local mode embeds go.etcd.io/etcd/server/v3 (the client's version) behind a loopback
// proxy that holds the address; every Start runs a fresh embedded server on the same data
// directory. Docker mode uses BULWARK_IT_IMAGE_ETCD (default DefaultEtcdImage); the Debian
// image of .ci/image.sh has etcd 3.4.23.
//
// The member's advertised client URL is not Addr (the embedded server sits behind a
// proxy, a container advertises its inside port): do not let the client sync its
// endpoints from the member list (leave clientv3.Config.AutoSyncInterval zero).
func StartEtcd(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := buildOptions(t, opts)
	if len(o.redisArgs) > 0 {
		t.Fatal("StartEtcd: WithRedisArgs is not supported")
	}
	image := envOr(EnvImageEtcd, DefaultEtcdImage)
	mode := chooseMode(t, image)

	var clientTLS *tls.Config
	if o.tls {
		clientTLS = o.certs.ClientConfig()
	}
	ready := func(ctx context.Context, addr string) error { return etcdReady(ctx, addr, clientTLS) }

	if mode == ModeDocker {
		scheme := "http"
		args := []string{"etcd", "--name", "default", "--data-dir", "/tmp/etcd-data"}
		var files []testcontainers.ContainerFile
		if o.tls {
			scheme = "https"
			args = append(args, "--cert-file", "/tmp/bulwark-certs/server.pem", "--key-file", "/tmp/bulwark-certs/server-key.pem",
				"--trusted-ca-file", "/tmp/bulwark-certs/ca.pem", "--client-cert-auth")
			files = certFiles(o.certs, "/tmp/bulwark-certs")
		}
		args = append(args, "--listen-client-urls", scheme+"://0.0.0.0:2379", "--advertise-client-urls", scheme+"://127.0.0.1:2379")
		// No shell: the official image is distroless. Both images have etcd in PATH.
		spec := containerSpec{
			kind: "etcd", image: image, imageEnv: EnvImageEtcd, port: 2379,
			entrypoint: args, files: files, ready: ready,
		}
		b, addr := startContainer(t, spec)
		return newServer(t, "etcd", ModeDocker, addr, clientTLS, b)
	}

	dir := t.TempDir()
	b := &embedBackend{dir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "etcd.log"), certs: o.certs, proxy: newProxy(), ready: ready}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := b.start(ctx); err != nil {
		failStart(t, "etcd", b, err)
	}
	return newServer(t, "etcd", ModeLocal, b.proxy.addr(0), clientTLS, b)
}

// etcdReady proves that the server serves: a linearizable Get succeeds.
func etcdReady(ctx context.Context, addr string, tlsConf *tls.Config) error {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		TLS:         tlsConf,
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Get(ctx, "bulwark-integration-readiness-probe")
	// Auth enabled by the test: the server answers, so it serves.
	if errors.Is(err, rpctypes.ErrUserEmpty) || errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrInvalidAuthToken) {
		return nil
	}
	return err
}

// embedBackend runs etcd in process behind a proxy.
type embedBackend struct {
	dir     string
	logPath string
	certs   *Certs
	proxy   *proxy
	ready   func(ctx context.Context, addr string) error

	e    *embed.Etcd
	logf *os.File
}

func (b *embedBackend) start(ctx context.Context) error {
	logf, err := os.OpenFile(b.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	enc := zap.NewDevelopmentEncoderConfig()
	lg := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(logf), zap.InfoLevel))

	cfg := embed.NewConfig()
	cfg.Name = "default"
	cfg.Dir = b.dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	scheme := "http"
	if b.certs != nil {
		scheme = "https"
		cfg.ClientTLSInfo.CertFile = b.certs.ServerCertFile
		cfg.ClientTLSInfo.KeyFile = b.certs.ServerKeyFile
		cfg.ClientTLSInfo.TrustedCAFile = b.certs.CAFile
		cfg.ClientTLSInfo.ClientCertAuth = true
	}
	// Port 0 for both: the peer default (2380) collides between test binaries. The proxy
	// keeps the client address stable across restarts.
	curl := url.URL{Scheme: scheme, Host: "127.0.0.1:0"}
	purl := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{curl}, []url.URL{curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{purl}, []url.URL{purl}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		logf.Close()
		return fmt.Errorf("embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		logf.Close()
		return fmt.Errorf("embedded etcd: %w", err)
	case <-ctx.Done():
		e.Close()
		logf.Close()
		return fmt.Errorf("embedded etcd not ready: %w", ctx.Err())
	}
	b.e, b.logf = e, logf
	if err := b.proxy.listen(e.Clients[0].Addr().String()); err != nil {
		b.closeEtcd()
		return err
	}
	if err := poll(ctx, 50*time.Millisecond, func(ctx context.Context) error { return b.ready(ctx, b.proxy.addr(0)) }); err != nil {
		_ = b.proxy.stop(ctx)
		b.closeEtcd()
		return err
	}
	return nil
}

func (b *embedBackend) closeEtcd() {
	if b.e != nil {
		b.e.Close()
		b.e = nil
	}
	if b.logf != nil {
		b.logf.Close()
		b.logf = nil
	}
}

func (b *embedBackend) stop(ctx context.Context) error {
	err := b.proxy.stop(ctx)
	b.closeEtcd()
	return err
}

func (b *embedBackend) pause(context.Context) error  { b.proxy.pause(); return nil }
func (b *embedBackend) resume(context.Context) error { b.proxy.resume(); return nil }
func (b *embedBackend) close(ctx context.Context) error {
	return b.stop(ctx)
}

func (b *embedBackend) logTail(_ context.Context, lines int) string {
	data, err := os.ReadFile(b.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tailLines(string(data), lines)
}
