package exampletest

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Output is what a running example has printed so far.
type Output struct {
	Buffer
	t      *testing.T
	within time.Duration
}

// Start runs run in a goroutine, with a context derived from ctx and a
// Buffer to print to, until the test ends: its cleanup cancels the
// context, requires that run returned nil, and logs the output. Each
// WaitFor on the Output waits up to within.
func Start(t *testing.T, ctx context.Context, within time.Duration, run func(ctx context.Context, out io.Writer) error) *Output {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	o := &Output{t: t, within: within}
	done := make(chan error, 1)
	go func() { done <- run(ctx, &o.Buffer) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		t.Log(o.String())
	})
	return o
}

// WaitFor waits until what was printed after mark (a length of the
// output; 0 for all of it) contains every want, and returns the output's
// length then, the mark of the next wait.
func (o *Output) WaitFor(mark int, want ...string) int {
	o.t.Helper()
	require.Eventually(o.t, func() bool {
		s := o.String()[mark:]
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}, o.within, 5*time.Millisecond, "waiting for %q (the output is logged below)", want)
	return len(o.String())
}

// FollowsLiveChanges checks what an example that follows key prints
// while another client changes the key (absent at first) with set and
// del: a warning and the status of a missing document, the rule added,
// changed (old → new), the error and that the rules in force stay for a
// rejected document, and the rule removed with a warning once the key is
// deleted.
func FollowsLiveChanges(t *testing.T, out *Output, key string, set func(doc string), del func()) {
	t.Helper()
	out.WaitFor(0, "warning: key "+key+" does not exist: no rules in force")
	out.WaitFor(0, "status: document missing, watching")

	set(`[{"resource":"GET /orders","count":20}]`)
	out.WaitFor(0, "+ GET /orders: count=20")

	set(`[{"resource":"GET /orders","count":5}]`)
	out.WaitFor(0, "~ GET /orders: count 20 → 5")

	set(`[{"resource":"GET /orders","count":-5}]`)
	out.WaitFor(0, "error (1 failure): ")
	out.WaitFor(0, "count: must be >= 0")
	out.WaitFor(0, "document rejected: the 1 rule in force stays")

	del()
	out.WaitFor(0, "- GET /orders: count=5")
	out.WaitFor(0, "warning: the document was deleted: no rules in force")
}
