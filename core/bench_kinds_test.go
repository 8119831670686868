package core_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

func breakerEngine(b *testing.B) *core.Engine {
	e := passingEngine(b)
	r := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.ErrorRatio, Count: 0.5, TimeWindow: 10,
		MinRequestAmount: 5, StatIntervalMs: 1000}
	if err := e.CircuitBreaker().Load([]circuitbreaker.Rule{r}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkEnterExitBreakerClosed: the flow rule of BenchmarkEnterExitPassQPS
// plus a closed error-ratio breaker (its check on Enter, its window on Exit).
func BenchmarkEnterExitBreakerClosed(b *testing.B) { enterExit(b, breakerEngine(b), "r") }

// BenchmarkEnterExitSlowRatioClosed: a closed slow-ratio breaker alone.
func BenchmarkEnterExitSlowRatioClosed(b *testing.B) {
	e := core.NewEngine()
	r := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.SlowRequestRatio, Count: 100, SlowRatioThreshold: 0.5,
		TimeWindow: 10, MinRequestAmount: 5, StatIntervalMs: 1000}
	if err := e.CircuitBreaker().Load([]circuitbreaker.Rule{r}); err != nil {
		b.Fatal(err)
	}
	enterExit(b, e, "r")
}

func BenchmarkEnterExitBreakerClosedParallel(b *testing.B) {
	enterExitParallel(b, breakerEngine(b), "r")
}

// BenchmarkEnterBreakerOpen: the blocked path of an open breaker.
func BenchmarkEnterBreakerOpen(b *testing.B) {
	e := core.NewEngine()
	r := circuitbreaker.Rule{Resource: "r", Grade: circuitbreaker.ErrorCount, Count: 0, TimeWindow: 1 << 20,
		MinRequestAmount: 1, StatIntervalMs: 1000}
	if err := e.CircuitBreaker().Load([]circuitbreaker.Rule{r}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	en, _ := e.Enter(ctx, "r")
	en.SetError(context.Canceled)
	en.Exit()
	for b.Loop() {
		if _, err := e.Enter(ctx, "r"); err == nil {
			b.Fatal("passed")
		}
	}
}

func hotspotEngine(b *testing.B) *core.Engine {
	e := core.NewEngine()
	r := hotspot.Rule{Resource: "r", Grade: flow.GradeQPS, ParamIdx: 0, Count: 1e12, DurationInSec: 1,
		ParamFlowItemList: []hotspot.ParamFlowItem{{Object: "7", Count: 1 << 30, ClassType: "int"}}}
	if err := e.Hotspot().Load([]hotspot.Rule{r}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkEnterExitHotspotInt: a passing hot-param rule, an int argument
// among 1,000 values (boxing an int above 255 costs the caller one alloc).
func BenchmarkEnterExitHotspotInt(b *testing.B) {
	e := hotspotEngine(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		en, err := e.Enter(ctx, "r", core.WithArgs(1000+i%1000))
		if err != nil {
			b.Fatal(err)
		}
		en.Exit()
	}
}

// BenchmarkEnterExitHotspotString: the same with a string argument among
// 1,000 values.
func BenchmarkEnterExitHotspotString(b *testing.B) {
	e := hotspotEngine(b)
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "user-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		en, err := e.Enter(ctx, "r", core.WithArgs(keys[i%len(keys)]))
		if err != nil {
			b.Fatal(err)
		}
		en.Exit()
	}
}

type constCollector struct{}

func (constCollector) Load1() (float64, error)    { return 0.5, nil }
func (constCollector) CPUUsage() (float64, error) { return 0.1, nil }

func systemBench(b *testing.B, c system.Collector) {
	var opts []core.Option
	if c != nil {
		opts = append(opts, core.WithSystemCollector(c))
	}
	e := core.NewEngine(opts...)
	defer e.Close()
	r := system.Rule{HighestSystemLoad: 1000, HighestCPUUsage: 1, QPS: 1e12, AvgRT: 1 << 40, MaxThread: 1 << 40}
	if err := e.System().Load([]system.Rule{r}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opt := core.Inbound()
	for b.Loop() {
		en, err := e.Enter(ctx, "r", opt)
		if err != nil {
			b.Fatal(err)
		}
		en.Exit()
	}
}

// BenchmarkEnterExitSystem: an inbound entry under system rules setting
// every threshold, with the collector goroutine running (injected values).
func BenchmarkEnterExitSystem(b *testing.B) { systemBench(b, constCollector{}) }

// BenchmarkEnterExitSystemProc: the same with the Linux collector reading
// /proc every second.
func BenchmarkEnterExitSystemProc(b *testing.B) { systemBench(b, nil) }

// threadsEngine has one thread-grade flow rule on "r" that always passes
// (each check reads the resource's concurrency).
func threadsEngine(b *testing.B) *core.Engine {
	e := core.NewEngine()
	b.Cleanup(func() { _ = e.Close() })
	if err := e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeThread, Count: 1 << 30}}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkEnterExitPassThreads: a passing thread-grade rule.
func BenchmarkEnterExitPassThreads(b *testing.B) { enterExit(b, threadsEngine(b), "r") }

// BenchmarkEnterExitPassThreadsParallel: the same on every core.
func BenchmarkEnterExitPassThreadsParallel(b *testing.B) {
	enterExitParallel(b, threadsEngine(b), "r")
}
