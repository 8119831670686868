package latency_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/bulwark-go/bulwark/datasource/internal/latency"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- { // unsorted
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	assert.Equal(t, 50*time.Millisecond, latency.Percentile(d, 0.50))
	assert.Equal(t, 99*time.Millisecond, latency.Percentile(d, 0.99))
	assert.Equal(t, 100*time.Millisecond, latency.Percentile(d, 1))
	assert.Equal(t, 1*time.Millisecond, latency.Percentile(d, 0))
	assert.Equal(t, 100*time.Millisecond, d[0], "the input is not modified")
	assert.Equal(t, time.Duration(0), latency.Percentile(nil, 0.5))

	three := []time.Duration{3, 1, 2}
	assert.Equal(t, time.Duration(2), latency.Percentile(three, 0.50))
	assert.Equal(t, time.Duration(3), latency.Percentile(three, 0.99))

	l := latency.Summarize(d)
	assert.Equal(t, latency.Summary{P50: 50 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}, l)
	assert.Equal(t, "p50 50ms, p99 99ms, max 100ms", l.String())
	assert.Equal(t, "p50 0s, p99 0s, max 0s", latency.Summary{P50: 1, P99: 2, Max: 3}.Round(time.Millisecond).String())
}
