package nacos_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/integration"
)

// TestPropagationLatency measures 50 updates, each from the start of a
// publish by another client to the moment a real engine's flow rules hold
// the new threshold (RuleManager.OnChange), and logs p50, p99 and max
// (target p99 < 1.5 s on PolarisMesh; nothing is asserted about timing):
//
//	BULWARK_IT_MODE=local go test -race -run PropagationLatency -v ./datasource/nacos/
func TestPropagationLatency(t *testing.T) {
	srv := integration.StartNacos(t)
	ctx := testCtx(t)
	dataID := uniqueID("bulwark-latency")
	const group = "SENTINEL_GROUP"
	w := newWriter(t, srv.Addr(), "", dataID, group)
	doc := func(count int) string {
		return fmt.Sprintf(`[{"resource":"GET /orders","count":%d},{"resource":"POST /orders","count":10}]`, count)
	}
	require.NoError(t, w.put(ctx, doc(1)))

	engine := core.NewEngine()
	t.Cleanup(func() { _ = engine.Close() })
	applied := make(chan float64, 64)
	cancel := engine.Flow().OnChange(func(c core.RuleChange[flow.Rule]) {
		for _, r := range c.New {
			if r.Resource == "GET /orders" {
				select {
				case applied <- r.Count:
				default:
				}
			}
		}
	})
	t.Cleanup(cancel)
	ds := datasource.NewReadable(nacos.New(newClient(t, srv.Addr(), ""), dataID, group), flowCodec(),
		datasource.WithReconcileInterval(nacos.ReconcileInterval))
	engine.Flow().Register(ds.Property())
	require.NoError(t, ds.Start(ctx))
	t.Cleanup(func() { _ = ds.Close() })
	<-applied
	require.Eventually(t, func() bool { return ds.Status().Watching }, 10*time.Second, time.Millisecond)
	time.Sleep(7 * time.Second) // the SDK arms the listener on its next 5 s pass

	// Alongside, how long the server itself takes to serve each publish
	// (polled over HTTP every 10 ms): PolarisMesh refreshes its config cache
	// once a second, which bounds what any client can do.
	const n = 50
	lat := make([]time.Duration, 0, n)
	visible := make([]time.Duration, 0, n)
	for i := 2; i < n+2; i++ {
		start := time.Now()
		ok, err := w.cli.PublishConfig(publishParam(dataID, group, doc(i)))
		require.NoError(t, err)
		require.True(t, ok)
		seen := make(chan time.Duration, 1)
		go func() {
			for time.Since(start) < 30*time.Second {
				if got, err := w.get(ctx); err == nil && got == doc(i) {
					seen <- time.Since(start)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			seen <- -1
		}()
		for got := 0.0; got != float64(i); {
			select {
			case got = <-applied:
			case <-time.After(30 * time.Second):
				t.Fatalf("update %d not applied within 30s; status %+v", i, ds.Status())
			}
		}
		lat = append(lat, time.Since(start))
		visible = append(visible, <-seen)
	}
	t.Logf("nacos (%s mode) publish -> rule active over %d updates: %v",
		srv.Mode(), n, datasourcetest.Summarize(lat).Round(time.Millisecond))
	t.Logf("nacos (%s mode) publish -> readable over HTTP (the server alone): %v",
		srv.Mode(), datasourcetest.Summarize(visible).Round(time.Millisecond))
}
