package core_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// BenchmarkRateAllow is the reference the Enter/Exit figures are quoted
// against: golang.org/x/time/rate's Limiter.Allow, measured in the same run.
func BenchmarkRateAllow(b *testing.B) {
	l := rate.NewLimiter(rate.Inf, 1)
	for b.Loop() {
		l.Allow()
	}
}

func BenchmarkRateAllowParallel(b *testing.B) {
	l := rate.NewLimiter(rate.Inf, 1)
	parallel(b, func(pb *testing.PB) {
		for pb.Next() {
			l.Allow()
		}
	})
}

// parallel runs body under b.RunParallel and also reports the CPU time the
// process spent per operation (cpu-ns/op, all threads): on a machine shared
// with other work, wall time per operation depends on how much of the cores
// the benchmark got, while CPU time per operation grows only with the cost
// of an operation, cache lines bouncing between cores included.
//
// RunParallel allocates each goroutine's testing.PB (32 bytes, written on
// every iteration) right after whatever the benchmark allocated last, such
// as the tables of the engine's rule map (32 bytes too, read on every
// Enter); sharing a cache line with them makes every core miss on each
// lookup, one run in two. parallel allocates a few objects of that size
// first, so the PBs land elsewhere.
func parallel(b *testing.B, body func(pb *testing.PB)) {
	spacers := make([]*spacer, 8)
	for i := range spacers {
		spacers[i] = new(spacer)
	}
	start := cpuTime()
	b.RunParallel(body)
	if used := cpuTime() - start; used > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	runtime.KeepAlive(spacers)
}

// spacer has the size and the pointer-ness of a testing.PB, so it comes
// from the same size class.
type spacer struct {
	_ *int
	_ [3]uint64
}

func enterExit(b *testing.B, e *core.Engine, resource string) {
	ctx := context.Background()
	for b.Loop() {
		en, err := e.Enter(ctx, resource)
		if err != nil {
			b.Fatal(err)
		}
		en.Exit()
	}
}

func passingEngine(b *testing.B, opts ...core.Option) *core.Engine {
	e := core.NewEngine(opts...)
	b.Cleanup(func() { _ = e.Close() })
	if err := e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 1e12}}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkEnterExitNoRule: a resource without rules (statistics only).
func BenchmarkEnterExitNoRule(b *testing.B) { enterExit(b, core.NewEngine(), "r") }

// BenchmarkEnterExitPassQPS: one QPS rule that always passes.
func BenchmarkEnterExitPassQPS(b *testing.B) { enterExit(b, passingEngine(b), "r") }

// BenchmarkEnterExitPassQPSCoarse: the same with the coarse clock
// (WithCoarseClock(time.Millisecond)): no clock read on the entry path.
func BenchmarkEnterExitPassQPSCoarse(b *testing.B) {
	enterExit(b, passingEngine(b, core.WithCoarseClock(time.Millisecond)), "r")
}

// BenchmarkEnterExitPassQPSParallel: the same under RunParallel, one hot
// resource shared by every core.
func BenchmarkEnterExitPassQPSParallel(b *testing.B) { hotParallel(b) }

// BenchmarkEnterExitPassQPSCoarseParallel: one hot resource shared by
// every core, with the coarse clock.
func BenchmarkEnterExitPassQPSCoarseParallel(b *testing.B) {
	hotParallel(b, core.WithCoarseClock(time.Millisecond))
}

func hotParallel(b *testing.B, opts ...core.Option) {
	enterExitParallel(b, passingEngine(b, opts...), "r")
}

// enterExitParallel enters and exits resource on every core (see parallel).
func enterExitParallel(b *testing.B, e *core.Engine, resource string) {
	ctx := context.Background()
	parallel(b, func(pb *testing.PB) {
		for pb.Next() {
			en, err := e.Enter(ctx, resource)
			if err != nil {
				b.Fatal(err)
			}
			en.Exit()
		}
	})
}

// BenchmarkEnterExitPassQPSParallelInbound: one hot resource shared by
// every core, entered as inbound traffic (the engine-wide inbound node is
// written too; no system rules).
func BenchmarkEnterExitPassQPSParallelInbound(b *testing.B) {
	e := passingEngine(b)
	ctx := context.Background()
	parallel(b, func(pb *testing.PB) {
		for pb.Next() {
			en, err := e.Enter(ctx, "r", core.Inbound())
			if err != nil {
				b.Fatal(err)
			}
			en.Exit()
		}
	})
}

// BenchmarkEnterExitFlashSaleParallel: one hot resource under a QPS
// threshold far below the offered load, so nearly every entry is refused:
// the blocked path of a flash sale, shared by every core.
func BenchmarkEnterExitFlashSaleParallel(b *testing.B) {
	e := core.NewEngine()
	if err := e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 1000}}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	parallel(b, func(pb *testing.PB) {
		for pb.Next() {
			if en, err := e.Enter(ctx, "r"); err == nil {
				en.Exit()
			}
		}
	})
}

// perGoroutine runs RunParallel with one resource (and one passing QPS
// rule) per goroutine, so only the inbound node, when asked for, is shared.
func perGoroutine(b *testing.B, opts ...core.EntryOption) {
	const n = 64
	e := core.NewEngine()
	if err := e.Flow().Load(rules(n, 1e12)); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	ctx := context.Background()
	parallel(b, func(pb *testing.PB) {
		name := fmt.Sprintf("res-%d", next.Add(1)%n)
		for pb.Next() {
			en, err := e.Enter(ctx, name, opts...)
			if err != nil {
				b.Fatal(err)
			}
			en.Exit()
		}
	})
}

