package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
)

// start runs the service as main runs it, on a loopback listener, with
// the rules file at path, until the test ends. It returns the output, the
// service's base URL, and a function that waits until the output after
// mark holds every want.
func start(t *testing.T, path string) (out *exampletest.Output, base string, waitFor func(mark int, want ...string) int) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	o := exampletest.Start(t, t.Context(), 20*time.Second, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, lis, config{rules: path, statusEvery: 10 * time.Millisecond, log: slog.New(slog.DiscardHandler)})
	})
	o.WaitFor(0, "listening on")
	return o, "http://" + lis.Addr().String(), o.WaitFor
}

func TestTheServiceEnforcesItsRulesFile(t *testing.T) {
	out, base, _ := start(t, exampletest.Shipped(t))
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
	status, _ := get("/health")
	assert.Equal(t, 200, status)
	status, body := get("/orders/1", "X-Caller", "scraper")
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "bulwark: blocked (authority)\n", body)

	// One id: 2 a second (hot parameter), whatever the flow rule admits.
	status, body = get("/orders/7")
	assert.Equal(t, 200, status)
	assert.Equal(t, "order 7\n", body)
	get("/orders/7")
	status, body = get("/orders/7")
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, "bulwark: blocked (paramFlow)\n", body)

	// All ids: 20 a second.
	flowBlocks := 0
	for i := range 40 {
		if status, body := get("/orders/" + strconv.Itoa(100+i)); status == http.StatusTooManyRequests {
			assert.Equal(t, "bulwark: blocked (flow)\n", body)
			flowBlocks++
		}
	}
	assert.Positive(t, flowBlocks, "40 ids in well under two seconds pass 20 a second")

	// Failures open the breaker of GET /reports/{name}: every report name
	// is that one resource.
	require.Eventually(t, func() bool {
		status, body := get("/reports/broken")
		return status == http.StatusServiceUnavailable && body == "bulwark: blocked (degrade)\n"
	}, 10*time.Second, 5*time.Millisecond)
	status, _ = get("/reports/daily")
	assert.Equal(t, http.StatusServiceUnavailable, status, "one resource for every report name")
	assert.Contains(t, out.String(), "breaker GET /reports/{name}: CLOSED → OPEN")
}

// Every kind of the document is followed and printed, and a rejected
// document (an invalid paramFlow rule, a truncated file) is printed with
// its reason while the rules in force stay, as the quickstart prints it.
func TestTheServicePrintsEveryKindAndEveryRejection(t *testing.T) {
	path := exampletest.Shipped(t)
	out, _, waitFor := start(t, path)
	mark := waitFor(0,
		"flow rules changed: 1 in force\n  + GET /orders/{id}: count=20\n",
		"degrade rules changed: 1 in force\n  + GET /reports/{name}: grade=errorCount count=2 timeWindow=10 minRequestAmount=3",
		"authority rules changed: 1 in force\n  + GET /orders/{id}: limitApp=\"scraper\" strategy=black\n",
		"paramFlow rules changed: 1 in force\n  + GET /orders/{id}: count=2",
		"status: revision ")
	assert.NotContains(t, out.String(), "warning")

	good, err := os.ReadFile(path)
	require.NoError(t, err)
	bad := strings.Replace(string(good), `"paramIdx":0,"count":2`, `"paramIdx":0,"count":-5`, 1)
	require.NotEqual(t, string(good), bad)
	exampletest.Save(t, path, bad)
	mark = waitFor(mark, `paramFlow[0] "GET /orders/{id}": count: must be >= 0`, "document rejected: the 4 rules in force stay\n")

	exampletest.Save(t, path, string(good[:len(good)/2])) // truncated
	mark = waitFor(mark, "error (2 failures)", "document rejected: the 4 rules in force stay\n")

	exampletest.Save(t, path, string(good))
	mark = waitFor(mark, "document valid again, rules unchanged (4 in force)\n")

	// A change of a paramFlow rule prints old → new.
	exampletest.Save(t, path, strings.Replace(string(good), `"paramIdx":0,"count":2`, `"paramIdx":0,"count":3`, 1))
	waitFor(mark, "paramFlow rules changed: 1 in force\n  ~ GET /orders/{id}: count 2 → 3\n")
}

// The live page and /metrics are served beside the service, at the URLs
// printed.
func TestTheServiceServesTheLivePageAndMetrics(t *testing.T) {
	out, base, _ := start(t, exampletest.Shipped(t))
	assert.Contains(t, out.String(), "live page: "+base+"/debug/bulwark/\n")
	assert.Contains(t, out.String(), "metrics: "+base+"/metrics\n")
	fetch := func(url string) string {
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, url)
		return string(body)
	}
	fetch(base + "/orders/1")
	assert.Contains(t, fetch(base+"/debug/bulwark/"), "<title>bulwark</title>")
	assert.Contains(t, fetch(base+"/debug/bulwark/api/state"), `"resource":"GET /orders/{id}"`)
	metrics := fetch(base + "/metrics")
	assert.Contains(t, metrics, `bulwark_passed_total{resource="GET /orders/{id}"} `)
	assert.Contains(t, metrics, `bulwark_rules{kind="paramFlow"} 1`)
}

// TestGoRunFindsItsRules runs the README's commands: go run from the
// repository root and from the example's folder follow the rules.json
// beside the source.
func TestGoRunFindsItsRules(t *testing.T) {
	exampletest.GoRun(t, "./examples/http", []string{"-addr", "127.0.0.1:0", "-duration", "500ms"}, func(t *testing.T, out string) {
		assert.NotContains(t, out, "warning")
		assert.Contains(t, out, "paramFlow rules changed: 1 in force")
	})
}
