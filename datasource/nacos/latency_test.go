package nacos_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource/internal/latency"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/internal/integration"
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
	rig := newRig(t, nacos.New(newClient(t, srv.Addr(), ""), dataID, group))
	rig.WaitWatching(t)
	// The SDK arms a listener on its next pass (every 5 s): a first update,
	// not measured, is in force once the watch is armed (through the push,
	// or through the read that Watch makes once the listener is armed).
	const armed = 1000
	require.NoError(t, w.put(ctx, doc(armed)))
	rig.WaitCount(t, "GET /orders", armed)

	// Alongside, how long the server itself takes to serve each publish
	// (polled over HTTP every 10 ms): PolarisMesh refreshes its config cache
	// once a second, which bounds what any client can do.
	const n = 50
	visible := make(chan time.Duration, n)
	lat := rig.Propagation(t, "GET /orders", n, func(i int) {
		start := time.Now()
		ok, err := w.cli.PublishConfig(publishParam(dataID, group, doc(i)))
		require.NoError(t, err)
		require.True(t, ok)
		go func() { visible <- served(ctx, w, doc(i), start) }()
	})
	shown := make([]time.Duration, 0, n)
	for range n {
		shown = append(shown, <-visible)
	}
	t.Logf("nacos (%s mode) publish -> rule active over %d updates: %v",
		srv.Mode(), n, latency.Summarize(lat).Round(time.Millisecond))
	t.Logf("nacos (%s mode) publish -> readable over HTTP (the server alone): %v",
		srv.Mode(), latency.Summarize(shown).Round(time.Millisecond))
}

// served polls the config over HTTP every 10 ms until it reads want and
// returns the time since start, or -1 after 30 s.
func served(ctx context.Context, w writer, want string, start time.Time) time.Duration {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Since(start) < 30*time.Second {
		if got, err := w.get(ctx); err == nil && got == want {
			return time.Since(start)
		}
		select {
		case <-ctx.Done():
			return -1
		case <-tick.C:
		}
	}
	return -1
}
