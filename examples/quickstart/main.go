// Command quickstart is a small service whose endpoints are protected by
// flow rules kept in a Java Sentinel JSON file, the rules.json beside this
// source file. It drives its own traffic and prints, once a second, how
// many calls each endpoint admitted and blocked, and which rule blocked
// them.
//
// Edit the rules file while it runs: change a count, add a rule, or break
// the JSON. A change prints what changed, old → new; a bad edit prints the
// error and the rules in force keep working; fixing it says so.
//
// It also serves bulwark's live page (package admin) on 127.0.0.1 and
// prints its URL: open it to watch the same traffic, the rules in force and
// every change, refreshed each second.
//
//	go run ./examples/quickstart                 # from the repository root
//	cd examples/quickstart && go run .           # or from its folder: the same rules.json
//	go run ./examples/quickstart -rules /path/to/flow-rules.json -duration 10s -v
//	go run ./examples/quickstart -admin 127.0.0.1:8080   # the live page on a fixed port
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
	"github.com/bulwark-go/bulwark/examples/internal/rulesfile"
)

// defaultRules is rules.json as it was built, for a binary that runs far
// from its source.
//
//go:embed rules.json
var defaultRules []byte

type config struct {
	path        string        // the rules file
	every       time.Duration // how often traffic is reported
	statusEvery time.Duration // how often Status is checked for changes
	log         *slog.Logger  // the engine's and the datasource's logs
	admin       string        // where the live page listens ("": not served)
}

func main() {
	rules := flag.String("rules", "", "flow rules file (Java Sentinel JSON) (default: the rules.json beside this program's source)")
	duration := flag.Duration("duration", 0, "stop after this long (0: run until interrupted)")
	verbose := flag.Bool("v", false, "log what the engine and the datasource do (slog, debug level, on stderr)")
	adminAddr := flag.String("admin", "127.0.0.1:0", "address of the live page (port 0: any free port; empty: no page)")
	flag.Parse()

	// bulwark logs through the *slog.Logger it is given, and discards
	// by default; the printing below does not depend on it.
	c := config{path: *rules, every: time.Second, statusEvery: 100 * time.Millisecond,
		log: slog.New(slog.DiscardHandler), admin: *adminAddr}
	if *verbose {
		c.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if c.path == "" {
		path, err := rulesfile.Default(os.Stdout, "quickstart", defaultRules)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c.path = path
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if err := run(ctx, os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// endpoint is one protected call of the demo service and its traffic.
type endpoint struct {
	resource string
	rate     int           // calls per second the demo sends
	work     time.Duration // how long a call takes
}

var endpoints = []endpoint{
	{"GET /orders", 40, time.Millisecond},
	{"POST /orders", 10, time.Millisecond},
	{"GET /inventory", 20, 150 * time.Millisecond},
}

// tally counts one endpoint's outcomes during one report period.
type tally struct {
	pass, block atomic.Int64
	mu          sync.Mutex
	rule        string // what blocked last
}

func run(ctx context.Context, out io.Writer, c config) error {
	engine := core.NewEngine(core.WithLogger(c.log))
	defer engine.Close()
	stopRules := follow.Rules(out, engine) // print every rule change, old → new
	defer stopRules()

	ds := datasource.NewReadable(file.New(c.path), converter.FlowRules(), datasource.WithLogger(c.log))
	engine.Flow().Register(ds.Property())
	defer ds.Close()
	fmt.Fprintf(out, "following %s (edit it while this runs; Ctrl-C to stop)\n", c.path)
	err := ds.Start(ctx)
	since := follow.BaselineOf(engine, ds) // what the lines below report on; Status says every change after it
	if err != nil {
		// Unreadable or invalid: no rules; the datasource keeps trying.
		fmt.Fprintf(out, "warning: no rules in force, every call passes until the file is fixed: %v\n", err)
	} else if since.Missing() {
		// A mistyped path starts with no rules: say so loudly.
		fmt.Fprintf(out, "warning: %s does not exist: no rules in force, every call passes until it is created\n", c.path)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = follow.Status(ctx, out, engine, ds, since, c.statusEvery) }) // print every status change
	if c.admin != "" {
		url, err := serveAdmin(ctx, &wg, c.admin, admin.Handler(engine, admin.WithDatasources(ds)))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "live page: %s\n", url)
	}

	tallies := make([]*tally, len(endpoints))
	for i, ep := range endpoints {
		tallies[i] = &tally{}
		wg.Go(func() { drive(ctx, engine, ep, tallies[i]) })
	}

	ticker := time.NewTicker(c.every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		report(out, tallies)
	}
}

// drive sends ep.rate calls a second into ep.resource until ctx ends.
func drive(ctx context.Context, e *core.Engine, ep endpoint, t *tally) {
	tick := time.NewTicker(time.Second / time.Duration(ep.rate))
	defer tick.Stop()
	var calls sync.WaitGroup
	defer calls.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			err := e.Do(ctx, ep.resource, func(ctx context.Context) error {
				select {
				case <-time.After(ep.work):
				case <-ctx.Done():
				}
				return nil
			})
			var be *core.BlockError
			switch {
			case errors.As(err, &be):
				t.block.Add(1)
				t.mu.Lock()
				t.rule = strings.TrimPrefix(be.Error(), "core: "+ep.resource+" blocked by ")
				t.mu.Unlock()
			case err == nil:
				t.pass.Add(1)
			}
		}()
	}
}

func report(out io.Writer, tallies []*tally) {
	var lines []string
	for i, t := range tallies {
		pass, block := t.pass.Swap(0), t.block.Swap(0)
		t.mu.Lock()
		rule := t.rule
		t.rule = ""
		t.mu.Unlock()
		line := fmt.Sprintf("%-15s pass %3d  block %3d", endpoints[i].resource, pass, block)
		if block > 0 {
			line += "  by " + rule
		}
		lines = append(lines, line)
	}
	fmt.Fprintf(out, "%s\n  %s\n", time.Now().Format("15:04:05"), strings.Join(slices.Clip(lines), "\n  "))
}

// serveAdmin serves the live page at /debug/bulwark/ on addr until ctx
// ends, in a goroutine wg waits for, and returns the page's URL.
func serveAdmin(ctx context.Context, wg *sync.WaitGroup, addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("live page: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/bulwark/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	wg.Go(func() { _ = srv.Serve(ln) })
	wg.Go(func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	})
	return "http://" + ln.Addr().String() + "/debug/bulwark/", nil
}
