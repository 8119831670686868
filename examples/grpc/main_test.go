package main

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The program runs as main runs it, on a loopback listener, with a copy of
// the rules.json it ships with.
func TestTheServiceEnforcesItsRulesFile(t *testing.T) {
	shipped, err := os.ReadFile("rules.json")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, shipped, 0o600))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out, lis, config{rules: path, calls: 12, log: slog.New(slog.DiscardHandler)}))

	got := out.String()
	t.Log(got)
	assert.Contains(t, got, "call 1: SERVING\n")
	assert.Contains(t, got, ": ResourceExhausted: bulwark: blocked (flow)\n", "12 calls in well under two seconds pass 5 a second")
	assert.LessOrEqual(t, strings.Count(got, ": SERVING\n"), 10)
	assert.Contains(t, got, "as scraper: PermissionDenied: bulwark: blocked (authority)\n")
}
