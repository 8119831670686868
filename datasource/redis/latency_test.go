package redis_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/internal/latency"
	"github.com/bulwark-go/bulwark/datasource/redis"
	"github.com/bulwark-go/bulwark/internal/integration"
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
	write := func(i int) {
		doc := fmt.Sprintf(`[{"resource":"GET /orders","count":%d},{"resource":"POST /orders","count":10}]`, i)
		require.NoError(tb, javaWrite(ctx, writer, key, channel, doc))
	}
	write(1)
	rig := flowrig.Start(tb, redis.New(newClient(tb, srv, nil), key, channel), datasource.WithReconcileInterval(time.Hour))
	rig.WaitWatching(tb)
	// A first update, not measured: once it is in force, the subscription
	// is confirmed and its own read of the key is done (Watch handles the
	// confirmation, and that read, before any message).
	const settled = 1000
	write(settled)
	rig.WaitCount(tb, "GET /orders", settled)

	return rig.Propagation(tb, "GET /orders", n, write), srv.Mode()
}

// TestPropagationLatency logs p50/p99/max of 100 updates, write to rule
// active in a real engine (target p99 < 20 ms; nothing asserts timing).
func TestPropagationLatency(t *testing.T) {
	lat, mode := propagation(t, 100)
	t.Logf("redis propagation over %d updates (%s mode): %v",
		len(lat), mode, latency.Summarize(lat).Round(10*time.Microsecond))
}

// BenchmarkPropagation reports the same measure over b.N updates:
//
//	go test -run '^$' -bench Propagation -benchtime 100x ./datasource/redis/
func BenchmarkPropagation(b *testing.B) {
	n := b.N
	b.ResetTimer()
	lat, _ := propagation(b, n)
	b.StopTimer()
	latency.Summarize(lat).Report(b)
}
