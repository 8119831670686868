package file_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/datasource/internal/flowrig"
	"github.com/bulwark-go/bulwark/datasource/internal/latency"
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
	rig := flowrig.Start(b, file.New(path))
	b.ResetTimer()
	lat := rig.Propagation(b, "GET /orders", b.N, save)
	b.StopTimer()
	latency.Summarize(lat).Report(b)
}
