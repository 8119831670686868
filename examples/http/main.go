// Command http is a small order service protected by package bulwarkhttp,
// with its rules in a rule-set file (rules.json beside this source) that
// it follows while it runs:
//
//   - GET /orders/{id}: 20 requests a second for all ids together (flow),
//     2 a second for any one id (hot parameter: the path value id),
//     and none for the caller "scraper" (authority, X-Caller header);
//   - GET /reports/{name}: a report whose name is "broken" fails with 500;
//     more than two failures in a second open its circuit breaker for 10 s
//     (503 meanwhile);
//   - GET /health: not protected.
//
// Try it:
//
//	cd examples/http && go run .        # or: go run ./examples/http -rules examples/http/rules.json
//	curl -i localhost:8080/orders/1
//	for i in 1 2 3; do curl -s localhost:8080/orders/7; echo; done      # the third: 429, hot parameter
//	curl -i -H 'X-Caller: scraper' localhost:8080/orders/1                # 403
//	for i in 1 2 3 4 5; do curl -s localhost:8080/reports/broken; done    # 500 ×3, then 503
//
// Edit rules.json while it runs (a count, a new rule): flow rule changes
// are printed, old → new, and apply to the next request.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/bulwark-go/bulwark/adapter/bulwarkhttp"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	rules := flag.String("rules", "rules.json", "rule-set file (flow, degrade, paramFlow, authority, system)")
	verbose := flag.Bool("v", false, "log what the engine and the datasource do (slog, debug level, on stderr)")
	flag.Parse()
	log := slog.New(slog.DiscardHandler)
	if *verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	lis, err := net.Listen("tcp", *addr)
	if err == nil {
		err = run(ctx, os.Stdout, lis, *rules, log)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "http:", err)
		os.Exit(1)
	}
}

// run serves on lis until ctx ends, with the rules of the file at path.
func run(ctx context.Context, out io.Writer, lis net.Listener, path string, log *slog.Logger) error {
	engine := core.NewEngine(core.WithLogger(log))
	defer engine.Close()
	defer follow.Rules(out, engine)() // print flow rule changes, old → new
	defer engine.OnBreakerStateChange(func(c circuitbreaker.StateChange) {
		fmt.Fprintf(out, "breaker %s: %s → %s\n", c.Rule.Resource, c.From, c.To)
	})()

	ds := datasource.NewReadable(file.New(path), converter.RuleSet(), datasource.WithLogger(log))
	defer engine.RegisterRuleSet(ds.Property())()
	defer ds.Close()
	if err := ds.Start(ctx); err != nil {
		fmt.Fprintf(out, "warning: no rules in force until %s is fixed: %v\n", path, err)
	} else if ds.Status().Missing {
		fmt.Fprintf(out, "warning: %s does not exist: no rules in force until it is created\n", path)
	}

	srv := &http.Server{Handler: handler(engine), ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(out, "listening on http://%s, rules from %s\n", lis.Addr(), path)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}

// handler is the service: each protected route is wrapped where it is
// registered, so that r.PathValue is known to WithArgs.
func handler(engine *core.Engine) http.Handler {
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
