package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
	goredis "github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/etcd"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/datasource/zookeeper"
)

// endpoint is one document of a config center: every backend's Source is a
// Source, a Sink and a Watcher.
type endpoint interface {
	datasource.Source
	datasource.Sink
	datasource.Watcher
}

// center is a rule document in a config center (or a file), and its history
// document beside it, over one client.
type center struct {
	display   string // the source as the user wrote it, without credentials
	name      string // the key, path or dataId: a hint of the kind
	doc, hist endpoint
	histName  string        // where the history lives, for messages
	reconcile time.Duration // how often watch reads anyway
	// confirmMissing: a document read as missing is read again after this
	// long before it counts as missing (0: never).
	confirmMissing time.Duration
	timeout        time.Duration
	closeFn        func()
	// baseDisplay is the base document's display of an overlay's center
	// (see overlayOf); "" for a base.
	baseDisplay string
}

// closeWait bounds Close. A client whose server stopped answering may take
// seconds to close (the Nacos SDK, a ZooKeeper connection without a
// session); the command has its answer by then and the process is about to
// exit, which ends whatever is still closing.
const closeWait = 500 * time.Millisecond

func (c *center) Close() {
	closeBounded(func() {
		_ = c.doc.Close()
		_ = c.hist.Close()
		if c.closeFn != nil {
			c.closeFn()
		}
	})
}

// closeBounded runs fn and waits for it at most closeWait.
func closeBounded(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}

var schemes = []string{"file", "etcd", "redis", "zk", "zookeeper", "nacos"}

// isURL says whether arg names a config center rather than a file path.
func isURL(arg string) bool {
	scheme, _, ok := strings.Cut(arg, "://")
	if !ok {
		return false
	}
	for _, s := range schemes {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// openCenter connects to the source named by raw. It fails with exit code 2
// for a malformed source and 4 when the center cannot be reached within the
// timeout.
func openCenter(ctx context.Context, raw string, o *options) (*center, error) {
	c, err := dial(ctx, raw, o)
	if err != nil {
		return nil, err
	}
	c.timeout = o.timeout
	return c, nil
}

func dial(ctx context.Context, raw string, o *options) (*center, error) {
	if !isURL(raw) {
		if strings.Contains(raw, "://") {
			return nil, failf(exitUsage, "unknown source scheme in %q: want a path, file://, etcd://, redis://, zk:// or nacos://", raw)
		}
		return openFile(raw, raw), nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, failf(exitUsage, "bad source %q: %v", redact(raw), err)
	}
	if u.User != nil {
		return nil, failf(exitUsage, "source %s: credentials do not go in the URL (it is printed); use --user/--password or BULWARK_USER/BULWARK_PASSWORD", u.Scheme+"://"+u.Host+u.Path)
	}
	display := u.Scheme + "://" + u.Host + u.Path
	if u.RawQuery != "" {
		display += "?" + u.RawQuery
	}
	hosts := strings.Split(u.Host, ",")
	key := u.Path
	if strings.ToLower(u.Scheme) != "file" && (u.Host == "" || strings.Trim(key, "/") == "") {
		return nil, failf(exitUsage, "source %s: want %s://HOST:PORT/KEY", display, u.Scheme)
	}
	tlsCfg, err := tlsConfig(o)
	if err != nil {
		return nil, fail(exitUsage, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		path := u.Path
		if u.Host != "" && u.Host != "localhost" { // file://rules.json: a relative path
			path = u.Host + u.Path
		}
		return openFile(path, display), nil
	case "etcd":
		return openEtcd(ctx, hosts, key, display, o, tlsCfg)
	case "redis":
		return openRedis(hosts, strings.TrimPrefix(key, "/"), u.Query(), display, o, tlsCfg)
	case "zk", "zookeeper":
		return openZooKeeper(ctx, hosts, key, display, o, tlsCfg)
	default:
		return openNacos(hosts, strings.TrimPrefix(key, "/"), u.Query(), display, o, tlsCfg)
	}
}

// historySuffix names the history document beside a document.
const historySuffix = ".history"

func openFile(path, display string) *center {
	return &center{display: display, name: filepath.Base(path), doc: file.New(path), hist: file.New(path + historySuffix),
		histName: path + historySuffix, reconcile: 30 * time.Second}
}

func openEtcd(ctx context.Context, hosts []string, key, display string, o *options, tlsCfg *tls.Config) (*center, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   hosts,
		DialTimeout: o.timeout,
		Username:    o.user,
		Password:    o.password,
		TLS:         tlsCfg,
		Logger:      zap.NewNop(),
		Context:     ctx,
	})
	if err != nil {
		return nil, fail(exitUnreachable, fmt.Errorf("%s: %w", display, err))
	}
	return &center{display: display, name: key, doc: etcd.New(cli, key), hist: etcd.New(cli, key+historySuffix),
		histName: key + historySuffix, reconcile: 30 * time.Second, closeFn: func() { _ = cli.Close() }}, nil
}

func openRedis(hosts []string, key string, q url.Values, display string, o *options, tlsCfg *tls.Config) (*center, error) {
	db := 0
	if s := q.Get("db"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, failf(exitUsage, "source %s: db must be a number >= 0", display)
		}
		db = n
	}
	channel := q.Get("channel")
	if channel == "" {
		channel = key + ":changed"
	}
	cli := goredis.NewUniversalClient(&goredis.UniversalOptions{
		Addrs: hosts, DB: db, Username: o.user, Password: o.password, TLSConfig: tlsCfg,
		DialTimeout: o.timeout, ReadTimeout: o.timeout, WriteTimeout: o.timeout, MaxRetries: -1,
	})
	hk := key + ":history"
	return &center{display: display, name: key,
		doc:  redis.New(cli, key, channel, redis.WithServers(hosts...)),
		hist: redis.New(cli, hk, hk+":changed", redis.WithServers(hosts...)), histName: hk,
		reconcile: 30 * time.Second, closeFn: func() { _ = cli.Close() }}, nil
}

