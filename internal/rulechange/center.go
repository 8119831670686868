package rulechange

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	consulapi "github.com/hashicorp/consul/api"
	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
	goredis "github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/consul"
	"github.com/bulwark-go/bulwark/datasource/etcd"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/datasource/zookeeper"
	"github.com/bulwark-go/bulwark/internal/statedir"
)

// Options say how to connect to a config center. The zero value connects
// without credentials nor TLS, with DefaultTimeout.
type Options struct {
	// Timeout bounds each request (and dialling); 0 is DefaultTimeout.
	Timeout time.Duration
	// User and Password sign in (etcd, Redis ACL, Nacos; ZooKeeper digest;
	// Consul: Password is the ACL token).
	User, Password string
	// TLS connects with TLS (etcd, Redis, Nacos); set also by CAFile or
	// CertFile.
	TLS bool
	// CAFile is a PEM file of the CA that signed the server's certificate;
	// CertFile and KeyFile a PEM client certificate and key.
	CAFile, CertFile, KeyFile string
	// Logger receives the config center clients' own log lines; nil
	// discards them.
	Logger *slog.Logger
}

// DefaultTimeout is the Timeout of Options that give none.
const DefaultTimeout = 5 * time.Second

// Endpoint is one document of a config center: every backend's Source is a
// Source, a Sink and a Watcher.
type Endpoint interface {
	datasource.Source
	datasource.Sink
	datasource.Watcher
}

// Center is a rule document in a config center (or a file), and its history
// document beside it, over one client.
type Center struct {
	display   string // the source as the user wrote it, without credentials
	name      string // the key, path or dataId: a hint of the kind
	doc, hist Endpoint
	histName  string        // where the history lives, for messages
	reconcile time.Duration // how often a follower reads anyway
	// confirmMissing: a document read as missing is read again after this
	// long before it counts as missing (0: never).
	confirmMissing time.Duration
	timeout        time.Duration
	closeFn        func()
	// base is the base document's center of an overlay's center (see
	// Overlay); nil for a base.
	base  *Center
	group string
}

// Display is the source as given, without credentials: what messages name.
func (c *Center) Display() string { return c.display }

// Name is the document's key, path or dataId: a hint of its kind.
func (c *Center) Name() string { return c.name }

// HistoryName says where the history of the document lives.
func (c *Center) HistoryName() string { return c.histName }

// Document is the document's endpoint, for a follower (datasource.NewReadable).
func (c *Center) Document() Endpoint { return c.doc }

// Reconcile is how often a follower should read the document even without a
// push (datasource.WithReconcileInterval).
func (c *Center) Reconcile() time.Duration { return c.reconcile }

// closeWait bounds Close. A client whose server stopped answering may take
// seconds to close (the Nacos SDK, a ZooKeeper connection without a
// session); the caller has its answer by then.
const closeWait = 500 * time.Millisecond

// Close closes the client (an overlay's center: its Source only), waiting
// for it at most half a second.
func (c *Center) Close() error {
	closeBounded(func() {
		_ = c.doc.Close()
		if c.base != nil {
			return
		}
		_ = c.hist.Close()
		if c.closeFn != nil {
			c.closeFn()
		}
	})
	return nil
}