// BenchmarkEnterExitPerGoroutineParallel: each goroutine its own resource.
func BenchmarkEnterExitPerGoroutineParallel(b *testing.B) { perGoroutine(b) }

// BenchmarkEnterExitPerGoroutineParallelInbound: the same, entered as
// inbound traffic.
func BenchmarkEnterExitPerGoroutineParallelInbound(b *testing.B) { perGoroutine(b, core.Inbound()) }

// BenchmarkEnterBlocked: the blocked path of a QPS rule of 0.
func BenchmarkEnterBlocked(b *testing.B) {
	e := core.NewEngine()
	if err := e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 0}}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.Enter(ctx, "r"); err == nil {
			b.Fatal("passed")
		}
	}
}

// BenchmarkDoPassQPS: Engine.Do around an empty function.
func BenchmarkDoPassQPS(b *testing.B) {
	e := passingEngine(b)
	ctx := context.Background()
	fn := func(context.Context) error { return nil }
	for b.Loop() {
		if err := e.Do(ctx, "r", fn); err != nil {
			b.Fatal(err)
		}
	}
}

func rules(n int, count float64) []flow.Rule {
	rs := make([]flow.Rule, n)
	for i := range rs {
		rs[i] = flow.Rule{Resource: fmt.Sprintf("res-%d", i), Grade: flow.GradeQPS, Count: count}
	}
	return rs
}

// BenchmarkLoad10kChanged: every rule differs from the rules in force.
func BenchmarkLoad10kChanged(b *testing.B) {
	e := core.NewEngine()
	a, c := rules(10_000, 10), rules(10_000, 20)
	i := 0
	for b.Loop() {
		i++
		next := a
		if i%2 == 0 {
			next = c
		}
		if err := e.Flow().Load(next); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad10kUnchanged: the same list again.
func BenchmarkLoad10kUnchanged(b *testing.B) {
	e := core.NewEngine()
	a := rules(10_000, 10)
	if err := e.Flow().Load(a); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := e.Flow().Load(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstEnter: the first Enter of a resource never seen.
func BenchmarkFirstEnter(b *testing.B) {
	names := make([]string, b.N+1)
	for i := range names {
		names[i] = fmt.Sprintf("/api/items/%d", i)
	}
	e := core.NewEngine(core.WithMaxResources(1 << 30))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		en, err := e.Enter(ctx, names[i])
		if err != nil {
			b.Fatal(err)
		}
		en.Exit()
	}
}

// BenchmarkRetainedPerResource reports the heap kept per touched resource
// without rules (bytes/resource).
func BenchmarkRetainedPerResource(b *testing.B) {
	const n = 20_000
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("/api/items/%d", i)
	}
	ctx := context.Background()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		e := core.NewEngine(core.WithMaxResources(n))
		for _, name := range names {
			en, _ := e.Enter(ctx, name)
			en.Exit()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/resource")
		runtime.KeepAlive(e)
	}
}

// BenchmarkEnterExitShadowBlocked: one shadow QPS rule that would block
// every entry: counted per resource and kind, none blocked. Compare with
// BenchmarkEnterExitPassQPS (the same rule enforcing and passing).
func BenchmarkEnterExitShadowBlocked(b *testing.B) {
	e := core.NewEngine()
	if err := e.Flow().Load([]flow.Rule{{Resource: "r", Grade: flow.GradeQPS, Count: 0, Shadow: true}}); err != nil {
		b.Fatal(err)
	}
	enterExit(b, e, "r")
}

// BenchmarkVsAllow measures Enter+Exit with one passing QPS rule against
// rate.Limiter.Allow in the same loop: blocks of each alternate, so that
// whatever else the machine runs slows both alike. It reports the time of
// each per operation and their ratio (x-allow), without and with the
// coarse clock. x-allow-limited is the ratio to Allow on a limiter with a
// finite rate that passes everything (Allow then counts tokens, as a
// passing rule counts passes); x-allow's limiter is rate.Inf, Allow's
// cheapest path, the reference the targets are measured against.
func BenchmarkVsAllow(b *testing.B) {
	for _, c := range []struct {
		name string
		opts []core.Option
	}{
		{"clock=exact", nil},
		{"clock=coarse", []core.Option{core.WithCoarseClock(time.Millisecond)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := passingEngine(b, c.opts...)
			// l is Allow's cheapest path (rate.Inf: a lock and a clock
			// read); limited counts tokens too, as a passing rule does.
			l := rate.NewLimiter(rate.Inf, 1)
			limited := rate.NewLimiter(1e12, 1e9)
			ctx := context.Background()
			const block = 512
			var allow, allowLimited, entry time.Duration
			for b.Loop() {
				t0 := time.Now()
				for range block {
					l.Allow()
				}
				t1 := time.Now()
				for range block {
					en, err := e.Enter(ctx, "r")
					if err != nil {
						b.Fatal(err)
					}
					en.Exit()
				}
				t2 := time.Now()
				for range block {
					limited.Allow()
				}
				allow += t1.Sub(t0)
				entry += t2.Sub(t1)
				allowLimited += time.Since(t2)
			}
			n := float64(b.N) * block
			b.ReportMetric(float64(allow.Nanoseconds())/n, "allow-ns/op")
			b.ReportMetric(float64(entry.Nanoseconds())/n, "enter-exit-ns/op")
			b.ReportMetric(float64(entry)/float64(allow), "x-allow")
			b.ReportMetric(float64(entry)/float64(allowLimited), "x-allow-limited")
		})
	}
}
