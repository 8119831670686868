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
// It exits with an error when no Redis answers within -timeout.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/redis"
)

type config struct {
	addr, user, password string
	tls                  bool
	key, channel         string
	timeout              time.Duration // to reach the server at start
	statusEvery          time.Duration // how often Status is checked for changes
}

func main() {
	var c config
	var service, env string
	flag.StringVar(&c.addr, "addr", envOr("REDIS_ADDR", "127.0.0.1:6379"), "Redis address host:port (env REDIS_ADDR)")
	flag.StringVar(&c.user, "user", os.Getenv("REDIS_USER"), "ACL user name (env REDIS_USER)")
	flag.StringVar(&c.password, "password", os.Getenv("REDIS_PASSWORD"), "password (env REDIS_PASSWORD)")
	flag.BoolVar(&c.tls, "tls", false, "connect with TLS (system roots)")
	flag.StringVar(&service, "service", "order-service", "service whose rules to follow")
	flag.StringVar(&env, "env", "prod", "environment: the key is bulwark:<service>:<env>:flow")
	flag.StringVar(&c.key, "key", "", "rule key (default bulwark:<service>:<env>:flow)")
	flag.StringVar(&c.channel, "channel", "", "change channel (default <key>:changed)")
	flag.DurationVar(&c.timeout, "timeout", 3*time.Second, "give up when Redis does not answer within this at start")
	flag.Parse()
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

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
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
	cancelChanges := engine.Flow().OnChange(func(ch core.RuleChange[flow.Rule]) {
		fmt.Fprintf(out, "%s rules changed: %d in force\n", ch.Time.Format("15:04:05.000"), len(ch.New))
		for _, r := range ch.Removed {
			fmt.Fprintf(out, "  - %s\n", describe(r))
		}
		for _, r := range ch.Added {
			fmt.Fprintf(out, "  + %s\n", describe(r))
		}
	})
	defer cancelChanges()

	ds := datasource.NewReadable(redis.New(client, c.key, c.channel), converter.FlowRules())
	engine.Flow().Register(ds.Property())
	defer ds.Close()
	fmt.Fprintf(out, "following key %s, channel %s at %s (Ctrl-C to stop)\n", c.key, c.channel, c.addr)
	if err := ds.Start(ctx); err != nil {
		fmt.Fprintf(out, "no rules yet: %v\n", err)
	}
	if ds.Status().Missing {
		fmt.Fprintf(out, "key %s does not exist yet: no rules; set it with\n  redis-cli SET %s '[{\"resource\":\"GET /orders\",\"count\":20}]'\n  redis-cli PUBLISH %s changed\n",
			c.key, c.key, c.channel)
	}

	last := ""
	ticker := time.NewTicker(c.statusEvery)
	defer ticker.Stop()
	for {
		if s := status(ds.Status()); s != last {
			fmt.Fprintf(out, "%s status: %s\n", time.Now().Format("15:04:05.000"), s)
			last = s
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// describe prints a rule the way an operator reads it.
func describe(r flow.Rule) string {
	s := fmt.Sprintf("%s: %v %s", r.Resource, r.Count, r.Grade)
	if r.LimitApp != "" && r.LimitApp != "default" {
		s += " for " + r.LimitApp
	}
	if r.ControlBehavior != 0 {
		s += ", " + r.ControlBehavior.String()
	}
	return s
}

// status summarises a Status in one line (without times, so that it
// changes only when something happens).
func status(st datasource.Status) string {
	var parts []string
	switch {
	case st.Missing:
		parts = append(parts, "key missing")
	case st.Revision != "":
		parts = append(parts, "revision "+st.Revision[:min(12, len(st.Revision))])
	}
	if st.Watching {
		parts = append(parts, "watching")
	} else if st.WatchErr != nil {
		parts = append(parts, "not watching: "+unwrapName(st.WatchErr))
	}
	if st.Err != nil {
		parts = append(parts, fmt.Sprintf("error (%d failures): %s", st.Failures, unwrapName(st.Err)))
	}
	return strings.Join(parts, ", ")
}

// unwrapName drops the "datasource: <name>: " prefix, which names the key
// already printed.
func unwrapName(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "redis: "); i > 0 && errors.Unwrap(err) != nil {
		return msg[i:]
	}
	return msg
}