func openZooKeeper(ctx context.Context, hosts []string, path, display string, o *options, tlsCfg *tls.Config) (*center, error) {
	if tlsCfg != nil {
		return nil, failf(exitUsage, "source %s: TLS to ZooKeeper is not supported by this tool", display)
	}
	conn, _, err := zk.Connect(hosts, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietZK{}))
	if err != nil {
		return nil, fail(exitUnreachable, fmt.Errorf("%s: %w", display, err))
	}
	if o.user != "" {
		if err := conn.AddAuth("digest", []byte(o.user+":"+o.password)); err != nil {
			closeBounded(conn.Close)
			return nil, fail(exitUnreachable, fmt.Errorf("%s: digest auth: %w", display, err))
		}
	}
	// zk.Connect connects in the background; the Source fails at once while
	// there is no session, so wait for one, within the timeout.
	wait, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for conn.State() != zk.StateHasSession {
		select {
		case <-wait.Done():
			closeBounded(conn.Close)
			return nil, fail(exitUnreachable, fmt.Errorf("%s: no ZooKeeper session within %v (state %s)", display, o.timeout, conn.State()))
		case <-tick.C:
		}
	}
	return &center{display: display, name: path,
		doc:  zookeeper.New(conn, path, zookeeper.WithServers(hosts...)),
		hist: zookeeper.New(conn, path+historySuffix, zookeeper.WithServers(hosts...)), histName: path + historySuffix,
		reconcile: 30 * time.Second, closeFn: conn.Close}, nil
}

type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

