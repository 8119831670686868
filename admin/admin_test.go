package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/integration"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

// drive enters resource n times and returns how many were blocked.
func drive(e *core.Engine, resource string, n int) int {
	blocked := 0
	for range n {
		en, err := e.Enter(bg, resource)
		if err != nil {
			blocked++
			continue
		}
		en.Exit()
	}
	return blocked
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestHandlerServesStateAndPage(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 2}}))
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 3}}))
	mux := http.NewServeMux()
	mux.Handle("/debug/bulwark/", admin.Handler(e))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, body := get(t, srv.URL+"/debug/bulwark/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.Contains(t, string(body), `fetch("api/state"`)
	assert.False(t, regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|<link`).Match(body),
		"nothing is loaded from elsewhere")

	blocked := drive(e, "GET /orders", 5)
	require.Equal(t, 2, blocked)
	resp, body = get(t, srv.URL+"/debug/bulwark/api/state")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var st struct {
		Resources []struct {
			Resource string
			Second   struct {
				Passed, Blocked int64
				BlockedBy       map[string]int64
			}
			History *struct{ Passed []int64 }
		}
		Rules []struct {
			Kind  string
			Count int
			Rules []map[string]any
		}
		Events []struct {
			Kind    string
			Changed []string
			Added   []string
		}
	}
	require.NoError(t, json.Unmarshal(body, &st), string(body))
	require.Len(t, st.Resources, 1)
	r := st.Resources[0]
	assert.Equal(t, "GET /orders", r.Resource)
	assert.Equal(t, int64(3), r.Second.Passed)
	assert.Equal(t, map[string]int64{"flow": 2}, r.Second.BlockedBy)
	require.NotNil(t, r.History)
	assert.Len(t, r.History.Passed, 60)
	require.Len(t, st.Rules, 5)
	assert.Equal(t, "flow", st.Rules[0].Kind)
	assert.Equal(t, 1, st.Rules[0].Count)
	assert.Equal(t, 3.0, st.Rules[0].Rules[0]["count"], "Sentinel's JSON")
	require.Len(t, st.Events, 2)
	assert.Equal(t, []string{"GET /orders: count 2 → 3"}, st.Events[0].Changed, "newest first")
	assert.Equal(t, []string{"GET /orders: count=2"}, st.Events[1].Added)
}

func TestHandlerIsReadOnly(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	srv := httptest.NewServer(admin.Handler(e))
	defer srv.Close()
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, err := http.NewRequest(m, srv.URL+"/api/state", strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
	}
	resp, _ := get(t, srv.URL+"/nothing")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestHandlerShowsShadowBlocks: what a shadow rule would have blocked is
// in the state, by kind, apart from the blocks.
func TestHandlerShowsShadowBlocks(t *testing.T) {
	e := core.NewEngine()
	defer e.Close()
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: 1, Shadow: true}}))
	srv := httptest.NewServer(admin.Handler(e))
	defer srv.Close()
	require.Zero(t, drive(e, "r", 4))
	_, body := get(t, srv.URL+"/api/state")
	var st struct {
		Resources []struct {
			Second struct {
				Blocked       int64
				ShadowBlocked map[string]int64
			}
		}
	}
	require.NoError(t, json.Unmarshal(body, &st), string(body))
	require.Len(t, st.Resources, 1)
	assert.Zero(t, st.Resources[0].Second.Blocked)
	assert.Equal(t, map[string]int64{"flow": 3}, st.Resources[0].Second.ShadowBlocked)
}

// TestHandlerShowsClusterHealth: the health of a Redis token service whose
// Redis refuses connections; without a token service there is none.
func TestHandlerShowsClusterHealth(t *testing.T) {
	plain := core.NewEngine()
	defer plain.Close()
	srv := httptest.NewServer(admin.Handler(plain))
	defer srv.Close()
	_, body := get(t, srv.URL+"/api/state")
	assert.NotContains(t, string(body), `"cluster"`)

	client := goredis.NewClient(&goredis.Options{Addr: integration.RefusedAddr(t), MaxRetries: -1})
	defer client.Close()
	ts := redis.New(client, redis.WithTimeout(time.Minute)) // the refusal, not the timeout, is the error
	defer ts.Close()
	e := core.NewEngine(core.WithTokenService(ts))
	defer e.Close()
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "r", Count: 10, ClusterMode: true,
		ClusterConfig: flow.ClusterConfig{FlowID: 1, ThresholdType: 1, FallbackToLocalWhenFail: true}}}))
	require.Zero(t, drive(e, "r", 1), "the local fallback admits")
	srv2 := httptest.NewServer(admin.Handler(e))
	defer srv2.Close()
	_, body = get(t, srv2.URL+"/api/state")
	var st struct {
		Cluster *struct {
			Healthy             bool
			Since               time.Time
			Failures            int
			Err                 string
			Requests, Fallbacks uint64
		}
	}
	require.NoError(t, json.Unmarshal(body, &st), string(body))
	require.NotNil(t, st.Cluster, string(body))
	c := st.Cluster
	assert.False(t, c.Healthy)
	assert.False(t, c.Since.IsZero())
	assert.Positive(t, c.Failures)
	assert.Contains(t, c.Err, "connection refused")
	assert.Equal(t, uint64(1), c.Requests)
	assert.Equal(t, uint64(1), c.Fallbacks)
}
