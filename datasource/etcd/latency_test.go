package etcd_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource/etcd"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/internal/latency"
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
	const key = "/bulwark/order-service/test/flow"
	put := func(count int) {
		doc := fmt.Sprintf(`[{"resource":"GET /orders","count":%d},{"resource":"POST /orders","count":10}]`, count)
		_, err := writer.Put(ctx, key, doc)
		require.NoError(t, err)
	}
	put(1)
	rig := flowrig.Start(t, etcd.New(newClient(t, srv.Addr()), key))
	rig.WaitWatching(t)

	lat := rig.Propagation(t, "GET /orders", 100, put)
	t.Logf("etcd (%s mode) write -> rule active over %d updates: %v",
		srv.Mode(), len(lat), latency.Summarize(lat).Round(10*time.Microsecond))
}
