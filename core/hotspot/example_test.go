package hotspot_test

import (
	"context"
	"fmt"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
)

// Each item id may be read twice per second, except item 42, a bestseller,
// which may be read five times.
func Example() {
	e := core.NewEngine()
	err := e.Hotspot().Load([]hotspot.Rule{{
		Resource:      "GET /items/{id}",
		Grade:         flow.GradeQPS,
		ParamIdx:      0,
		Count:         2,
		DurationInSec: 1,
		ParamFlowItemList: []hotspot.ParamFlowItem{
			{Object: "42", Count: 5, ClassType: "long"},
		},
	}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, id := range []int64{7, 42} {
		passed := 0
		for range 10 {
			if en, err := e.Enter(ctx, "GET /items/{id}", core.WithArgs(id)); err == nil {
				passed++
				en.Exit()
			}
		}
		fmt.Printf("item %d: %d of 10 passed\n", id, passed)
	}
	// Output:
	// item 7: 2 of 10 passed
	// item 42: 5 of 10 passed
}
