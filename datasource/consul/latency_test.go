package consul_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bulwark-go/bulwark/datasource/consul"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/internal/latency"
)

// TestPropagationLatency measures 100 updates, each from the start of a
// Put by another client to the moment a real engine's flow rules hold the
// new threshold (RuleManager.OnChange), and logs p50, p99 and max (target
// p99 < 50 ms; nothing is asserted about timing):
//
//	go test -run PropagationLatency -v ./datasource/consul/
func TestPropagationLatency(t *testing.T) {
	srv := startConsul(t)
	writer := newClient(t, srv.Addr(), "").KV()
	const key = "bulwark/order-service/test/flow"
	write := func(count int) {
		put(t, writer, key, fmt.Sprintf(`[{"resource":"GET /orders","count":%d},{"resource":"POST /orders","count":10}]`, count))
	}
	write(1)
	rig := flowrig.Start(t, consul.New(newClient(t, srv.Addr(), ""), key))
	rig.WaitWatching(t)

	lat := rig.Propagation(t, "GET /orders", 100, write)
	t.Logf("consul (%s mode) write -> rule active over %d updates: %v",
		srv.Mode(), len(lat), latency.Summarize(lat).Round(10*time.Microsecond))
}
