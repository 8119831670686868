// Command nacos follows flow rules kept in Nacos, in the dataId and group
// that Sentinel's dashboard and Spring Cloud Alibaba use, applies them to
// core.Default(), prints every rule change as it happens, and prints the
// datasource's Status whenever it changes. Edit the config in the Nacos
// console (Java Sentinel JSON, e.g. [{"resource":"GET /orders","count":20}])
// and watch the output.
//
//	go run ./examples/nacos -addr 127.0.0.1:8848
//	NACOS_ADDR=nacos:8848 NACOS_NAMESPACE=prod go run ./examples/nacos -data-id order-service-flow-rules
//
// It exits with an error when no Nacos server answers within -timeout.
// nacos-sdk-go logs to files of its own, configured on the client
// (constant.WithLogDir, WithLogLevel): here under -work-dir/log, errors
// only, everything with -v (and the datasource's slog logs on stderr).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/examples/internal/follow"
)

type config struct {
	addr, namespace, group, dataID string
	timeout, duration, every       time.Duration
	workDir                        string
	verbose                        bool
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", follow.EnvOr("NACOS_ADDR", "127.0.0.1:8848"), "Nacos server HTTP address host:port (gRPC is port+1000); env NACOS_ADDR")
	flag.StringVar(&c.namespace, "namespace", os.Getenv("NACOS_NAMESPACE"), "Nacos namespace id (empty: public); env NACOS_NAMESPACE")
	flag.StringVar(&c.group, "group", follow.EnvOr("NACOS_GROUP", "SENTINEL_GROUP"), "config group; env NACOS_GROUP")
	flag.StringVar(&c.dataID, "data-id", follow.EnvOr("NACOS_DATA_ID", "order-service-flow-rules"), "config dataId; env NACOS_DATA_ID")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Second, "give up when no server answers within this long")
	flag.DurationVar(&c.duration, "duration", 0, "stop after this long (0: run until interrupted)")
	flag.DurationVar(&c.every, "status-every", time.Second, "check the datasource's Status this often (a line is printed when it changes)")
	flag.StringVar(&c.workDir, "work-dir", filepath.Join(os.TempDir(), "bulwark-nacos-example"), "directory for the SDK's logs and cache")
	flag.BoolVar(&c.verbose, "v", false, "the SDK logs at debug level (to -work-dir/log) and the datasource logs on stderr")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if c.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.duration)
		defer cancel()
	}
	if err := run(ctx, os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "nacos example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, c config) error {
	host, portStr, err := net.SplitHostPort(c.addr)
	if err != nil {
		return fmt.Errorf("bad address %q: %w", c.addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 64)
	if err != nil {
		return fmt.Errorf("bad port in %q: %w", c.addr, err)
	}
	// The SDK writes its logs to files in WithLogDir at WithLogLevel;
	// bulwark logs through slog. Quiet unless -v.
	sdkLevel, log := "error", slog.New(slog.DiscardHandler)
	if c.verbose {
		sdkLevel = "debug"
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cli, err := clients.NewConfigClient(vo.NacosClientParam{
		ClientConfig: constant.NewClientConfig(
			constant.WithNamespaceId(c.namespace),
			constant.WithTimeoutMs(uint64(min(c.timeout, 3*time.Second).Milliseconds())),
			constant.WithNotLoadCacheAtStart(true),
			constant.WithDisableUseSnapShot(true),
			constant.WithCacheDir(filepath.Join(c.workDir, "cache")),
			constant.WithLogDir(filepath.Join(c.workDir, "log")),
			constant.WithLogLevel(sdkLevel),
		),
		ServerConfigs: []constant.ServerConfig{*constant.NewServerConfig(host, port)},
	})
	if err != nil {
		return fmt.Errorf("nacos client: %w", err)
	}
	defer cli.CloseClient()

	engine := core.Default()
	defer engine.Close()
	stopRules := follow.Rules(out, engine) // print every rule change
	defer stopRules()

	src := nacos.New(cli, c.dataID, c.group)
	ds := datasource.NewReadable(src, converter.FlowRules(),
		datasource.WithName("nacos:"+c.group+"/"+c.dataID),
		datasource.WithReconcileInterval(nacos.ReconcileInterval),
		datasource.WithLogger(log))
	engine.Flow().Register(ds.Property())
	defer ds.Close()

	fmt.Fprintf(out, "following %s/%s in namespace %q at %s\n", c.group, c.dataID, c.namespace, c.addr)
	// Start returns at once when the first read fails (the client may still
	// be connecting); it keeps trying in the background, so give it until
	// the timeout before calling the server absent.
	deadline := time.Now().Add(c.timeout)
	startCtx, cancelStart := context.WithDeadline(ctx, deadline)
	err = ds.Start(startCtx)
	for err != nil && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		if st := ds.Status(); !st.AppliedAt.IsZero() {
			err = nil
		}
	}
	cancelStart()
	if err != nil {
		if st := ds.Status(); st.Err != nil {
			err = st.Err
		}
		return fmt.Errorf("no Nacos server answered at %s within %v (is it running? set -addr or NACOS_ADDR): %w", c.addr, c.timeout, err)
	}
	since := follow.BaselineOf(engine, ds) // what the lines below report on; Status says every change after it
	if since.Missing() {
		fmt.Fprintf(out, "warning: %s/%s does not exist: no rules in force; create it in the Nacos console\n", c.group, c.dataID)
	}
	return follow.Status(ctx, out, engine, ds, since, c.every) // print every status change until ctx ends
}
