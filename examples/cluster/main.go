// Command cluster shows one limit shared by many instances: run it in two
// (or more) terminals against the same Redis, and the processes together
// admit -limit calls per second to "GET /orders", however many run.
//
//	go run ./examples/cluster -addr 127.0.0.1:6379    # terminal 1
//	go run ./examples/cluster -addr 127.0.0.1:6379    # terminal 2
//
// Each process offers -rate calls per second (default 100) to a global
// cluster flow rule of -limit per second (default 100, flowId -flow) and
// prints, every second, how many it admitted and how the token service is
// doing:
//
//	12:00:07  admitted  51 of 100   redis healthy
//
// and how many entries were checked locally instead, because Redis was
// failing or slower than the token service's timeout (-timeout, 5 ms by default).
//
// With two processes each admits about 50; stop one and the other admits
// 100. -average makes the rule average-local (thresholdType 0): -limit per
// live instance. Stop Redis (or pause it: redis-cli DEBUG SLEEP 5) and
// each process falls back to a local limit of -limit per second, then
// returns to the shared limit within a second of Redis answering.
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

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
)

type config struct {
	addr    string
	limit   float64
	rate    float64
	flowID  int64
	average bool
	timeout time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", envOr("REDIS_ADDR", "127.0.0.1:6379"), "Redis address host:port (env REDIS_ADDR)")
	flag.Float64Var(&c.limit, "limit", 100, "calls per second for all processes together (per process with -average)")
	flag.Float64Var(&c.rate, "rate", 100, "calls per second this process offers")
	flag.Int64Var(&c.flowID, "flow", 1, "the rule's flowId: processes with the same one share the limit")
	flag.BoolVar(&c.average, "average", false, "average-local threshold: -limit per live process")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Millisecond, "the longest an entry waits for Redis before the rule falls back")
	verbose := flag.Bool("v", false, "log what the Redis client and the token service do (on stderr)")
	flag.Parse()
	log := slog.New(slog.DiscardHandler)
	if *verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	goredis.SetLogger(redisLog{log}) // process-wide: quiet unless -v

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, log, c); err != nil {
		fmt.Fprintln(os.Stderr, "cluster example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, log *slog.Logger, c config) error {
	client := goredis.NewClient(&goredis.Options{Addr: c.addr})
	defer client.Close()
	ts := redis.New(client, redis.WithLogger(log), redis.WithTimeout(c.timeout))
	defer ts.Close()
	engine := core.NewEngine(core.WithTokenService(ts))
	defer engine.Close()
	// Print the rule it loads, as every example prints its rules.
	defer follow.Rules(out, engine)()
	threshold := 1 // global
	if c.average {
		threshold = 0
	}
	err := engine.Flow().Load([]flow.Rule{{
		Resource:    "GET /orders",
		Count:       c.limit,
		ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{
			FlowID:                  c.flowID,
			ThresholdType:           threshold,
			FallbackToLocalWhenFail: true,
		},
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "offering %.0f calls/s to GET /orders, flowId %d at %s (Ctrl-C to stop)\n", c.rate, c.flowID, c.addr)

	// Offer c.rate entries per second, evenly, catching up after delays,
	// and print each second's tally when the next begins.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	sent, sec, admitted, offered := 0, start.Unix(), 0, 0
	var fellBack uint64
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		for due := int(time.Since(start).Seconds() * c.rate); sent < due; sent++ {
			now := time.Now()
			if s := now.Unix(); s != sec {
				st := ts.Health()
				report(out, sec, admitted, offered, st, st.Fallbacks-fellBack)
				sec, admitted, offered, fellBack = s, 0, 0, st.Fallbacks
			}
			offered++
			if en, err := engine.Enter(ctx, "GET /orders"); err == nil {
				admitted++
				en.Exit()
			}
		}
	}
}

// report prints one second: admitted and offered entries, and whether the
// entries fell back to the local limit (Redis failing, or slower than the
// token service's timeout).
func report(out io.Writer, sec int64, admitted, offered int, st cluster.Health, fellBack uint64) {
	health := "redis healthy"
	if !st.Healthy {
		health = fmt.Sprintf("redis failing since %s: %v", st.Since.Format(time.TimeOnly), st.Err)
	}
	if fellBack > 0 {
		health += fmt.Sprintf(" (%d checked locally)", fellBack)
	}
	fmt.Fprintf(out, "%s  admitted %3d of %3d   %s\n", time.Unix(sec, 0).Format(time.TimeOnly), admitted, offered, health)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// redisLog is a go-redis logger that writes through slog at debug level.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "client", "go-redis")
}
