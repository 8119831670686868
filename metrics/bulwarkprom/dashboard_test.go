package bulwarkprom_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/metrics/bulwarkprom"
)

// TestDashboardQueriesNameExportedMetrics checks that every query of the
// Grafana dashboard in examples/grafana names metrics the collector
// exports, and that the dashboard shows every one of them.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	data, err := os.ReadFile("../../examples/grafana/bulwark-dashboard.json")
	require.NoError(t, err)
	var queries []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
					queries = append(queries, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var doc any
	require.NoError(t, json.Unmarshal(data, &doc))
	walk(doc)
	require.NotEmpty(t, queries)

	exported := map[string]bool{}
	e := core.NewEngine()
	defer e.Close()
	ch := make(chan *prometheus.Desc, 64)
	bulwarkprom.NewCollector(e).Describe(ch)
	close(ch)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		m := fqName.FindStringSubmatch(d.String())
		require.Len(t, m, 2, d.String())
		exported[m[1]] = true
	}
	require.Len(t, exported, 19)

	metric := regexp.MustCompile(`\bbulwark_[a-z0-9_]+`)
	shown := map[string]bool{}
	for _, q := range queries {
		names := metric.FindAllString(q, -1)
		assert.NotEmpty(t, names, "query names no bulwark metric: %s", q)
		for _, n := range names {
			base := n
			if !exported[base] {
				base = strings.TrimSuffix(strings.TrimSuffix(n, "_sum"), "_count") // a summary's series
			}
			assert.True(t, exported[base], "query %q names %s, which the collector does not export", q, n)
			shown[base] = true
		}
	}
	for n := range exported {
		assert.True(t, shown[n], "the dashboard does not show %s", n)
	}
}
