// Command etcd follows flow rules kept in etcd: the rules of one service in
// one environment are a Java Sentinel JSON document, the value of one key
// (/bulwark/<service>/<env>/flow). It applies them to core.Default(),
// prints every rule change as it happens, and prints the datasource's
// Status whenever it changes.
//
//	go run ./examples/etcd -endpoints 127.0.0.1:2379 -env prod
//	ETCD_ENDPOINTS=10.0.0.1:2379,10.0.0.2:2379 go run ./examples/etcd -service order-service -env staging
//	go run ./examples/etcd -key /my/own/flow-rules -user svc:secret
//
// Change the rules from another terminal while it runs:
//
//	etcdctl put /bulwark/order-service/prod/flow '[{"resource":"GET /orders","count":20}]'
//	etcdctl put /bulwark/order-service/prod/flow '[{"resource":"GET /orders","count":-1}]'  # rejected, rules stay
//	etcdctl del /bulwark/order-service/prod/flow                                            # rules cleared
//
// It exits with an error when no etcd answers within -timeout. The etcd
// client logs through the zap logger in its Config: a no-op logger here,
// zap's development logger on stderr with -v (the datasource's slog logs
// too).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/etcd"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
)

type config struct {
	endpoints   []string
	user        string // "name:password", as etcdctl's --user
	key         string
	timeout     time.Duration // to reach a server at start
	statusEvery time.Duration // how often Status is checked for changes
	verbose     bool          // log what the client and the datasource do, on stderr
}

func main() {
	var c config
	var endpoints, service, env string
	flag.StringVar(&endpoints, "endpoints", follow.EnvOr("ETCD_ENDPOINTS", "127.0.0.1:2379"), "comma-separated etcd endpoints (env ETCD_ENDPOINTS)")
	flag.StringVar(&c.user, "user", os.Getenv("ETCD_USER"), "name:password for etcd authentication (env ETCD_USER)")
	flag.StringVar(&service, "service", "order-service", "service whose rules to follow")
	flag.StringVar(&env, "env", "prod", "environment: the key is /bulwark/<service>/<env>/flow")
	flag.StringVar(&c.key, "key", "", "rule key (default /bulwark/<service>/<env>/flow)")
	flag.DurationVar(&c.timeout, "timeout", 3*time.Second, "give up when no etcd answers within this at start")
	flag.BoolVar(&c.verbose, "v", false, "log what the etcd client (zap) and the datasource (slog) do, on stderr")
	flag.Parse()
	c.endpoints = strings.Split(endpoints, ",")
	if c.key == "" {
		c.key = fmt.Sprintf("/bulwark/%s/%s/flow", service, env)
	}
	c.statusEvery = time.Second

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "etcd example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, c config) error {
	// The client logs through zap (every retry while a server is down);
	// bulwark through slog. Both are silent unless -v.
	clientLog, log := zap.NewNop(), slog.New(slog.DiscardHandler)
	if c.verbose {
		clientLog = zap.Must(zap.NewDevelopment())
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg := clientv3.Config{
		Endpoints:            c.endpoints,
		DialTimeout:          c.timeout,
		DialKeepAliveTime:    10 * time.Second, // notice a dead connection
		DialKeepAliveTimeout: 3 * time.Second,
		Logger:               clientLog,
	}
	if c.user != "" {
		name, pw, ok := strings.Cut(c.user, ":")
		if !ok {
			return errors.New("-user: want name:password")
		}
		cfg.Username, cfg.Password = name, pw
	}
	cli, err := clientv3.New(cfg) // with a user, this authenticates already
	if err != nil {
		return fmt.Errorf("etcd at %s: %w", strings.Join(c.endpoints, ","), err)
	}
	defer cli.Close()

	// Fail fast and clearly when nothing answers: the datasource itself
	// would keep retrying in the background.
	probe, cancel := context.WithTimeout(ctx, c.timeout)
	_, err = cli.Get(probe, c.key, clientv3.WithCountOnly())
	cancel()
	if err != nil {
		return fmt.Errorf("no etcd answers at %s within %v: %w", strings.Join(c.endpoints, ","), c.timeout, err)
	}

	engine := core.Default()
	stopRules := follow.Rules(out, engine) // print every rule change
	defer stopRules()

	ds := datasource.NewReadable(etcd.New(cli, c.key), converter.FlowRules(), datasource.WithLogger(log))
	engine.Flow().Register(ds.Property())
	defer ds.Close()
	fmt.Fprintf(out, "following key %s at %s (Ctrl-C to stop)\n", c.key, strings.Join(c.endpoints, ","))
	err = ds.Start(ctx)
	since := follow.BaselineOf(engine, ds) // what the lines below report on; Status says every change after it
	if err != nil {
		fmt.Fprintf(out, "warning: no rules in force (retrying in the background): %v\n", err)
	} else if since.Missing() {
		fmt.Fprintf(out, "warning: key %s does not exist: no rules in force; set it with\n  etcdctl put %s '[{\"resource\":\"GET /orders\",\"count\":20}]'\n",
			c.key, c.key)
	}

	return follow.Status(ctx, out, engine, ds, since, c.statusEvery) // print every status change until ctx ends
}
