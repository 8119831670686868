package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

func ExampleEngine_Do() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Grade: flow.GradeQPS, Count: 2}})

	for i := 0; i < 3; i++ {
		err := e.Do(context.Background(), "GET /orders", func(ctx context.Context) error {
			return nil // the protected call
		})
		switch {
		case errors.Is(err, core.ErrBlocked):
			fmt.Println("blocked:", err)
		case err != nil:
			fmt.Println("failed:", err)
		default:
			fmt.Println("ok")
		}
	}
	// Output:
	// ok
	// ok
	// blocked: core: GET /orders blocked by flow rule QPS 2
}

func ExampleEngine_Enter() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "db", Grade: flow.GradeThread, Count: 1}})

	en, err := e.Enter(context.Background(), "db")
	if err != nil {
		fmt.Println(err)
		return
	}
	// A second caller while the first is inside.
	if _, err := e.Enter(context.Background(), "db"); err != nil {
		fmt.Println("second:", err)
	}
	en.SetError(nil) // record the call's outcome
	en.Exit()
	fmt.Println("done")
	// Output:
	// second: core: db blocked by flow rule thread 1
	// done
}

func ExampleRuleManager_Load() {
	e := core.NewEngine()
	defer e.Close()
	err := e.Flow().Load([]flow.Rule{
		{Resource: "a", Count: 10}, // Grade's zero value is QPS, Java's default
		{Resource: "b", Count: -1},
		{Resource: "", Count: 1, ControlBehavior: flow.WarmUp, WarmUpPeriodSec: -5},
	})
	fmt.Println(err)
	fmt.Println(len(e.Flow().Rules()), "rules in force")

	// Fields left at zero get Java's defaults.
	_ = e.Flow().Load([]flow.Rule{{Resource: "a", Count: 10, ControlBehavior: flow.WarmUp}})
	r := e.Flow().Rules()[0]
	fmt.Println(r.Grade, r.LimitApp, r.WarmUpPeriodSec)
	// Output:
	// core: flow rules rejected, previous rules kept: rules[1].count: must be >= 0; rules[2].resource: must not be empty; rules[2].warmUpPeriodSec: must be >= 0
	// 0 rules in force
	// QPS default 10
}

// A new, tighter threshold tried beside the rule in force: the shadow rule
// blocks nothing, and what it would have blocked is told and counted.
func ExampleEngine_OnShadowBlock() {
	e := core.NewEngine()
	defer e.Close()
	cancel := e.OnShadowBlock(func(b *core.BlockError) { fmt.Println("would block:", b) })
	defer cancel()
	_ = e.Flow().Load([]flow.Rule{
		{Resource: "GET /orders", Grade: flow.GradeQPS, Count: 100},
		{Resource: "GET /orders", Grade: flow.GradeQPS, Count: 2, Shadow: true},
	})

	for i := 0; i < 3; i++ {
		err := e.Do(context.Background(), "GET /orders", func(ctx context.Context) error { return nil })
		fmt.Println("err:", err)
	}
	for _, r := range e.Stats().Resources {
		fmt.Println(r.Resource, "shadow-blocked by flow rules:", r.Second.ShadowBlocked[core.BlockFlow])
	}
	// Output:
	// err: <nil>
	// err: <nil>
	// would block: core: GET /orders blocked by flow rule QPS 2
	// err: <nil>
	// GET /orders shadow-blocked by flow rules: 1
}

// An engine whose entries read a clock that one goroutine ticks every
// millisecond, instead of reading the clock at Enter and at Exit. Close
// stops the goroutine.
func ExampleWithCoarseClock() {
	e := core.NewEngine(core.WithCoarseClock(time.Millisecond))
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Grade: flow.GradeQPS, Count: 2}})

	for range 3 {
		en, err := e.Enter(context.Background(), "GET /orders")
		if err != nil {
			fmt.Println("blocked:", err)
			continue
		}
		fmt.Println("ok")
		en.Exit()
	}
	// Output:
	// ok
	// ok
	// blocked: core: GET /orders blocked by flow rule QPS 2
}
