package file_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	sizelimit "github.com/bulwark-go/bulwark/datasource/internal/limit"
)

const hugeSize = 256 << 20

// sparse makes a file of n bytes that takes no room on disk.
func sparse(tb testing.TB, n int64) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "rules.json")
	f, err := os.Create(path)
	require.NoError(tb, err)
	require.NoError(tb, f.Truncate(n))
	require.NoError(tb, f.Close())
	return path
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// A 256 MiB document is refused with ErrTooLarge and never held: the heap
// in use after a collection stays within 16 MiB of what it was before.
func TestReadRefusesLargeDocument(t *testing.T) {
	path := sparse(t, hugeSize)
	src := file.New(path)
	before := heapInUse()

	_, err := src.Read(t.Context())
	require.ErrorIs(t, err, datasource.ErrTooLarge)
	assert.ErrorContains(t, err, path)
	// A smaller limit from the context is honoured too.
	small := filepath.Join(t.TempDir(), "small.json")
	require.NoError(t, os.WriteFile(small, doc("a", "b", "c"), 0o644))
	_, err = file.New(small).Read(sizelimit.With(t.Context(), 4))
	require.ErrorIs(t, err, datasource.ErrTooLarge)
	snap, err := file.New(small).Read(sizelimit.With(t.Context(), 0))
	require.NoError(t, err, "no limit")
	assert.Equal(t, doc("a", "b", "c"), snap.Data)

	// Write compares with the current document, through the same limit.
	_, err = src.Write(t.Context(), doc("x"), "some-revision")
	require.ErrorIs(t, err, datasource.ErrTooLarge)

	after := heapInUse()
	grew := int64(after) - int64(before)
	t.Logf("heap in use after refusing a %d MiB document: %+.1f MiB", hugeSize>>20, float64(grew)/(1<<20))
	assert.Less(t, grew, int64(16<<20))
}

// BenchmarkRefuseLargeDocument starts a Readable on a 256 MiB document and
// reports the heap in use once it was refused (after a collection, the
// Readable still open), above the heap in use before:
//
//	go test -run '^$' -bench RefuseLargeDocument -benchtime 5x ./datasource/file/
func BenchmarkRefuseLargeDocument(b *testing.B) {
	path := sparse(b, hugeSize)
	before := heapInUse()
	var worst int64
	for b.Loop() {
		r := datasource.NewReadable(file.New(path), codec{},
			datasource.WithPollInterval(time.Hour), datasource.WithReconcileInterval(time.Hour))
		if err := r.Start(b.Context()); err == nil {
			b.Fatal("a 256 MiB document was applied")
		}
		if err := r.Status().Err; !errors.Is(err, datasource.ErrTooLarge) {
			b.Fatalf("status error %v, want ErrTooLarge", err)
		}
		b.StopTimer()
		worst = max(worst, int64(heapInUse())-int64(before))
		b.StartTimer()
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(worst)/(1<<20), "heap-MiB-above-baseline")
}
