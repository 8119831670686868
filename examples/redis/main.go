// Command redis follows flow rules kept in Redis: the rules of one service
// in one environment are a Java Sentinel JSON document in a key, and
// writers announce changes on a channel (the layout of Sentinel's Java
// Redis datasource). It applies them to core.Default(), prints every rule
// change as it happens, and prints the datasource's Status when it changes.
//
//	go run ./examples/redis -addr 127.0.0.1:6379 -env prod
//	REDIS_ADDR=redis.internal:6379 REDIS_PASSWORD=... go run ./examples/redis -service order-service -env staging
//
// Change the rules from another terminal while it runs:
//
//	redis-cli SET bulwark:order-service:prod:flow '[{"resource":"GET /orders","count":20}]'
//	redis-cli PUBLISH bulwark:order-service:prod:flow:changed '[{"resource":"GET /orders","count":20}]'
//
// It exits with an error when no Redis answers within -timeout. go-redis
// logs through a process-wide logger (it logs every failed reconnect while
// the server is down); this program routes it to slog at debug level,
// shown with -v.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
)

type config struct {
	addr, user, password string
	tls                  bool
	key, channel         string
	timeout              time.Duration // to reach the server at start
	statusEvery          time.Duration // how often Status is checked for changes
	log                  *slog.Logger  // the datasource's logs
}

func main() {
	var c config
	var service, env string
	flag.StringVar(&c.addr, "addr", follow.EnvOr("REDIS_ADDR", "127.0.0.1:6379"), "Redis address host:port (env REDIS_ADDR)")
	flag.StringVar(&c.user, "user", os.Getenv("REDIS_USER"), "ACL user name (env REDIS_USER)")
	flag.StringVar(&c.password, "password", os.Getenv("REDIS_PASSWORD"), "password (env REDIS_PASSWORD)")
	flag.BoolVar(&c.tls, "tls", false, "connect with TLS (system roots)")
	flag.StringVar(&service, "service", "order-service", "service whose rules to follow")
	flag.StringVar(&env, "env", "prod", "environment: the key is bulwark:<service>:<env>:flow")
	flag.StringVar(&c.key, "key", "", "rule key (default bulwark:<service>:<env>:flow)")
	flag.StringVar(&c.channel, "channel", "", "change channel (default <key>:changed)")
	flag.DurationVar(&c.timeout, "timeout", 3*time.Second, "give up when Redis does not answer within this at start")
	verbose := flag.Bool("v", false, "log what the Redis client and the datasource do (slog, debug level, on stderr)")
	flag.Parse()
	c.log = slog.New(slog.DiscardHandler)
	if *verbose {
		c.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// go-redis's logger is process-wide: route it once, before any client.
	goredis.SetLogger(redisLog{c.log})
	if c.key == "" {
		c.key = fmt.Sprintf("bulwark:%s:%s:flow", service, env)
	}
	if c.channel == "" {
		c.channel = c.key + ":changed"
	}
	c.statusEvery = time.Second

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "redis example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, c config) error {
	opt := &goredis.Options{
		Addr: c.addr, Username: c.user, Password: c.password,
		DialTimeout: c.timeout, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second,
	}
	if c.tls {
		opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	client := goredis.NewClient(opt)
	defer client.Close()

	// Fail fast and clearly when nothing answers: the datasource itself
	// would keep retrying in the background.
	pingCtx, cancel := context.WithTimeout(ctx, c.timeout)
	err := client.Ping(pingCtx).Err()
	cancel()
	if err != nil {
		return fmt.Errorf("no Redis answers at %s within %v: %w", c.addr, c.timeout, err)
	}

	engine := core.Default()
	stopRules := follow.Rules(out, engine) // print every rule change
	defer stopRules()

	ds := datasource.NewReadable(redis.New(client, c.key, c.channel), converter.FlowRules(), datasource.WithLogger(c.log))
	engine.Flow().Register(ds.Property())
	defer ds.Close()
	fmt.Fprintf(out, "following key %s, channel %s at %s (Ctrl-C to stop)\n", c.key, c.channel, c.addr)
	err = ds.Start(ctx)
	since := follow.BaselineOf(engine, ds) // what the lines below report on; Status says every change after it
	if err != nil {
		fmt.Fprintf(out, "warning: no rules in force (retrying in the background): %v\n", err)
	} else if since.Missing() {
		fmt.Fprintf(out, "warning: key %s does not exist: no rules in force; set it with\n  redis-cli SET %s '[{\"resource\":\"GET /orders\",\"count\":20}]'\n  redis-cli PUBLISH %s changed\n",
			c.key, c.key, c.channel)
	}

	return follow.Status(ctx, out, engine, ds, since, c.statusEvery) // print every status change until ctx ends
}

// redisLog is a go-redis logger that writes through slog at debug level.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "client", "go-redis")
}
