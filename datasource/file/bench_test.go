package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/file"
)

// BenchmarkPropagation measures one update of a flow-rule file, from the
// start of an editor's atomic save to the moment the engine's flow rules
// have the new threshold (RuleManager.OnChange). Run it over 200 updates:
//
//	go test -run '^$' -bench Propagation -benchtime 200x ./datasource/file/
//
// It reports the p50, p99 and max latency of the run in milliseconds.
func BenchmarkPropagation(b *testing.B) {
	path := filepath.Join(b.TempDir(), "flow-rules.json")
	save := func(count int) {
		data := fmt.Appendf(nil, `[{"resource": "GET /orders", "count": %d}, {"resource": "POST /orders", "count": 10}]`, count)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
	save(1)

	engine := core.NewEngine()
	defer engine.Close()
	applied := make(chan float64, 16)
	cancel := engine.Flow().OnChange(func(c core.RuleChange[flow.Rule]) {
		for _, r := range c.New {
			if r.Resource == "GET /orders" {
				applied <- r.Count
			}
		}
	})
	defer cancel()
	ds := datasource.NewReadable(file.New(path), converter.FlowRules())
	engine.Flow().Register(ds.Property())
	if err := ds.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	<-applied

	lat := make([]time.Duration, 0, b.N)
	timeout := time.NewTimer(time.Hour)
	defer timeout.Stop()
	i := 1
	for b.Loop() {
		i++
		start := time.Now()
		save(i)
		timeout.Reset(10 * time.Second)
		for got := 0.0; got != float64(i); {
			select {
			case got = <-applied:
			case <-timeout.C:
				b.Fatalf("update %d not applied within 10s; status %+v", i, ds.Status())
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	datasourcetest.Summarize(lat).Report(b)
}
