package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
)

// shipped copies the rules.json the example ships with to a temporary
// file, and returns its path.
func shipped(t *testing.T) string {
	data, err := os.ReadFile("rules.json")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// The program runs as main runs it, on a loopback listener, with a copy of
// the rules.json it ships with.
func TestTheServiceEnforcesItsRulesFile(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)

	var out exampletest.Buffer
	require.NoError(t, run(t.Context(), &out, lis, config{rules: shipped(t), calls: 12, statusEvery: 10 * time.Millisecond, log: slog.New(slog.DiscardHandler)}))

	got := out.String()
	t.Log(got)
	assert.Contains(t, got, "call 1: SERVING\n")
	assert.Contains(t, got, ": ResourceExhausted: bulwark: blocked (flow)\n", "12 calls in well under two seconds pass 5 a second")
	assert.LessOrEqual(t, strings.Count(got, ": SERVING\n"), 10)
	assert.Contains(t, got, "as scraper: PermissionDenied: bulwark: blocked (authority)\n")
	// Every kind of the document is printed, each with its count.
	assert.Contains(t, got, " flow rules changed: 1 in force\n  + /grpc.health.v1.Health/Check: count=5\n")
	assert.Contains(t, got, " authority rules changed: 1 in force\n  + /grpc.health.v1.Health/Check: limitApp=\"scraper\" strategy=black\n")
	assert.NotContains(t, got, "warning")
}

// While it serves, a rejected document is printed with its reason and the
// rules in force stay, as the quickstart prints it.
func TestTheServicePrintsRejections(t *testing.T) {
	path := shipped(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var out exampletest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, &out, lis, config{rules: path, calls: 1, serve: true, statusEvery: 10 * time.Millisecond, log: slog.New(slog.DiscardHandler)})
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
		t.Log(out.String())
	}()
	waitFor := func(want ...string) {
		t.Helper()
		require.Eventually(t, func() bool {
			for _, w := range want {
				if !strings.Contains(out.String(), w) {
					return false
				}
			}
			return true
		}, 20*time.Second, 5*time.Millisecond, "waiting for %q (the output is logged below)", want)
	}
	waitFor("as scraper: ", "status: revision ")

	require.NoError(t, os.WriteFile(path, []byte(`{"flow": [{"resource": "/grpc.health.v1.Health/Check", "count": 5}], "paramFlow": [{"resource": "x", "count": -5}]}`), 0o600))
	waitFor(`paramFlow[0] "x": count: must be >= 0`, "document rejected: the 2 rules in force stay\n")
}

// TestGoRunFindsItsRules runs the README's commands: go run from the
// repository root and from the example's folder follow the rules.json
// beside the source.
func TestGoRunFindsItsRules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	following := regexp.MustCompile(`(?m)^following (.+) \(edit it`)
	for _, tc := range []struct{ dir, pkg string }{{".", "."}, {"../..", "./examples/grpc"}} {
		t.Run(tc.pkg, func(t *testing.T) {
			cmd := exec.Command(gobin, "run", tc.pkg, "-calls", "1")
			cmd.Dir = tc.dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			m := following.FindSubmatch(out)
			require.NotNil(t, m, "no 'following' line in:\n%s", out)
			beside, err := os.Stat("rules.json")
			require.NoError(t, err)
			got, err := os.Stat(string(m[1]))
			require.NoError(t, err)
			assert.True(t, os.SameFile(beside, got), "follows %s", m[1])
			assert.NotContains(t, string(out), "warning")
			assert.Contains(t, string(out), "call 1: SERVING")
		})
	}
}
