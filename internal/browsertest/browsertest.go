// Package browsertest starts Debian's headless Chromium, through chromedp,
// for the tests that drive a page as a person would (the live page in
// admin, the fleet console). It is test support, not API.
//
// Without Chromium (apt-get install chromium) a test is skipped, and fails
// instead when BULWARK_IT_REQUIRE=1, as with the integration servers.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bulwark-go/bulwark/internal/integration"
)

// Chromium returns the path of Debian's chromium, or skips the test (fails
// it when BULWARK_IT_REQUIRE=1). Call it before a test's setup, so that a
// machine without a browser skips at once.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(integration.EnvRequire) == "1" {
		t.Fatalf("chromium is not installed (apt-get install chromium) and %s=1", integration.EnvRequire)
	}
	t.Skipf("chromium is not installed (apt-get install chromium); %s=1 makes this a failure", integration.EnvRequire)
	return ""
}

// Start starts the headless browser at path with a window of width ×
// height pixels and returns its first tab. The context ends with the test,
// or after timeout; the browser is stopped when the test ends.
func Start(t testing.TB, path string, width, height int, timeout time.Duration) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(width, height))...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // start the browser now, outside the timeout
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	return ctx
}

// ArtifactDir is where a test saves its screenshots: $BULWARK_ARTIFACTS when
// set (CI keeps it), else a temporary directory.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("BULWARK_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("browsertest: %v", err)
		}
		return d
	}
	return t.TempDir()
}
