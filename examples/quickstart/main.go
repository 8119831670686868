// Command quickstart is a small service whose endpoints are protected by
// flow rules kept in a Java Sentinel JSON file next to it. It drives its own
// traffic and prints, once a second, how many calls each endpoint admitted
// and blocked, and which rule blocked them.
//
// Edit the rules file while it runs: change a count, add a rule, or break
// the JSON. A change shows in the next line of output; a bad edit prints
// the error and the rules in force keep working.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -rules /path/to/flow-rules.json -duration 10s
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
)

//go:embed rules.json
var defaultRules []byte

func main() {
	rules := flag.String("rules", filepath.Join("examples", "quickstart", "rules.json"),
		"flow rules file (Java Sentinel JSON); created from the built-in example if missing")
	duration := flag.Duration("duration", 0, "stop after this long (0: run until interrupted)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if err := run(ctx, os.Stdout, *rules, time.Second); err != nil {
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

func run(ctx context.Context, out io.Writer, path string, every time.Duration) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		path = filepath.Join(os.TempDir(), "bulwark-quickstart", "rules.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(path, defaultRules, 0o644); err != nil {
				return err
			}
		}
	}

	engine := core.NewEngine()
	defer engine.Close()
	cancelChanges := engine.Flow().OnChange(func(c core.RuleChange[flow.Rule]) {
		fmt.Fprintf(out, "rules changed: %d in force (%d added, %d removed) for %s\n",
			len(c.New), len(c.Added), len(c.Removed), strings.Join(c.Resources, ", "))
	})
	defer cancelChanges()

	ds := datasource.NewReadable(file.New(path), converter.FlowRules())
	engine.Flow().Register(ds.Property())
	if err := ds.Start(ctx); err != nil {
		fmt.Fprintf(out, "no rules yet (%v); traffic passes unchecked until the file is fixed\n", err)
	}
	defer ds.Close()
	fmt.Fprintf(out, "rules file: %s (edit it while this runs; Ctrl-C to stop)\n", path)

	tallies := make([]*tally, len(endpoints))
	var wg sync.WaitGroup
	for i, ep := range endpoints {
		tallies[i] = &tally{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			drive(ctx, engine, ep, tallies[i])
		}()
	}
	defer wg.Wait()

	ticker := time.NewTicker(every)
	defer ticker.Stop()
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if st := ds.Status(); st.Err != nil && st.Err.Error() != lastErr {
			lastErr = st.Err.Error()
			fmt.Fprintf(out, "rules file rejected, previous rules still in force: %v\n", st.Err)
		} else if st.Err == nil {
			lastErr = ""
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
