package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bulwark-go/bulwark/core"
)

// BenchmarkStats10k: one Stats call with 10,000 resources that have
// traffic.
func BenchmarkStats10k(b *testing.B) {
	e := busyEngine(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if st := e.Stats(); len(st.Resources) != 10_000 {
			b.Fatal(len(st.Resources))
		}
	}
}

// BenchmarkSuggest10k: one Suggest call with 10,000 resources that have
// traffic.
func BenchmarkSuggest10k(b *testing.B) {
	e := busyEngine(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		e.Suggest(10*time.Minute, 1.3)
	}
}

// busyEngine returns an engine whose n resources each passed an entry,
// with its statistics started (a first Stats call); b closes it.
func busyEngine(b *testing.B, n int) *core.Engine {
	e := core.NewEngine()
	b.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	for i := range n {
		en, err := e.Enter(ctx, fmt.Sprintf("GET /r/%d", i))
		if err != nil {
			b.Fatal(err)
		}
		en.Exit()
	}
	e.Stats()
	return e
}