// closeBounded runs fn and waits for it at most closeWait.
func closeBounded(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

var schemes = []string{"file", "etcd", "redis", "zk", "zookeeper", "nacos", "consul"}

// IsURL says whether arg names a config center rather than a file path.
func IsURL(arg string) bool {
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

// Open connects to the document named by raw: a path or file:///path,
// etcd://host:2379/key, redis://host:6379/key (?channel=, default key +
// ":changed"; ?db=), zk://host:2181/path, nacos://host:8848/dataId
// (?group=, default DEFAULT_GROUP; ?namespace=), consul://host:8500/key
// (?dc=, ?ns=; one agent, the ACL token is o.Password, else
// CONSUL_HTTP_TOKEN); several servers separated by commas. Credentials go in o, never in the URL. A malformed source is
// ErrArgument, a center that cannot be reached within the timeout
// ErrUnreachable.
func Open(ctx context.Context, raw string, o Options) (*Center, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	c, err := dial(ctx, raw, &o)
	if err != nil {
		return nil, err
	}
	c.timeout = o.Timeout
	return c, nil
}

func dial(ctx context.Context, raw string, o *Options) (*Center, error) {
	if !IsURL(raw) {
		if strings.Contains(raw, "://") {
			return nil, classf(ErrArgument, "unknown source scheme in %q: want a path, file://, etcd://, redis://, zk://, nacos:// or consul://", redact(raw))
		}
		return openFile(raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, classf(ErrArgument, "bad source %q: %v", redact(raw), errors.Unwrap(err))
	}
	if u.User != nil {
		return nil, classf(ErrArgument, "source %s: credentials do not go in the URL (it is printed); use --user/--password or BULWARK_USER/BULWARK_PASSWORD", u.Scheme+"://"+u.Host+u.Path)
	}
	display := u.Scheme + "://" + u.Host + u.Path
	if u.RawQuery != "" {
		display += "?" + u.RawQuery
	}
	hosts := strings.Split(u.Host, ",")
	key := u.Path
	if strings.ToLower(u.Scheme) != "file" && (u.Host == "" || strings.Trim(key, "/") == "") {
		return nil, classf(ErrArgument, "source %s: want %s://HOST:PORT/KEY", display, u.Scheme)
	}
	tlsCfg, err := tlsConfig(o)
	if err != nil {
		return nil, class(ErrArgument, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		path := u.Path
		if u.Host != "" && u.Host != "localhost" { // file://rules.json: a relative path
			path = u.Host + u.Path
		}
		return openFile(path, display)
	case "etcd":
		return openEtcd(ctx, hosts, key, display, o, tlsCfg)
	case "redis":
		return openRedis(hosts, strings.TrimPrefix(key, "/"), u.Query(), display, o, tlsCfg)
	case "zk", "zookeeper":
		return openZooKeeper(ctx, hosts, key, display, o, tlsCfg)
	case "consul":
		return openConsul(hosts, strings.TrimPrefix(key, "/"), u.Query(), display, o, tlsCfg)
	default:
		return openNacos(hosts, strings.TrimPrefix(key, "/"), u.Query(), display, o, tlsCfg)
	}
}

// historySuffix names the history document beside a document.
const historySuffix = ".history"

// openFile opens the document at path, and its history in the state
// directory beside it (internal/statedir: .bulwark/NAME.history, ignored by
// git). A history an older release kept beside the document
// (NAME.history) is moved there.
func openFile(path, display string) (*Center, error) {
	dir, base := filepath.Split(path)
	hist := filepath.Join(dir, ".bulwark", base+historySuffix)
	if _, err := os.Stat(hist); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(path + historySuffix); err == nil {
			if _, err := statedir.Dir(dir); err != nil {
				return nil, class(ErrUnreachable, fmt.Errorf("%s: %w", display, err))
			}
			if err := os.Rename(path+historySuffix, hist); err != nil {
				return nil, class(ErrUnreachable, fmt.Errorf("%s: move the history to %s: %w", display, hist, err))
			}
		}
	}
	return &Center{display: display, name: base, doc: file.New(path), hist: file.New(hist),
		histName: hist, reconcile: 30 * time.Second}, nil
}

func openEtcd(ctx context.Context, hosts []string, key, display string, o *Options, tlsCfg *tls.Config) (*Center, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   hosts,
		DialTimeout: o.Timeout,
		Username:    o.User,
		Password:    o.Password,
		TLS:         tlsCfg,
		Logger:      zapTo(o.Logger),
		Context:     ctx,
	})
	if err != nil {
		return nil, class(ErrUnreachable, fmt.Errorf("%s: %w", display, err))
	}
	return &Center{display: display, name: key, doc: etcd.New(cli, key), hist: etcd.New(cli, key+historySuffix),
		histName: key + historySuffix, reconcile: 30 * time.Second, closeFn: func() { _ = cli.Close() }}, nil
}

func openRedis(hosts []string, key string, q url.Values, display string, o *Options, tlsCfg *tls.Config) (*Center, error) {
	db := 0
	if s := q.Get("db"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, classf(ErrArgument, "source %s: db must be a number >= 0", display)
		}
		db = n
	}
	channel := q.Get("channel")
	if channel == "" {
		channel = key + ":changed"
	}
	routeGlobal("redis", o.Logger)
	cli := goredis.NewUniversalClient(&goredis.UniversalOptions{
		Addrs: hosts, DB: db, Username: o.User, Password: o.Password, TLSConfig: tlsCfg,
		DialTimeout: o.Timeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout, MaxRetries: -1,
	})
	hk := key + ":history"
	return &Center{display: display, name: key,
		doc:  redis.New(cli, key, channel, redis.WithServers(hosts...)),
		hist: redis.New(cli, hk, hk+":changed", redis.WithServers(hosts...)), histName: hk,
		reconcile: 30 * time.Second, closeFn: func() { _ = cli.Close() }}, nil
}

