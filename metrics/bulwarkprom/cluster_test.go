package bulwarkprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/integration"
	"github.com/bulwark-go/bulwark/metrics/bulwarkprom"
)

// TestCollectorExportsClusterHealth: a Redis token service whose Redis
// refuses connections. Healthy until a cluster rule needs it, then down,
// with the lease it asked for and the entry that fell back.
func TestCollectorExportsClusterHealth(t *testing.T) {
	client := goredis.NewClient(&goredis.Options{Addr: integration.RefusedAddr(t), MaxRetries: -1})
	defer client.Close()
	ts := redis.New(client)
	defer ts.Close()
	e := core.NewEngine(core.WithTokenService(ts))
	defer e.Close()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(bulwarkprom.NewCollector(e)))
	names := []string{"bulwark_cluster_up", "bulwark_cluster_requests_total", "bulwark_cluster_fallbacks_total"}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_cluster_up 1 when the token service's backend answers, 0 while it fails and cluster rules fall back.
# TYPE bulwark_cluster_up gauge
bulwark_cluster_up 1
# HELP bulwark_cluster_requests_total Requests the token service sent to its backend (cluster/redis: leases asked of Redis).
# TYPE bulwark_cluster_requests_total counter
bulwark_cluster_requests_total 0
# HELP bulwark_cluster_fallbacks_total Entries of cluster rules the token service could not answer in time (their rule's fallback applied).
# TYPE bulwark_cluster_fallbacks_total counter
bulwark_cluster_fallbacks_total 0
`), names...))

	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: 10, ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{FlowID: 1, ThresholdType: 1, FallbackToLocalWhenFail: true}}}))
	en, err := e.Enter(bg, "r")
	require.NoError(t, err, "the local fallback admits")
	en.Exit()
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_cluster_up 1 when the token service's backend answers, 0 while it fails and cluster rules fall back.
# TYPE bulwark_cluster_up gauge
bulwark_cluster_up 0
# HELP bulwark_cluster_requests_total Requests the token service sent to its backend (cluster/redis: leases asked of Redis).
# TYPE bulwark_cluster_requests_total counter
bulwark_cluster_requests_total 1
# HELP bulwark_cluster_fallbacks_total Entries of cluster rules the token service could not answer in time (their rule's fallback applied).
# TYPE bulwark_cluster_fallbacks_total counter
bulwark_cluster_fallbacks_total 1
`), names...))
	problems, err := testutil.CollectAndLint(bulwarkprom.NewCollector(e))
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// Without a token service there is no cluster metric.
func TestCollectorWithoutTokenService(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	n, err := testutil.GatherAndCount(registry(t, e), "bulwark_cluster_up", "bulwark_cluster_requests_total", "bulwark_cluster_fallbacks_total")
	require.NoError(t, err)
	assert.Zero(t, n)
}

func registry(t *testing.T, e *core.Engine) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(bulwarkprom.NewCollector(e)))
	return reg
}
