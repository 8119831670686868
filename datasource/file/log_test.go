package file_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
)

// syncBuffer is a bytes.Buffer safe for the Readable's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatchLogsToTheReadablesLogger: the Source has no logger of its own;
// its Watch logs at Debug to the logger of the Readable that calls it, and
// only there.
func TestWatchLogsToTheReadablesLogger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	save(t, path, doc("a"))
	var debug, info syncBuffer
	src := file.New(path)
	r := datasource.NewReadable[[]string](src, codec{},
		datasource.WithLogger(slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(func() { _ = r.Close() })
	require.NoError(t, r.Start(t.Context()))
	save(t, path, doc("b"))
	waitValue(t, r, "b")
	assert.Eventually(t, func() bool { return bytes.Contains([]byte(debug.String()), []byte(`msg="file watch"`)) }, wait, time.Millisecond,
		"the watch's debug lines go to the Readable's logger: %s", debug.String())
	assert.Contains(t, debug.String(), "datasource=file:"+path, "with the Readable's attributes")

	// A Readable that logs at Info gets none of them.
	other := datasource.NewReadable[[]string](file.New(path), codec{},
		datasource.WithLogger(slog.New(slog.NewTextHandler(&info, nil))))
	t.Cleanup(func() { _ = other.Close() })
	require.NoError(t, other.Start(t.Context()))
	save(t, path, doc("c"))
	waitValue(t, other, "c")
	assert.NotContains(t, info.String(), "file watch")
}

// save replaces path's content the way an editor does: a new file renamed
// over it.
func save(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".new", data, 0o644))
	require.NoError(t, os.Rename(path+".new", path))
}
