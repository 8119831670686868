// Command grpc serves gRPC's health service protected by package
// bulwarkgrpc, with its rules in a rule-set file (rules.json beside this
// source): 5 Check calls a second, none from the caller "scraper" (the
// x-caller metadata key). It then calls Check itself, faster than the rule
// allows, and as "scraper", and prints what each call got:
//
//	go run ./examples/grpc                        # calls, prints, exits (from the repository root, or its folder)
//	go run ./examples/grpc -serve -addr 127.0.0.1:50051   # and keeps serving, for grpcurl or your client
//
// It follows the rules.json beside its source from any directory: every
// rule change is printed, old → new, and a document that does not decode
// or validate is printed with its reason while the rules in force stay,
// as examples/quickstart does.
//
//	… flow rules changed: 1 in force
//	  + /grpc.health.v1.Health/Check: count=5
//	… authority rules changed: 1 in force
//	  + /grpc.health.v1.Health/Check: limitApp="scraper" strategy=black
//	call 1: SERVING
//	…
//	call 6: ResourceExhausted: bulwark: blocked (flow)
//	as scraper: PermissionDenied: bulwark: blocked (authority)
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
	"os"
	"os/signal"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/bulwark-go/bulwark/adapter/bulwarkgrpc"
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
	rules       string        // the rule-set file
	calls       int           // Check calls to make
	serve       bool          // keep serving after the calls, until ctx ends
	statusEvery time.Duration // how often the datasource's Status is checked for changes
	log         *slog.Logger
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	c := config{statusEvery: 100 * time.Millisecond, log: slog.New(slog.DiscardHandler)}
	flag.StringVar(&c.rules, "rules", "", "rule-set file (flow, degrade, paramFlow, authority, system) (default: the rules.json beside this program's source)")
	flag.IntVar(&c.calls, "calls", 8, "Check calls to make")
	flag.BoolVar(&c.serve, "serve", false, "keep serving after the calls, until interrupted")
	verbose := flag.Bool("v", false, "log what the engine and the datasource do (slog, debug level, on stderr)")
	flag.Parse()
	if *verbose {
		c.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if c.rules == "" {
		path, err := rulesfile.Default(os.Stdout, "grpc", defaultRules)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c.rules = path
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	lis, err := net.Listen("tcp", *addr)
	if err == nil {
		err = run(ctx, os.Stdout, lis, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, lis net.Listener, c config) error {
	engine := core.NewEngine(core.WithLogger(c.log))
	defer engine.Close()
	defer follow.Rules(out, engine)() // print every rule change, old → new
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
	var following sync.WaitGroup
	defer following.Wait()
	statusCtx, stopStatus := context.WithCancel(ctx)
	defer stopStatus() // before following.Wait
	// Print every status change.
	following.Go(func() { _ = follow.Status(statusCtx, out, engine, ds, since, c.statusEvery) })

	// The server: every call and stream is an inbound entry of its method;
	// the caller's origin comes from the x-caller metadata key.
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(bulwarkgrpc.UnaryServerInterceptor(engine, bulwarkgrpc.WithOriginKey("x-caller"))),
		grpc.ChainStreamInterceptor(bulwarkgrpc.StreamServerInterceptor(engine, bulwarkgrpc.WithOriginKey("x-caller"))),
	)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() { serveErr = srv.Serve(lis) })
	defer func() {
		srv.Stop()
		wg.Wait()
	}()
	fmt.Fprintf(out, "serving grpc.health.v1.Health on %s\n", lis.Addr())

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	check := func(ctx context.Context) string {
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			st := status.Convert(err)
			return fmt.Sprintf("%v: %s", st.Code(), st.Message())
		}
		return resp.GetStatus().String()
	}
	for i := range c.calls {
		fmt.Fprintf(out, "call %d: %s\n", i+1, check(ctx))
	}
	fmt.Fprintf(out, "as scraper: %s\n", check(metadata.AppendToOutgoingContext(ctx, "x-caller", "scraper")))

	if c.serve {
		<-ctx.Done()
	}
	srv.Stop()
	wg.Wait()
	if serveErr != nil && !errors.Is(serveErr, grpc.ErrServerStopped) {
		return serveErr
	}
	return nil
}
