// Command http is a small order service protected by package bulwarkhttp,
// with its rules in a rule-set file (rules.json beside this source) that
// it follows while it runs:
//
//   - GET /orders/{id}: 20 requests a second for all ids together (flow),
//     2 a second for any one id (hot parameter, paramFlow: the path value
//     id), and none for the caller "scraper" (authority, X-Caller header);
//   - GET /reports/{name}: a report whose name is "broken" fails with 500;
//     more than two failures in a second open its circuit breaker
//     (degrade) for 10 s (503 meanwhile);
//   - GET /health: not protected.
//
// Try it:
//
//	go run ./examples/http              # from the repository root, or: cd examples/http && go run .
//	curl -i localhost:8080/orders/1
//	for i in 1 2 3; do curl -s localhost:8080/orders/7; done            # the third: 429, bulwark: blocked (paramFlow)
//	curl -i -H 'X-Caller: scraper' localhost:8080/orders/1                # 403, bulwark: blocked (authority)
//	for i in 1 2 3 4 5; do curl -s localhost:8080/reports/broken; done    # 500 ×3, then 503, bulwark: blocked (degrade)
//
// Edit rules.json while it runs (a count, a new rule, a typo): every
// change of every kind is printed, old → new, and applies to the next
// request; a document that does not decode or validate is printed with
// its reason and the rules in force stay, the way examples/quickstart
// does. It finds the rules.json beside its source from any directory.
//
// The same server has bulwark's live page (package admin) at
// /debug/bulwark/ and Prometheus metrics (package bulwarkprom) at
// /metrics; it prints both URLs.
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
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/bulwark-go/bulwark/adapter/bulwarkhttp"
	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
	"github.com/bulwark-go/bulwark/examples/internal/rulesfile"
	"github.com/bulwark-go/bulwark/metrics/bulwarkprom"
)

// defaultRules is rules.json as it was built, for a binary that runs far
// from its source.
//
//go:embed rules.json
var defaultRules []byte

type config struct {
	rules       string        // the rule-set file
	statusEvery time.Duration // how often the datasource's Status is checked for changes
	log         *slog.Logger  // the engine's and the datasource's logs
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	c := config{statusEvery: 100 * time.Millisecond, log: slog.New(slog.DiscardHandler)}
	flag.StringVar(&c.rules, "rules", "", "rule-set file (flow, degrade, paramFlow, authority, system) (default: the rules.json beside this program's source)")
	duration := flag.Duration("duration", 0, "stop after this long (0: run until interrupted)")
	verbose := flag.Bool("v", false, "log what the engine and the datasource do (slog, debug level, on stderr)")
	flag.Parse()
	if *verbose {
		c.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if c.rules == "" {
		path, err := rulesfile.Default(os.Stdout, "http", defaultRules)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c.rules = path
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	lis, err := net.Listen("tcp", *addr)
	if err == nil {
		err = run(ctx, os.Stdout, lis, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "http:", err)
		os.Exit(1)
	}
}

// run serves on lis until ctx ends, with the rules of the file c.rules.
func run(ctx context.Context, out io.Writer, lis net.Listener, c config) error {
	engine := core.NewEngine(core.WithLogger(c.log))
	defer engine.Close()
	defer follow.Rules(out, engine)() // print every rule change, old → new
	defer engine.OnBreakerStateChange(func(ch circuitbreaker.StateChange) {
		fmt.Fprintf(out, "%s breaker %s: %s → %s\n", ch.Time.Format("15:04:05.000"), ch.Rule.Resource, ch.From, ch.To)
	})()

	ds := datasource.NewReadable(file.New(c.rules), converter.RuleSet(), datasource.WithLogger(c.log))
	defer engine.RegisterRuleSet(ds.Property())()
	defer ds.Close()
	fmt.Fprintf(out, "following %s (edit it while this runs; Ctrl-C to stop)\n", c.rules)
	err := ds.Start(ctx)
	since := follow.BaselineOf(engine, ds) // what the lines below report on; Status says every change after it
	if err != nil {
		fmt.Fprintf(out, "warning: no rules in force, every call passes until the file is fixed: %v\n", err)
	} else if since.Missing() {
		fmt.Fprintf(out, "warning: %s does not exist: no rules in force, every call passes until it is created\n", c.rules)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	statusCtx, stopStatus := context.WithCancel(ctx)
	defer stopStatus() // before wg.Wait
	// Print every status change.
	wg.Go(func() { _ = follow.Status(statusCtx, out, engine, ds, since, c.statusEvery) })

	// The live page and the metrics on the same server, unprotected; the
	// collector on a registry of its own (nothing global).
	reg := prometheus.NewRegistry()
	reg.MustRegister(bulwarkprom.NewCollector(engine, bulwarkprom.WithDatasources(ds)))
	mux := service(engine)
	mux.Handle("/debug/bulwark/", admin.Handler(engine, admin.WithDatasources(ds)))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	base := "http://" + lis.Addr().String()
	fmt.Fprintf(out, "listening on %s\nlive page: %s/debug/bulwark/\nmetrics: %s/metrics\n", base, base, base)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}

// service is the order service: each protected route is wrapped where it
// is registered, so that r.PathValue is known to WithArgs.
func service(engine *core.Engine) *http.ServeMux {
	protect := bulwarkhttp.Middleware(engine,
		bulwarkhttp.WithOrigin(func(r *http.Request) string { return r.Header.Get("X-Caller") }),
		bulwarkhttp.WithArgs(func(r *http.Request) []any { return []any{r.PathValue("id")} }),
	)
	mux := http.NewServeMux()
	mux.Handle("GET /orders/{id}", protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "order %s\n", r.PathValue("id"))
	})))
	mux.Handle("GET /reports/{name}", protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") == "broken" {
			http.Error(w, "report backend failed", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "report %s\n", r.PathValue("name"))
	})))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}
