package redis_test

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// Every instance of a service runs this: together they admit at most 200
// calls per second to "GET /orders", however many instances there are.
// When Redis cannot answer within the timeout, each instance falls back to
// a local limit of 200/s (FallbackToLocalWhenFail).
func Example() {
	client := goredis.NewClient(&goredis.Options{Addr: "localhost:6379"})
	defer client.Close()
	ts := redis.New(client)
	defer ts.Close()

	engine := core.NewEngine(core.WithTokenService(ts))
	defer engine.Close()
	err := engine.Flow().Load([]flow.Rule{{
		Resource:    "GET /orders",
		Count:       200,
		ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{
			FlowID:                  7,
			ThresholdType:           1, // global; 0 is 200 per live instance
			FallbackToLocalWhenFail: true,
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if en, err := engine.Enter(context.Background(), "GET /orders"); err == nil {
		defer en.Exit()
		// handle the call
	}
	fmt.Printf("redis healthy: %v\n", ts.Health().Healthy)
}
