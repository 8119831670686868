package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/codec"
	"github.com/bulwark-go/bulwark/internal/testclock"
	"github.com/bulwark-go/bulwark/internal/testtraffic"
)

// knownTraffic returns an engine on a test clock that measured 40 s of
// GET /orders: 100 entries a second, 150 in second 10; 20 ms each, 40 ms
// in second 15; 10 of them failing in second 20. An enforcing flow rule
// of 1000 is in force.
func knownTraffic(t *testing.T) *core.Engine {
	t.Helper()
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 1000}}))
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
	return e
}

func TestSuggestAPI(t *testing.T) {
	e := knownTraffic(t)
	srv := httptest.NewServer(admin.Handler(e))
	defer srv.Close()

	resp, body := get(t, srv.URL+"/api/suggest?period=5m&factor=1.3")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var s struct {
		Period    string
		Factor    float64
		Resources []struct {
			Resource       string
			Seconds        int
			PeakQPS        int64 `json:"peakQps"`
			PeakAt         *time.Time
			PeakErrorRatio float64
			PeakAvgRTMs    float64 `json:"peakAvgRtMs"`
			Flow           json.RawMessage
			Degrade        json.RawMessage
		}
		Documents struct{ Flow, Degrade, RuleSet json.RawMessage }
	}
	require.NoError(t, json.Unmarshal(body, &s), string(body))
	assert.Equal(t, "5m0s", s.Period)
	assert.Equal(t, 1.3, s.Factor)
	require.Len(t, s.Resources, 1)
	r := s.Resources[0]
	assert.Equal(t, "GET /orders", r.Resource)
	assert.Equal(t, 40, r.Seconds)
	assert.Equal(t, int64(150), r.PeakQPS)
	require.NotNil(t, r.PeakAt)
	assert.Equal(t, 0.1, r.PeakErrorRatio)
	assert.Equal(t, 40.0, r.PeakAvgRTMs)

	suggested, err := converter.FlowRules().Convert(r.Flow)
	require.NoError(t, err)
	want := flow.Rule{Resource: "GET /orders", Count: 195, Shadow: true}.WithDefaults()
	assert.Equal(t, []flow.Rule{want}, suggested, "ceil(1.3 × 150)")
	breakers, err := converter.CircuitBreakerRules().Convert(r.Degrade)
	require.NoError(t, err)
	require.Len(t, breakers, 2)
	assert.Equal(t, circuitbreaker.SlowRequestRatio, breakers[0].Grade)
	assert.Equal(t, 52.0, breakers[0].Count, "ceil(1.3 × 40 ms)")
	assert.Equal(t, circuitbreaker.ErrorRatio, breakers[1].Grade)
	assert.Equal(t, 0.2, breakers[1].Count, "0.1 above the peak ratio 0.1")

	// The documents: the rules in force with the suggestions beside them.
	doc, err := converter.FlowRules().Convert(s.Documents.Flow)
	require.NoError(t, err)
	assert.Equal(t, []flow.Rule{e.Flow().Rules()[0], want}, doc)
	degrade, err := converter.CircuitBreakerRules().Convert(s.Documents.Degrade)
	require.NoError(t, err)
	assert.Equal(t, breakers, degrade)
	rs, err := converter.RuleSet().Convert(s.Documents.RuleSet)
	require.NoError(t, err)
	assert.Equal(t, doc, rs.Flow)
	assert.Equal(t, degrade, rs.CircuitBreaker)
	// In the compact form bulwark suggest prints: only what differs from
	// Java's defaults.
	for name, d := range map[string]json.RawMessage{"flow": s.Documents.Flow, "degrade": s.Documents.Degrade, "ruleset": s.Documents.RuleSet, "resource flow": r.Flow, "resource degrade": r.Degrade} {
		assert.NotContains(t, string(d), `"refResource"`, name)
		assert.NotContains(t, string(d), `"statIntervalMs":1000`, name)
		assert.NotContains(t, string(d), `"clusterMode":false`, name)
	}
	want0, err := codec.EncodeCompact(converter.FlowRules(), doc)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, want0))
	assert.Equal(t, buf.String(), string(s.Documents.Flow))

	for _, q := range []string{"period=forever", "period=2h", "period=-1m", "factor=0.5", "factor=NaN", "factor=11"} {
		resp, body := get(t, srv.URL+"/api/suggest?"+q)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		assert.Contains(t, string(body), "admin: ", q)
	}
}

func TestSuggestAPIWithoutTraffic(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	srv := httptest.NewServer(admin.Handler(e))
	defer srv.Close()
	resp, body := get(t, srv.URL+"/api/suggest")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var s struct {
		Period    string
		Resources []any
		Documents struct{ Flow, Degrade json.RawMessage }
	}
	require.NoError(t, json.Unmarshal(body, &s), string(body))
	assert.Equal(t, "10m0s", s.Period, "the default")
	assert.Empty(t, s.Resources)
	assert.JSONEq(t, "[]", string(s.Documents.Flow))
	assert.JSONEq(t, "[]", string(s.Documents.Degrade))
}

// TestBaselineKeptFromMount: the baseline behind /api/suggest is kept from
// the engine's making, not from the first request: a service
// whose page nobody opened for an hour still has its hour. Time is
// synctest's, the engine's clock the real one.
func TestBaselineKeptFromMount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := core.NewEngine()
		defer e.Close()
		h := admin.Handler(e)
		for range 40 {
			for range 50 {
				en, err := e.Enter(context.Background(), "GET /quiet-page")
				require.NoError(t, err)
				en.Exit()
			}
			time.Sleep(time.Second)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/suggest?period=5m", nil))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var s struct {
			Resources []struct {
				Resource string
				PeakQPS  int64 `json:"peakQps"`
				Flow     []flow.Rule
			}
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &s))
		require.Len(t, s.Resources, 1, rec.Body.String())
		assert.Equal(t, "GET /quiet-page", s.Resources[0].Resource)
		assert.Equal(t, int64(50), s.Resources[0].PeakQPS)
		require.Len(t, s.Resources[0].Flow, 1, rec.Body.String())
		assert.Equal(t, 65.0, s.Resources[0].Flow[0].Count, "ceil(1.3 × 50)")
	})
}
