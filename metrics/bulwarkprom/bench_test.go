package bulwarkprom_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/metrics/bulwarkprom"
)

// BenchmarkScrape10k gathers the metrics of 10,000 resources, each with
// passes, blocks and errors, as a registry's scrape does.
func BenchmarkScrape10k(b *testing.B) {
	e := core.NewEngine(core.WithMaxResources(10_000))
	defer e.Close()
	for i := range 10_000 {
		en, err := e.Enter(bg, fmt.Sprintf("GET /r/%d", i))
		if err != nil {
			b.Fatal(err)
		}
		en.Exit()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(bulwarkprom.NewCollector(e))
	b.ReportAllocs()
	for b.Loop() {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "bulwark_passed_total" && len(mf.GetMetric()) != 10_000 {
				b.Fatal(len(mf.GetMetric()))
			}
		}
	}
}
