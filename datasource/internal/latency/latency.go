// Package latency summarises measured latencies (of update propagation,
// say) for the backends' tests and benchmarks: nearest-rank percentiles and
// a p50/p99/max summary that a benchmark reports as metrics.
package latency

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// Percentile returns the nearest-rank p-th percentile of d (p in (0, 1]):
// the smallest duration such that at least p of d are at or below it; the
// 0.99 percentile of 100 samples is the 99th smallest, that of 1 is the
// largest. d need not be sorted and is not modified. It returns 0 for an
// empty d.
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Summary summarises measured latencies (propagation of an update, say):
// nearest-rank p50 and p99, and the largest.
type Summary struct {
	P50, P99, Max time.Duration
}

// Summarize returns the Summary of d (zero for an empty d).
func Summarize(d []time.Duration) Summary {
	return Summary{P50: Percentile(d, 0.50), P99: Percentile(d, 0.99), Max: Percentile(d, 1)}
}

// Round returns l with every duration rounded to a multiple of m.
func (l Summary) Round(m time.Duration) Summary {
	return Summary{P50: l.P50.Round(m), P99: l.P99.Round(m), Max: l.Max.Round(m)}
}

// String formats l as "p50 …, p99 …, max …", for a test's log.
func (l Summary) String() string {
	return fmt.Sprintf("p50 %v, p99 %v, max %v", l.P50, l.P99, l.Max)
}

// Report reports l on b as the metrics p50-ms, p99-ms and max-ms.
func (l Summary) Report(b *testing.B) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(l.P50), "p50-ms")
	b.ReportMetric(ms(l.P99), "p99-ms")
	b.ReportMetric(ms(l.Max), "max-ms")
}
