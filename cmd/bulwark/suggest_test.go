package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/internal/testclock"
	"github.com/bulwark-go/bulwark/internal/testtraffic"
)

// inForce is the flow document the service of TestSuggest follows.
const inForce = `[{"resource":"GET /orders","count":1000}]`

// TestSuggest runs an engine that measured known traffic behind its admin
// page, asks the binary for suggestions, and checks them against the
// traffic: 40 s of GET /orders, 100 entries a second and 150 in one, 20 ms
// each and 40 ms in one second, 10 failing in one second.
func TestSuggest(t *testing.T) {
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	rules, err := converter.FlowRules().Convert([]byte(inForce))
	require.NoError(t, err)
	require.NoError(t, e.Flow().Load(rules))
	e.Stats()
	for i := range 40 {
		l := testtraffic.Load{Resource: "GET /orders", N: 100, RT: 20 * time.Millisecond}
		switch i {
		case 10:
			l.N = 150
		case 15:
			l.RT = 40 * time.Millisecond
		case 20:
			l.Failed = 10
		}
		require.NoError(t, testtraffic.Second(e, clk, l))
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/bulwark/", admin.Handler(e))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	page := srv.URL + "/debug/bulwark/"

	r := bulwark(t, "suggest", "--from", page)
	require.Equal(t, 0, r.code, r)
	flow, err := converter.FlowRules().Convert([]byte(r.stdout))
	require.NoError(t, err, r.stdout)
	require.Len(t, flow, 2, "the rule in force and the suggestion")
	assert.Equal(t, rules[0], flow[0])
	assert.Equal(t, "GET /orders", flow[1].Resource)
	assert.True(t, flow[1].Shadow)
	assert.Equal(t, 195.0, flow[1].Count, "ceil(1.3 × 150)")
	assert.Contains(t, r.stderr, "factor 1.3, every rule in shadow")
	assert.Contains(t, r.stderr, "GET /orders: peak 150/s at ")
	assert.Contains(t, r.stderr, "flow count 195; slow-call breaker at 52 ms (peak avg RT 40.0 ms); error-ratio breaker at 0.2 (peak 0.1)")

	// Ready for validate and apply: applied to the document the service
	// follows, it only adds the shadow rule.
	dir := t.TempDir()
	printed := writeFile(t, dir, "suggested.json", r.stdout)
	// The suggestion is in fmt's compact form: kept in git beside fmt'd
	// documents, it changes only what it suggests.
	assert.NotContains(t, r.stdout, `"refResource"`)
	f := bulwark(t, "fmt", "--check", printed)
	require.Equal(t, 0, f.code, f)
	v := bulwark(t, "validate", printed)
	require.Equal(t, 0, v.code, v)
	source := writeFile(t, dir, "flow.json", inForce)
	a := bulwark(t, "apply", "--dry-run", source, printed)
	require.Equal(t, 0, a.code, a)
	assert.Contains(t, a.stdout, "+ GET /orders")
	assert.NotContains(t, a.stdout, "- GET /orders")
	assert.NotContains(t, a.stdout, "~ GET /orders")

	// The breakers, and another factor and period; the api/suggest URL
	// works too.
	r = bulwark(t, "suggest", "--from", page+"api/suggest", "--kind", "degrade", "--factor", "2", "--period", "1m")
	require.Equal(t, 0, r.code, r)
	breakers, err := converter.CircuitBreakerRules().Convert([]byte(r.stdout))
	require.NoError(t, err, r.stdout)
	require.Len(t, breakers, 2)
	assert.Equal(t, circuitbreaker.SlowRequestRatio, breakers[0].Grade)
	assert.Equal(t, 80.0, breakers[0].Count, "2 × 40 ms")
	assert.Equal(t, circuitbreaker.ErrorRatio, breakers[1].Grade)
	assert.Equal(t, 0.2, breakers[1].Count)
	for _, b := range breakers {
		assert.True(t, b.Shadow)
	}
	r = bulwark(t, "suggest", "--from", srv.URL+"/debug/bulwark", "--kind", "ruleset")
	require.Equal(t, 0, r.code, r)
	rs, err := converter.RuleSet().Convert([]byte(r.stdout))
	require.NoError(t, err, r.stdout)
	assert.Equal(t, flow, rs.Flow)
	assert.Len(t, rs.CircuitBreaker, 2)
	v = bulwark(t, "validate", writeFile(t, dir, "ruleset.json", r.stdout))
	require.Equal(t, 0, v.code, v)
}

func TestSuggestErrors(t *testing.T) {
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	srv := httptest.NewServer(admin.Handler(e))
	t.Cleanup(srv.Close)

	r := bulwark(t, "suggest")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "--from URL is required")
	r = bulwark(t, "suggest", "--from", srv.URL, "--factor", "0.5")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, `admin: factor "0.5"`)
	r = bulwark(t, "suggest", "--from", srv.URL, "--kind", "system")
	assert.Equal(t, 2, r.code, r)
	r = bulwark(t, "suggest", "--from", "etcd://127.0.0.1:2379/key")
	assert.Equal(t, 2, r.code, r)

	// Nothing measured: the rules in force (none), and it says so.
	r = bulwark(t, "suggest", "--from", srv.URL)
	require.Equal(t, 0, r.code, r)
	assert.JSONEq(t, "[]", r.stdout)
	assert.Contains(t, r.stderr, "no resource had traffic")

	// Not an admin page; nobody listening.
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	r = bulwark(t, "suggest", "--from", other.URL)
	assert.Equal(t, 4, r.code, r)
	assert.Contains(t, r.stderr, "404 Not Found")
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	r = bulwark(t, "suggest", "--from", "http://alice:s3cret@"+closed.Listener.Addr().String()+"/", "--timeout", "2s")
	assert.Equal(t, 4, r.code, r)
	assert.NotContains(t, r.stderr, "s3cret")
}
