package file_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
)

const wait = 10 * time.Second

func TestMain(m *testing.M) {
	if path := os.Getenv("BULWARK_FILE_TEST_WRITER"); path != "" {
		os.Exit(writerProcess(path))
	}
	goleak.VerifyTestMain(m)
}

type codec struct{}

func (codec) Convert(data []byte) ([]string, error) {
	var v []string
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v, nil
}

func (codec) Encode(v []string) ([]byte, error) { return json.Marshal(v) }

func doc(v ...string) []byte { b, _ := json.Marshal(v); return b }

// watchOnly starts a Readable that can learn of changes only through Watch.
func watchOnly(t *testing.T, src *file.Source) *datasource.Readable[[]string] {
	t.Helper()
	r := datasource.NewReadable(src, codec{},
		datasource.WithPollInterval(time.Hour), datasource.WithReconcileInterval(time.Hour),
		datasource.WithBackoff(5*time.Millisecond, 50*time.Millisecond))
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	require.NoError(t, r.Start(t.Context()))
	return r
}

func waitValue(t *testing.T, r *datasource.Readable[[]string], want ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, ok := r.Property().Get()
		return ok && slices.Equal(v, want) && (v == nil) == (want == nil)
	}, wait, time.Millisecond, "want %q", want)
}

// A Kubernetes ConfigMap volume: rules.json -> ..data/rules.json, and
// ..data -> ..<timestamp>, swapped by renaming a new link over ..data.
func TestConfigMapSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(i int, data []byte) {
		ts := fmt.Sprintf("..2026_01_01_00_00_%02d.%d", i, i)
		require.NoError(t, os.Mkdir(filepath.Join(dir, ts), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, ts, "rules.json"), data, 0o644))
		require.NoError(t, os.Symlink(ts, filepath.Join(dir, "..data_tmp")))
		require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
		if i > 0 {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, fmt.Sprintf("..2026_01_01_00_00_%02d.%d", i-1, i-1))))
		}
	}
	version(0, doc("v0"))
	require.NoError(t, os.Symlink(filepath.Join("..data", "rules.json"), filepath.Join(dir, "rules.json")))

	r := watchOnly(t, file.New(filepath.Join(dir, "rules.json")))
	waitValue(t, r, "v0")
	for i := 1; i <= 5; i++ {
		version(i, doc(fmt.Sprintf("v%d", i)))
		waitValue(t, r, fmt.Sprintf("v%d", i))
	}
	assert.NoError(t, r.Status().Err)
}

// A file that is a link into another directory, retargeted.
func TestSymlinkIntoOtherDirectory(t *testing.T) {
	a, b, dir := t.TempDir(), t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(a, "rules.json"), doc("a1"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(b, "rules.json"), doc("b1"), 0o644))
	link := filepath.Join(dir, "rules.json")
	require.NoError(t, os.Symlink(filepath.Join(a, "rules.json"), link))

	r := watchOnly(t, file.New(link))
	waitValue(t, r, "a1")
	// An edit of the target, in its own directory.
	require.NoError(t, os.WriteFile(filepath.Join(a, "rules.json"), doc("a2"), 0o644))
	waitValue(t, r, "a2")
	// The link retargeted atomically.
	require.NoError(t, os.Symlink(filepath.Join(b, "rules.json"), link+".tmp"))
	require.NoError(t, os.Rename(link+".tmp", link))
	waitValue(t, r, "b1")
	require.NoError(t, os.WriteFile(filepath.Join(b, "rules.json"), doc("b2"), 0o644))
	waitValue(t, r, "b2")
}

// Vim-style save: the file is renamed away as a backup, a new file is
// written, then the backup is removed.
func TestEditorBackupSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	require.NoError(t, os.WriteFile(path, doc("one"), 0o644))
	r := watchOnly(t, file.New(path))
	require.NoError(t, os.Rename(path, path+"~"))
	require.NoError(t, os.WriteFile(path, doc("two"), 0o644))
	require.NoError(t, os.Remove(path+"~"))
	waitValue(t, r, "two")
	assert.Zero(t, r.Status().Failures)
}

