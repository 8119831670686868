//go:build unix

package file_test

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
)

// A rules path that is a named pipe with no writer: Read used to block in
// open(2) forever, and with it the Readable's Start and Close. Read now
// opens without blocking and refuses what is not a regular file.
func TestReadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "rules.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	// Reached through a link too.
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(fifo, link))

	for _, path := range []string{fifo, link} {
		src := file.New(path)
		err := within(t, fifo, func() error { _, err := src.Read(t.Context()); return err })
		require.Error(t, err)
		assert.ErrorContains(t, err, path)
		assert.ErrorContains(t, err, "named pipe")

		// Through a Readable: Start reports it, Close returns.
		r := datasource.NewReadable(file.New(path), codec{},
			datasource.WithPollInterval(time.Hour), datasource.WithReconcileInterval(time.Hour))
		err = within(t, fifo, func() error { return r.Start(t.Context()) })
		assert.ErrorContains(t, err, "named pipe")
		require.NoError(t, within(t, fifo, r.Close))
	}

	// Write compares with the current document: it cannot read one.
	_, err := file.New(fifo).Write(t.Context(), doc("a"), "")
	assert.ErrorContains(t, err, "named pipe")
}

// within runs fn and returns its result; if fn has not returned after a
// long while, it opens the FIFO for writing, which releases a reader
// blocked in open(2) (it then reads end of file), and fails the test.
func within(t *testing.T, fifo string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		<-done
		t.Fatalf("blocked on the named pipe %s", fifo)
		return nil
	}
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "rules.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()

	for path, kind := range map[string]string{
		sock:        "socket",
		"/dev/null": "character device",
		dir:         "directory",
	} {
		_, err := file.New(path).Read(t.Context())
		require.Error(t, err, path)
		assert.ErrorContains(t, err, path)
		assert.ErrorContains(t, err, kind)
	}
}
