package redis_test

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
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/integration"
)

// propagation measures n updates, each from the start of another client's
// SET + PUBLISH to the moment a real engine's flow rule has the new
// threshold (RuleManager.OnChange). It returns the latencies.
func propagation(tb testing.TB, n int) ([]time.Duration, integration.Mode) {
	tb.Helper()
	srv := integration.StartRedis(tb)
	ctx := testCtx(tb, 120*time.Second)
	key, channel := keyFor(tb)
	writer := newClient(tb, srv, nil)
	doc := func(i int) string {
		return fmt.Sprintf(`[{"resource":"GET /orders","count":%d},{"resource":"POST /orders","count":10}]`, i)
	}
	require.NoError(tb, javaWrite(ctx, writer, key, channel, doc(1)))

	engine := core.NewEngine()
	tb.Cleanup(func() { _ = engine.Close() })
	applied := make(chan float64, 16)
	cancel := engine.Flow().OnChange(func(c core.RuleChange[flow.Rule]) {
		for _, r := range c.New {
			if r.Resource == "GET /orders" {
				applied <- r.Count
			}
		}
	})
	tb.Cleanup(cancel)
	ds := datasource.NewReadable(redis.New(newClient(tb, srv, nil), key, channel), converter.FlowRules(),
		datasource.WithReconcileInterval(time.Hour))
	engine.Flow().Register(ds.Property())
	tb.Cleanup(func() { _ = ds.Close() })
	require.NoError(tb, ds.Start(ctx))
	<-applied
	require.Eventually(tb, func() bool { return ds.Status().Watching }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // let the subscription's own GET settle

	lat := make([]time.Duration, 0, n)
	for i := 2; i < n+2; i++ {
		start := time.Now()
		require.NoError(tb, javaWrite(ctx, writer, key, channel, doc(i)))
		for got := 0.0; got != float64(i); {
			select {
			case got = <-applied:
			case <-ctx.Done():
				tb.Fatalf("update %d not applied: %v; status %+v", i, ctx.Err(), ds.Status())
			}
		}
		lat = append(lat, time.Since(start))
	}
	return lat, srv.Mode()
}

// TestPropagationLatency logs p50/p99/max of 100 updates, write to rule
// active in a real engine (target p99 < 20 ms; nothing asserts timing).
func TestPropagationLatency(t *testing.T) {
	lat, mode := propagation(t, 100)
	t.Logf("redis propagation over %d updates (%s mode): %v",
		len(lat), mode, datasourcetest.Summarize(lat).Round(10*time.Microsecond))
}

// BenchmarkPropagation reports the same measure over b.N updates:
//
//	go test -run '^$' -bench Propagation -benchtime 100x ./datasource/redis/
func BenchmarkPropagation(b *testing.B) {
	n := b.N
	b.ResetTimer()
	lat, _ := propagation(b, n)
	b.StopTimer()
	datasourcetest.Summarize(lat).Report(b)
}
