package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
)

// The program runs as main runs it, on a loopback listener, with a copy of
// the rules.json it ships with.
func TestTheServiceEnforcesItsRulesFile(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)

	var out exampletest.Buffer
	require.NoError(t, run(t.Context(), &out, lis, config{rules: exampletest.Shipped(t), calls: 12, statusEvery: 10 * time.Millisecond, log: slog.New(slog.DiscardHandler)}))

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
	path := exampletest.Shipped(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	out := exampletest.Start(t, t.Context(), 20*time.Second, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, lis, config{rules: path, calls: 1, serve: true, statusEvery: 10 * time.Millisecond, log: slog.New(slog.DiscardHandler)})
	})
	out.WaitFor(0, "as scraper: ", "status: revision ")

	require.NoError(t, os.WriteFile(path, []byte(`{"flow": [{"resource": "/grpc.health.v1.Health/Check", "count": 5}], "paramFlow": [{"resource": "x", "count": -5}]}`), 0o600))
	out.WaitFor(0, `paramFlow[0] "x": count: must be >= 0`, "document rejected: the 2 rules in force stay\n")
}

// TestGoRunFindsItsRules runs the README's commands: go run from the
// repository root and from the example's folder follow the rules.json
// beside the source.
func TestGoRunFindsItsRules(t *testing.T) {
	exampletest.GoRun(t, "./examples/grpc", []string{"-calls", "1"}, func(t *testing.T, out string) {
		assert.NotContains(t, out, "warning")
		assert.Contains(t, out, "call 1: SERVING")
	})
}