// The directory removed and made again: the watch breaks, the Readable
// reads (missing: rules cleared), and watches again.
func TestDirectoryRemovedAndRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "rules.json")
	require.NoError(t, os.WriteFile(path, doc("one"), 0o644))
	r := watchOnly(t, file.New(path))
	require.NoError(t, os.RemoveAll(dir))
	waitValue(t, r)
	require.Eventually(t, func() bool { return r.Status().WatchErr != nil }, wait, time.Millisecond)
	require.NoError(t, os.Mkdir(dir, 0o755))
	// The watch comes back (after backoff) before or after this write; either
	// way the write is seen, because a new watch compares with its start.
	require.NoError(t, os.WriteFile(path, doc("two"), 0o644))
	waitValue(t, r, "two")
	require.Eventually(t, func() bool { return r.Status().Watching }, wait, time.Millisecond)
	require.NoError(t, os.WriteFile(path, doc("three"), 0o644))
	waitValue(t, r, "three")
}

func TestWriteKeepsPermissionsAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	require.NoError(t, os.WriteFile(path, doc("a"), 0o600))
	src := file.New(path)
	snap, err := src.Read(t.Context())
	require.NoError(t, err)
	out, err := src.Write(t.Context(), doc("b"), snap.Revision)
	require.NoError(t, err)
	assert.Equal(t, contentrev.Of(doc("b")), out.Revision)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The lock is in .bulwark, which git ignores: beside a document kept in
	// git, nothing else to commit.
	assert.ElementsMatch(t, []string{"rules.json", ".bulwark"}, names)
	state, err := os.ReadDir(filepath.Join(dir, ".bulwark"))
	require.NoError(t, err)
	names = nil
	for _, e := range state {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{".gitignore", "rules.json.lock"}, names)

	// A new file gets WithPerm.
	created := file.New(filepath.Join(dir, "new.json"), file.WithPerm(0o640))
	_, err = created.Write(t.Context(), doc("x"), "")
	require.NoError(t, err)
	fi, err = os.Stat(filepath.Join(dir, "new.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

func TestWriteThroughSymlinkKeepsLink(t *testing.T) {
	real, dir := t.TempDir(), t.TempDir()
	target := filepath.Join(real, "rules.json")
	require.NoError(t, os.WriteFile(target, doc("a"), 0o644))
	link := filepath.Join(dir, "rules.json")
	require.NoError(t, os.Symlink(target, link))
	src := file.New(link)
	snap, err := src.Read(t.Context())
	require.NoError(t, err)
	_, err = src.Write(t.Context(), doc("b"), snap.Revision)
	require.NoError(t, err)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.JSONEq(t, `["b"]`, string(data))
}

func TestReadMissingAndDirectory(t *testing.T) {
	dir := t.TempDir()
	snap, err := file.New(filepath.Join(dir, "absent.json")).Read(t.Context())
	require.NoError(t, err)
	assert.True(t, snap.Missing)
	_, err = file.New(dir).Read(t.Context())
	require.Error(t, err, "a directory is not a document")

	src := file.New(filepath.Join(dir, "x.json"))
	require.NoError(t, src.Close())
	_, err = src.Read(t.Context())
	require.ErrorIs(t, err, datasource.ErrClosed)
	assert.Equal(t, "file:"+filepath.Join(dir, "x.json"), src.String())
}

func TestWriteLockHonoursContext(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	lock := filepath.Join(dir, "held.lock")
	holder, err := os.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer holder.Close()
	require.NoError(t, flock(holder))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = file.New(path, file.WithLockPath(lock)).Write(ctx, doc("a"), "")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// Writers in this process (each its own Source) and in two child
// processes update one file concurrently; no update is lost.
func TestConcurrentWritersAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, doc(), 0o644))
	exe, err := os.Executable()
	require.NoError(t, err)

	const inProc, children = 3, 2
	var wg sync.WaitGroup
	errs := make(chan error, inProc+children)
	for i := range children {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), "BULWARK_FILE_TEST_WRITER="+path, "BULWARK_FILE_TEST_ID=p"+strconv.Itoa(i))
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("child %d: %w: %s", i, err, out)
			}
			errs <- err
		})
	}
	for i := range inProc {
		wg.Go(func() { errs <- updates(t.Context(), path, "g"+strconv.Itoa(i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	got, err := codec{}.Convert(data)
	require.NoError(t, err)
	assert.Len(t, got, (inProc+children)*writerUpdates, "nothing lost")
}

const writerUpdates = 10

func updates(ctx context.Context, path, id string) error {
	w := datasource.NewWritable(file.New(path), codec{}, datasource.WithUpdateAttempts(1000))
	for j := range writerUpdates {
		item := fmt.Sprintf("%s-%d", id, j)
		if err := w.Update(ctx, func(v []string) ([]string, error) { return append(v, item), nil }); err != nil {
			return err
		}
	}
	return nil
}

func writerProcess(path string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := updates(ctx, path, os.Getenv("BULWARK_FILE_TEST_ID")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// A log file appended next to the rules, and another file saved
// atomically, make Watch read nothing: only events on the rules file (or
// the links that lead to it) count. Each event used to read the rules.
func TestWatchIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	require.NoError(t, os.WriteFile(path, doc("one"), 0o644))
	// No debounce: every event that counts is read at once.
	src := file.New(path, file.WithDebounce(0))
	hints := watch(t, src)
	require.Equal(t, contentrev.Of(doc("one")), next(t, hints).Revision) // armed
	reads := file.ReadCount(src)

	logPath := filepath.Join(dir, "app.log")
	for i := range 200 {
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		require.NoError(t, err)
		_, err = fmt.Fprintf(f, "line %d\n", i)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	other := filepath.Join(dir, "other.json")
	for i := range 20 {
		require.NoError(t, os.WriteFile(other+".tmp", doc(strconv.Itoa(i)), 0o644))
		require.NoError(t, os.Rename(other+".tmp", other))
	}
	// Events arrive in order: once this save is reported, every event
	// above has been handled.
	require.NoError(t, os.WriteFile(path+".tmp", doc("two"), 0o644))
	require.NoError(t, os.Rename(path+".tmp", path))
	hint := next(t, hints)
	assert.Equal(t, contentrev.Of(doc("two")), hint.Revision)
	assert.Nil(t, hint.Data, "the watcher keeps no copy of the document")
	assert.Equal(t, reads+1, file.ReadCount(src), "only the save of the rules file was read")
}

// watch runs src.Watch from nothing until the test ends and returns its
// hints.
func watch(t *testing.T, src *file.Source) <-chan datasource.Snapshot {
	t.Helper()
	hints := make(chan datasource.Snapshot, 100)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- src.Watch(ctx, datasource.Snapshot{}, func(s datasource.Snapshot) {
			select {
			case hints <- s:
			default:
				t.Error("hint channel full")
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
	return hints
}

func next(t *testing.T, hints <-chan datasource.Snapshot) datasource.Snapshot {
	t.Helper()
	select {
	case s := <-hints:
		return s
	case <-time.After(wait):
		t.Fatal("no hint")
		return datasource.Snapshot{}
	}
}

// waitHint waits for a hint of data's revision (an in-place write may be
// seen half done first).
func waitHint(t *testing.T, hints <-chan datasource.Snapshot, data []byte) {
	t.Helper()
	for want := contentrev.Of(data); next(t, hints).Revision != want; {
	}
}

// rules.json -> mid/current -> a/rules.json, and mid/current swapped
// atomically (a new link renamed over it) to b/rules.json: the link in the
// middle of the chain, in a directory of its own, is followed.
func TestSymlinkChainRetargetedInTheMiddle(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "mid"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	a, b := filepath.Join(dir, "a", "rules.json"), filepath.Join(dir, "b", "rules.json")
	require.NoError(t, os.WriteFile(a, doc("a1"), 0o644))
	require.NoError(t, os.WriteFile(b, doc("b1"), 0o644))
	current := filepath.Join(dir, "mid", "current")
	require.NoError(t, os.Symlink(a, current))
	require.NoError(t, os.Symlink(filepath.Join("mid", "current"), filepath.Join(dir, "rules.json")))
	retarget := func(target string) {
		require.NoError(t, os.Symlink(target, current+".tmp"))
		require.NoError(t, os.Rename(current+".tmp", current))
	}

	r := watchOnly(t, file.New(filepath.Join(dir, "rules.json")))
	waitValue(t, r, "a1")
	// Seen through the watch only: it is armed.
	require.NoError(t, os.WriteFile(a, doc("a1+"), 0o644))
	waitValue(t, r, "a1+")
	retarget(filepath.Join("..", "b", "rules.json"))
	waitValue(t, r, "b1")
	// The new target's directory is watched.
	require.NoError(t, os.WriteFile(b, doc("b2"), 0o644))
	waitValue(t, r, "b2")
	// An edit of the old target while it is not in the chain, then the
	// chain back to it.
	require.NoError(t, os.WriteFile(a, doc("a2"), 0o644))
	retarget(a)
	waitValue(t, r, "a2")
	require.NoError(t, os.WriteFile(a+".tmp", doc("a3"), 0o644))
	require.NoError(t, os.Rename(a+".tmp", a))
	waitValue(t, r, "a3")
	assert.NoError(t, r.Status().Err)
}

// A link whose target's directories do not exist yet: the closest existing
// parent is watched until they appear.
func TestDanglingLinkTargetCreatedLater(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "later", "deeper", "rules.json")
	link := filepath.Join(dir, "rules.json")
	require.NoError(t, os.Symlink(target, link))

	hints := watch(t, file.New(link))
	require.True(t, next(t, hints).Missing) // armed
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, doc("one"), 0o644))
	waitHint(t, hints, doc("one"))
	require.NoError(t, os.WriteFile(target, doc("two"), 0o644))
	waitHint(t, hints, doc("two"))
}

// Every save of the file is hinted, even one that brings back the content
// this watch read last: the Readable may have read something else in
// between (A, B, A in a burst, with Watch's own read of the first event
// seeing A already while the Readable's read saw B). Watch used to stay
// silent then, and B stayed in force.
func TestWatchHintsEverySave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, doc("a"), 0o644))
	hints := watch(t, file.New(path))
	require.Equal(t, contentrev.Of(doc("a")), next(t, hints).Revision) // armed
	for range 3 {
		require.NoError(t, os.WriteFile(path+".tmp", doc("a"), 0o644))
		require.NoError(t, os.Rename(path+".tmp", path))
		assert.Equal(t, contentrev.Of(doc("a")), next(t, hints).Revision)
	}
}

// The directory a link leads into removed and made again: the watch moves
// to its parent while it is gone, and back.
func TestLinkTargetDirectoryRecreated(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "conf", "rules.json")
	require.NoError(t, os.Mkdir(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, doc("one"), 0o644))
	link := filepath.Join(dir, "rules.json")
	require.NoError(t, os.Symlink(target, link))

	hints := watch(t, file.New(link))
	waitHint(t, hints, doc("one"))
	require.NoError(t, os.RemoveAll(filepath.Dir(target)))
	for !next(t, hints).Missing {
	}
	require.NoError(t, os.Mkdir(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, doc("two"), 0o644))
	waitHint(t, hints, doc("two"))
	require.NoError(t, os.WriteFile(target, doc("three"), 0o644))
	waitHint(t, hints, doc("three"))
}
