package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// fixed is a token service whose budgets admit a fixed number of entries
// in total: enough to show the contract, not a real service.
type fixed struct{ n int64 }

func (f *fixed) Budget(flow.Rule) cluster.Budget {
	b := &fixedBudget{}
	b.left.Store(f.n)
	return b
}

type fixedBudget struct{ left atomic.Int64 }

func (b *fixedBudget) RequestToken(_ context.Context, acquire int64, _ bool) cluster.Result {
	if b.left.Add(-acquire) < 0 {
		b.left.Add(acquire)
		return cluster.Result{Status: cluster.Blocked}
	}
	return cluster.Result{Status: cluster.OK}
}

func (b *fixedBudget) Release() {}

func Example() {
	var ts cluster.TokenService = &fixed{n: 2}
	b := ts.Budget(flow.Rule{Resource: "r", ClusterMode: true, ClusterConfig: flow.ClusterConfig{FlowID: 1}})
	for range 3 {
		fmt.Println(b.RequestToken(context.Background(), 1, false).Status)
	}
	// Output:
	// ok
	// ok
	// blocked
}

// reporting is a token service that also reports its backend's health,
// as cluster/redis's does.
type reporting struct{ fixed }

func (r *reporting) Health() cluster.Health {
	return cluster.Health{Healthy: true, Requests: 12}
}

// An engine reports the health of its token service in its statistics,
// which package metrics/bulwarkprom exports and package admin shows.
func ExampleHealth() {
	e := core.NewEngine(core.WithTokenService(&reporting{fixed{n: 10}}))
	defer e.Close()
	if h := e.Stats().Cluster; h != nil {
		fmt.Printf("healthy: %v, requests: %d, fallbacks: %d\n", h.Healthy, h.Requests, h.Fallbacks)
	}
	// Output:
	// healthy: true, requests: 12, fallbacks: 0
}