func openZooKeeper(ctx context.Context, hosts []string, path, display string, o *Options, tlsCfg *tls.Config) (*Center, error) {
	if tlsCfg != nil {
		return nil, classf(ErrArgument, "source %s: TLS to ZooKeeper is not supported by this tool", display)
	}
	conn, _, err := zk.Connect(hosts, 10*time.Second, zk.WithLogInfo(o.Logger != nil), zk.WithLogger(clientLog{logTo(o.Logger), "zookeeper"}))
	if err != nil {
		return nil, class(ErrUnreachable, fmt.Errorf("%s: %w", display, err))
	}
	if o.User != "" {
		if err := conn.AddAuth("digest", []byte(o.User+":"+o.Password)); err != nil {
			closeBounded(conn.Close)
			return nil, class(ErrUnreachable, fmt.Errorf("%s: digest auth: %w", display, err))
		}
	}
	// zk.Connect connects in the background; the Source fails at once while
	// there is no session, so wait for one, within the timeout.
	wait, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for conn.State() != zk.StateHasSession {
		select {
		case <-wait.Done():
			closeBounded(conn.Close)
			return nil, class(ErrUnreachable, fmt.Errorf("%s: no ZooKeeper session within %v (state %s)", display, o.Timeout, conn.State()))
		case <-tick.C:
		}
	}
	return &Center{display: display, name: path,
		doc:  zookeeper.New(conn, path, zookeeper.WithServers(hosts...)),
		hist: zookeeper.New(conn, path+historySuffix, zookeeper.WithServers(hosts...)), histName: path + historySuffix,
		reconcile: 30 * time.Second, closeFn: conn.Close}, nil
}

// openConsul opens a key on one Consul agent. The client starts from
// api.DefaultConfig, so the CONSUL_HTTP_* variables apply (CONSUL_HTTP_TOKEN
// when o.Password is empty); the URL's host, ?dc= and ?ns= and o's TLS win.
func openConsul(hosts []string, key string, q url.Values, display string, o *Options, tlsCfg *tls.Config) (*Center, error) {
	if len(hosts) != 1 {
		return nil, classf(ErrArgument, "source %s: name one Consul agent (it forwards to the servers)", display)
	}
	cfg := consulapi.DefaultConfig()
	cfg.Address, cfg.Scheme = hosts[0], "http"
	if dc := q.Get("dc"); dc != "" {
		cfg.Datacenter = dc
	}
	if ns := q.Get("ns"); ns != "" {
		cfg.Namespace = ns
	}
	if o.Password != "" {
		cfg.Token, cfg.TokenFile = o.Password, ""
	}
	if tlsCfg != nil {
		cfg.Scheme = "https"
		cfg.Transport.TLSClientConfig = tlsCfg
	}
	cli, err := consulapi.NewClient(cfg)
	if err != nil {
		return nil, class(ErrArgument, fmt.Errorf("%s: %w", display, err))
	}
	return &Center{display: display, name: key, doc: consul.New(cli, key), hist: consul.New(cli, key+historySuffix),
		histName: key + historySuffix, reconcile: 30 * time.Second, closeFn: cfg.Transport.CloseIdleConnections}, nil
}

