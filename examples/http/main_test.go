package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
)

// The service runs as main runs it, on a loopback listener, with a copy
// of the rules.json it ships with.
func TestTheServiceEnforcesItsRulesFile(t *testing.T) {
	shipped, err := os.ReadFile("rules.json")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, shipped, 0o600))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var out exampletest.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, &out, lis, path, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	base := "http://" + lis.Addr().String()
	get := func(path string, header ...string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if len(header) == 2 {
			req.Header.Set(header[0], header[1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "listening on") }, 10*time.Second, 5*time.Millisecond)

	status, _ := get("/health")
	assert.Equal(t, 200, status)
	status, body := get("/orders/1", "X-Caller", "scraper")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, body, "(authority)")

	// One id: 2 a second (hot parameter), whatever the flow rule admits.
	status, body = get("/orders/7")
	assert.Equal(t, 200, status)
	assert.Equal(t, "order 7\n", body)
	get("/orders/7")
	status, body = get("/orders/7")
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Contains(t, body, "(hotspot)")

	// All ids: 20 a second.
	flowBlocks := 0
	for i := range 40 {
		if status, body := get("/orders/" + strconv.Itoa(100+i)); status == http.StatusTooManyRequests {
			assert.Contains(t, body, "(flow)")
			flowBlocks++
		}
	}
	assert.Positive(t, flowBlocks, "40 ids in well under two seconds pass 20 a second")

	// Failures open the breaker of GET /reports/{name}: every report name
	// is that one resource.
	require.Eventually(t, func() bool {
		status, body := get("/reports/broken")
		return status == http.StatusServiceUnavailable && strings.Contains(body, "(circuitbreaker)")
	}, 10*time.Second, 5*time.Millisecond)
	status, _ = get("/reports/daily")
	assert.Equal(t, http.StatusServiceUnavailable, status, "one resource for every report name")
	assert.Contains(t, out.String(), "breaker GET /reports/{name}: CLOSED → OPEN")
}