func openNacos(hosts []string, dataID string, q url.Values, display string, o *options, tlsCfg *tls.Config) (*center, error) {
	group := q.Get("group")
	if group == "" {
		group = "DEFAULT_GROUP"
	}
	servers := make([]constant.ServerConfig, 0, len(hosts))
	for _, h := range hosts {
		host, portStr, err := net.SplitHostPort(h)
		if err != nil {
			return nil, failf(exitUsage, "source %s: server %q: want HOST:PORT", display, h)
		}
		port, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil {
			return nil, failf(exitUsage, "source %s: bad port in %q", display, h)
		}
		servers = append(servers, *constant.NewServerConfig(host, port))
	}
	work, err := os.MkdirTemp("", "bulwark-nacos-")
	if err != nil {
		return nil, err
	}
	copts := []constant.ClientOption{
		constant.WithNamespaceId(q.Get("namespace")),
		constant.WithTimeoutMs(uint64(max(o.timeout, 100*time.Millisecond).Milliseconds())),
		constant.WithNotLoadCacheAtStart(true),
		constant.WithDisableUseSnapShot(true),
		constant.WithCacheDir(filepath.Join(work, "cache")),
		constant.WithLogDir(filepath.Join(work, "log")),
		constant.WithLogLevel("error"),
		constant.WithUsername(o.user),
		constant.WithPassword(o.password),
	}
	if tlsCfg != nil {
		copts = append(copts, constant.WithTLS(constant.TLSConfig{Appointed: true, Enable: true, CaFile: o.caFile, CertFile: o.certFile, KeyFile: o.keyFile}))
	}
	cli, err := clients.NewConfigClient(vo.NacosClientParam{ClientConfig: constant.NewClientConfig(copts...), ServerConfigs: servers})
	if err != nil {
		_ = os.RemoveAll(work)
		return nil, fail(exitUnreachable, fmt.Errorf("%s: %w", display, err))
	}
	return &center{display: display, name: dataID,
		doc:  nacos.New(cli, dataID, group),
		hist: nacos.New(cli, dataID+historySuffix, group), histName: group + "/" + dataID + historySuffix,
		reconcile: nacos.ReconcileInterval, confirmMissing: 1200 * time.Millisecond,
		closeFn: func() { cli.CloseClient(); _ = os.RemoveAll(work) }}, nil
}

func tlsConfig(o *options) (*tls.Config, error) {
	if !o.tls && o.caFile == "" && o.certFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", o.caFile)
		}
	}
	if o.certFile != "" || o.keyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// redact drops what could be credentials from a source that did not parse.
func redact(raw string) string {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			return scheme + "://…@" + rest[at+1:]
		}
	}
	return raw
}

// read reads the document within the timeout; an error is exit code 4.
func (c *center) read(ctx context.Context) (datasource.Snapshot, error) {
	return c.readFrom(ctx, c.doc, c.display)
}

func (c *center) readFrom(ctx context.Context, ep endpoint, what string) (datasource.Snapshot, error) {
	snap, err := c.readOnce(ctx, ep, what)
	if err != nil || !snap.Missing || c.confirmMissing == 0 {
		return snap, err
	}
	// A Nacos-protocol server may answer "missing" for a moment after a
	// publish (PolarisMesh swapping a release; see package nacos): a
	// document is missing when a second read says so too.
	select {
	case <-ctx.Done():
		return snap, fail(exitUnreachable, fmt.Errorf("read %s: %w", what, ctx.Err()))
	case <-time.After(c.confirmMissing):
	}
	return c.readOnce(ctx, ep, what)
}

func (c *center) readOnce(ctx context.Context, ep endpoint, what string) (datasource.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	snap, err := ep.Read(ctx)
	if err != nil {
		return snap, fail(exitUnreachable, fmt.Errorf("read %s: %w", what, c.cause(ctx, err)))
	}
	return snap, nil
}

// write stores data if the document is still at revision; ErrConflict is
// exit code 3, any other error 4.
func (c *center) write(ctx context.Context, ep endpoint, data []byte, revision, what string) (datasource.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	snap, err := ep.Write(ctx, data, revision)
	switch {
	case errors.Is(err, datasource.ErrConflict):
		return snap, fail(exitConflict, err)
	case err != nil:
		return snap, fail(exitUnreachable, fmt.Errorf("write %s: %w", what, c.cause(ctx, err)))
	}
	return snap, nil
}

// cause says "no answer within 5s" rather than "context deadline exceeded".
func (c *center) cause(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v (--timeout): %w", c.timeout, err)
	}
	return err
}

// revisionOf shows a revision, or "none" when the document does not exist.
func revisionOf(s datasource.Snapshot) string {
	if s.Missing {
		return "none"
	}
	return s.Revision
}

// header names a document read and its revision, for a diff.
func header(display string, s datasource.Snapshot) string {
	if s.Missing {
		return display + " (does not exist)"
	}
	return display + " (revision " + s.Revision + ")"
}