func openNacos(hosts []string, dataID string, q url.Values, display string, o *Options, tlsCfg *tls.Config) (*Center, error) {
	group := q.Get("group")
	if group == "" {
		group = "DEFAULT_GROUP"
	}
	servers := make([]constant.ServerConfig, 0, len(hosts))
	for _, h := range hosts {
		host, portStr, err := net.SplitHostPort(h)
		if err != nil {
			return nil, classf(ErrArgument, "source %s: server %q: want HOST:PORT", display, h)
		}
		port, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil {
			return nil, classf(ErrArgument, "source %s: bad port in %q", display, h)
		}
		servers = append(servers, *constant.NewServerConfig(host, port))
	}
	work, err := os.MkdirTemp("", "bulwark-nacos-")
	if err != nil {
		return nil, err
	}
	copts := []constant.ClientOption{
		constant.WithNamespaceId(q.Get("namespace")),
		constant.WithTimeoutMs(uint64(max(o.Timeout, 100*time.Millisecond).Milliseconds())),
		constant.WithNotLoadCacheAtStart(true),
		constant.WithDisableUseSnapShot(true),
		constant.WithCacheDir(filepath.Join(work, "cache")),
		constant.WithLogDir(filepath.Join(work, "log")),
		constant.WithLogLevel("error"),
		constant.WithUsername(o.User),
		constant.WithPassword(o.Password),
	}
	if tlsCfg != nil {
		copts = append(copts, constant.WithTLS(constant.TLSConfig{Appointed: true, Enable: true, CaFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile}))
	}
	cli, err := clients.NewConfigClient(vo.NacosClientParam{ClientConfig: constant.NewClientConfig(copts...), ServerConfigs: servers})
	if err != nil {
		_ = os.RemoveAll(work)
		return nil, class(ErrUnreachable, fmt.Errorf("%s: %w", display, err))
	}
	routeGlobal("nacos", o.Logger) // after the client: it sets its own

	return &Center{display: display, name: dataID,
		doc:  nacos.New(cli, dataID, group),
		hist: nacos.New(cli, dataID+historySuffix, group), histName: group + "/" + dataID + historySuffix,
		reconcile: nacos.ReconcileInterval, confirmMissing: 1200 * time.Millisecond,
		closeFn: func() { cli.CloseClient(); _ = os.RemoveAll(work) }}, nil
}

func tlsConfig(o *Options) (*tls.Config, error) {
	if !o.TLS && o.CAFile == "" && o.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate in it", o.CAFile)
		}
	}
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate/key: %w", err)
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

// Read reads the document within the timeout; an error is ErrUnreachable.
func (c *Center) Read(ctx context.Context) (datasource.Snapshot, error) {
	return c.readFrom(ctx, c.doc, c.display)
}

func (c *Center) readFrom(ctx context.Context, ep Endpoint, what string) (datasource.Snapshot, error) {
	snap, err := c.readOnce(ctx, ep, what)
	if err != nil || !snap.Missing || c.confirmMissing == 0 {
		return snap, err
	}
	// A Nacos-protocol server may answer "missing" for a moment after a
	// publish (PolarisMesh swapping a release; see package nacos): a
	// document is missing when a second read says so too.
	t := time.NewTimer(c.confirmMissing)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return snap, class(ErrUnreachable, fmt.Errorf("read %s: %w", what, ctx.Err()))
	case <-t.C:
	}
	return c.readOnce(ctx, ep, what)
}

func (c *Center) readOnce(ctx context.Context, ep Endpoint, what string) (datasource.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	snap, err := ep.Read(ctx)
	if err != nil {
		return snap, class(ErrUnreachable, fmt.Errorf("read %s: %w", what, c.cause(ctx, err)))
	}
	return snap, nil
}

// write stores data if the document is still at revision: a conflict is
// datasource.ErrConflict, any other error ErrUnreachable.
func (c *Center) write(ctx context.Context, ep Endpoint, data []byte, revision, what string) (datasource.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	snap, err := ep.Write(ctx, data, revision)
	switch {
	case errors.Is(err, datasource.ErrConflict):
		return snap, err
	case err != nil:
		return snap, class(ErrUnreachable, fmt.Errorf("write %s: %w", what, c.cause(ctx, err)))
	}
	return snap, nil
}

// cause says "no answer within 5s" rather than "context deadline exceeded".
func (c *Center) cause(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v (--timeout): %w", c.timeout, err)
	}
	return err
}

// RevisionOf shows a revision, or "none" when the document does not exist.
func RevisionOf(s datasource.Snapshot) string {
	if s.Missing {
		return "none"
	}
	return s.Revision
}

// Header names a document read and its revision, for a diff.
func Header(display string, s datasource.Snapshot) string {
	if s.Missing {
		return display + " (does not exist)"
	}
	return display + " (revision " + s.Revision + ")"
}
