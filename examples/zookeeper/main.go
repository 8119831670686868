// Command zookeeper applies flow rules kept in a ZooKeeper node to
// core.Default(), prints every rule change as it happens, and prints the
// datasource's Status whenever it changes.
//
//	go run ./examples/zookeeper -servers 127.0.0.1:2181 -path /bulwark/order-service/prod/flow
//
// The servers come from -servers, else $ZK_SERVERS (comma-separated), else
// 127.0.0.1:2181. Change the node with zkCli.sh, for example
//
//	set /bulwark/order-service/prod/flow '[{"resource":"GET /orders","count":5}]'
//
// or with -put, which writes a document (creating the node and its
// parents) with compare-and-set and exits.
//
// go-zookeeper logs every connection attempt through the Logger given by
// zk.WithLogger; this program routes it to slog at debug level, shown with
// -v.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/zookeeper"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
)

// zkLog is a go-zookeeper logger that writes through slog at debug level.
type zkLog struct{ log *slog.Logger }

func (l zkLog) Printf(format string, v ...any) {
	l.log.Debug(fmt.Sprintf(format, v...), "client", "go-zookeeper")
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "zookeeper example:", err)
		os.Exit(1)
	}
}

func run() error {
	servers := flag.String("servers", follow.EnvOr("ZK_SERVERS", "127.0.0.1:2181"), "ZooKeeper servers, comma-separated (default $ZK_SERVERS)")
	path := flag.String("path", "/bulwark/order-service/prod/flow", "node holding the flow rules (one per service and environment)")
	auth := flag.String("auth", os.Getenv("ZK_AUTH"), "digest credentials user:password for a node with a digest ACL (default $ZK_AUTH)")
	wait := flag.Duration("connect-timeout", 5*time.Second, "give up when no server gives a session within this time")
	put := flag.String("put", "", "write this rule document to the node (compare-and-set) and exit")
	verbose := flag.Bool("v", false, "log what the ZooKeeper client and the datasource do (slog, debug level, on stderr)")
	flag.Parse()
	log := slog.New(slog.DiscardHandler)
	if *verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	conn, _, err := zk.Connect(strings.Split(*servers, ","), 10*time.Second, zk.WithLogger(zkLog{log}))
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := waitSession(ctx, conn, *wait); err != nil {
		return fmt.Errorf("no ZooKeeper session from %s within %v (is a server running? set -servers or ZK_SERVERS): %w", *servers, *wait, err)
	}
	if *auth != "" {
		if err := conn.AddAuth("digest", []byte(*auth)); err != nil {
			return fmt.Errorf("add digest auth: %w", err)
		}
	}
	// WithServers names the ensemble in Status and the cache file name.
	src := zookeeper.New(conn, *path, zookeeper.WithServers(strings.Split(*servers, ",")...))

	if *put != "" {
		return write(ctx, src, []byte(*put))
	}

	engine := core.Default()
	defer engine.Close()
	stopRules := follow.Rules(os.Stdout, engine) // print every rule change
	defer stopRules()

	ds := datasource.NewReadable(src, converter.FlowRules(), datasource.WithLogger(log))
	engine.Flow().Register(ds.Property())
	defer ds.Close()
	fmt.Printf("following %s on %s; change it with zkCli.sh or -put; Ctrl-C to stop\n", *path, *servers)
	startCtx, cancelStart := context.WithTimeout(ctx, *wait)
	err = ds.Start(startCtx)
	cancelStart()
	since := follow.BaselineOf(engine, ds) // what the lines below report on; Status says every change after it
	if err != nil {
		fmt.Println("warning: no rules in force (retrying in the background):", err)
	} else if since.Missing() {
		fmt.Printf("warning: node %s does not exist: no rules in force; create it with -put '[{\"resource\":\"GET /orders\",\"count\":20}]'\n", *path)
	}

	return follow.Status(ctx, os.Stdout, engine, ds, since, 250*time.Millisecond) // print every status change until ctx ends
}

// waitSession waits until conn has a session: zk.Connect returns at once
// and connects in the background.
func waitSession(ctx context.Context, conn *zk.Conn, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			return fmt.Errorf("connection %s: %w", conn.State(), context.Cause(ctx))
		case <-tick.C:
		}
	}
	return nil
}

// write stores doc with compare-and-set against the node's current
// revision (creating it when it is missing), after checking it decodes.
func write(ctx context.Context, src *zookeeper.Source, doc []byte) error {
	if _, err := converter.FlowRules().Convert(doc); err != nil {
		return fmt.Errorf("not a flow rule document: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cur, err := src.Read(ctx)
	if err != nil {
		return err
	}
	snap, err := src.Write(ctx, doc, cur.Revision)
	if errors.Is(err, datasource.ErrConflict) {
		return fmt.Errorf("someone changed %s meanwhile, try again: %w", src, err)
	}
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s at revision %s\n", src, snap.Revision)
	return nil
}
