// Command consul follows flow rules kept in Consul: the rules of one
// service in one environment are a Java Sentinel JSON document, the value
// of one KV key (bulwark/<service>/<env>/flow). It applies them to
// core.Default(), prints every rule change as it happens, and prints the
// datasource's Status whenever it changes.
//
//	go run ./examples/consul -addr 127.0.0.1:8500 -env prod
//	CONSUL_HTTP_ADDR=10.0.0.1:8500 CONSUL_HTTP_TOKEN=... go run ./examples/consul -service order-service -env staging
//	go run ./examples/consul -key my/own/flow-rules -dc dc2
//
// Change the rules from another terminal while it runs:
//
//	consul kv put bulwark/order-service/prod/flow '[{"resource":"GET /orders","count":20}]'
//	consul kv put bulwark/order-service/prod/flow '[{"resource":"GET /orders","count":-1}]'  # rejected, rules stay
//	consul kv delete bulwark/order-service/prod/flow                                         # rules cleared
//
// It exits with an error when no Consul agent answers within -timeout. The
// client is api.DefaultConfig's, so every CONSUL_HTTP_* variable (token,
// TLS) applies; -addr, -token and -dc win. With -v the datasource logs
// (slog) on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/consul"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
)

type config struct {
	addr        string
	token       string // ACL token; "" keeps CONSUL_HTTP_TOKEN's
	dc          string
	key         string
	timeout     time.Duration // to reach the agent at start
	statusEvery time.Duration // how often Status is checked for changes
	verbose     bool          // log what the datasource does, on stderr
}

func main() {
	var c config
	var service, env string
	flag.StringVar(&c.addr, "addr", follow.EnvOr("CONSUL_HTTP_ADDR", "127.0.0.1:8500"), "Consul agent's HTTP address (env CONSUL_HTTP_ADDR)")
	flag.StringVar(&c.token, "token", "", "ACL token (default: env CONSUL_HTTP_TOKEN; prefer the variable: flags show in process lists)")
	flag.StringVar(&c.dc, "dc", "", "datacenter (default: the agent's)")
	flag.StringVar(&service, "service", "order-service", "service whose rules to follow")
	flag.StringVar(&env, "env", "prod", "environment: the key is bulwark/<service>/<env>/flow")
	flag.StringVar(&c.key, "key", "", "rule key (default bulwark/<service>/<env>/flow)")
	flag.DurationVar(&c.timeout, "timeout", 3*time.Second, "give up when no Consul agent answers within this at start")
	flag.BoolVar(&c.verbose, "v", false, "log what the datasource (slog) does, on stderr")
	flag.Parse()
	if c.key == "" {
		c.key = fmt.Sprintf("bulwark/%s/%s/flow", service, env)
	}
	c.statusEvery = time.Second

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "consul example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, c config) error {
	log := slog.New(slog.DiscardHandler)
	if c.verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg := api.DefaultConfig()
	cfg.Address = c.addr
	if c.token != "" {
		cfg.Token = c.token
	}
	if c.dc != "" {
		cfg.Datacenter = c.dc
	}
	cli, err := api.NewClient(cfg)
	if err != nil {
		return fmt.Errorf("consul at %s: %w", c.addr, err)
	}
	defer cfg.Transport.CloseIdleConnections()

	// Fail fast and clearly when nothing answers: the datasource itself
	// would keep retrying in the background.
	probe, cancel := context.WithTimeout(ctx, c.timeout)
	_, _, err = cli.KV().Get(c.key, (&api.QueryOptions{}).WithContext(probe))
	cancel()
	if err != nil {
		return fmt.Errorf("no consul answers at %s within %v: %w", c.addr, c.timeout, err)
	}

	engine := core.Default()
	stopRules := follow.Rules(out, engine) // print every rule change
	defer stopRules()

	ds := datasource.NewReadable(consul.New(cli, c.key), converter.FlowRules(), datasource.WithLogger(log))
	engine.Flow().Register(ds.Property())
	defer ds.Close()
	fmt.Fprintf(out, "following key %s at %s (Ctrl-C to stop)\n", c.key, c.addr)
	err = ds.Start(ctx)
	since := follow.BaselineOf(engine, ds) // what the lines below report on; Status says every change after it
	if err != nil {
		fmt.Fprintf(out, "warning: no rules in force (retrying in the background): %v\n", err)
	} else if since.Missing() {
		fmt.Fprintf(out, "warning: key %s does not exist: no rules in force; set it with\n  consul kv put %s '[{\"resource\":\"GET /orders\",\"count\":20}]'\n",
			c.key, c.key)
	}

	return follow.Status(ctx, out, engine, ds, since, c.statusEvery) // print every status change until ctx ends
}
