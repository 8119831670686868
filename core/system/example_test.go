package system_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/system"
)

// busyMachine is a Collector with fixed readings.
type busyMachine struct{}

func (busyMachine) Load1() (float64, error)    { return 0, errors.New("no load average here") }
func (busyMachine) CPUUsage() (float64, error) { return 0.95, nil }

// A CPU-usage rule blocks inbound entries while the CPU is busier than
// 80 %; outbound entries are not checked. The thresholds it leaves at 0
// are unset.
func Example() {
	e := core.NewEngine(core.WithSystemCollector(busyMachine{}))
	defer e.Close() // stops the collector goroutine
	err := e.System().Load([]system.Rule{{HighestCPUUsage: 0.8}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = e.Enter(ctx, "GET /orders", core.Inbound())
	fmt.Println(err)
	en, err := e.Enter(ctx, "call payments")
	fmt.Println(err)
	en.Exit()
	// Output:
	// core: GET /orders blocked by system rule cpu=0.8 (cpu usage above 0.8)
	// <nil>
}
