package etcd_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/etcd"
)

// TestPropagationLatency measures 100 updates, each from the start of a
// Put by another client to the moment a real engine's flow rules hold the
// new threshold (RuleManager.OnChange), and logs p50, p99 and max (target
// p99 < 50 ms; nothing is asserted about timing):
//
//	go test -run PropagationLatency -v ./datasource/etcd/
func TestPropagationLatency(t *testing.T) {
	srv := startEtcd(t)
	ctx := testCtx(t)
	writer := newClient(t, srv.Addr())
	cli := newClient(t, srv.Addr())
	const key = "/bulwark/order-service/test/flow"
	put := func(count int) {
		doc := fmt.Sprintf(`[{"resource":"GET /orders","count":%d},{"resource":"POST /orders","count":10}]`, count)
		_, err := writer.Put(ctx, key, doc)
		require.NoError(t, err)
	}
	put(1)

	engine := core.NewEngine()
	t.Cleanup(func() { _ = engine.Close() })
	applied := make(chan float64, 16)
	cancel := engine.Flow().OnChange(func(c core.RuleChange[flow.Rule]) {
		for _, r := range c.New {
			if r.Resource == "GET /orders" {
				applied <- r.Count
			}
		}
	})
	t.Cleanup(cancel)
	ds := datasource.NewReadable(etcd.New(cli, key), converter.FlowRules())
	engine.Flow().Register(ds.Property())
	require.NoError(t, ds.Start(ctx))
	t.Cleanup(func() { _ = ds.Close() })
	<-applied
	require.Eventually(t, func() bool { return ds.Status().Watching }, 10*time.Second, time.Millisecond)

	const n = 100
	lat := make([]time.Duration, 0, n)
	for i := 2; i < n+2; i++ {
		start := time.Now()
		put(i)
		for got := 0.0; got != float64(i); {
			select {
			case got = <-applied:
			case <-time.After(10 * time.Second):
				t.Fatalf("update %d not applied within 10s; status %+v", i, ds.Status())
			}
		}
		lat = append(lat, time.Since(start))
	}
	t.Logf("etcd (%s mode) write -> rule active over %d updates: %v",
		srv.Mode(), n, datasourcetest.Summarize(lat).Round(10*time.Microsecond))
}
