package console_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/consul"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/internal/console"
	"github.com/bulwark-go/bulwark/internal/integration"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// helperEnv makes the test binary an instance (see TestMain): it serves
// an engine's admin page, registers itself beside the document named by
// the variable (a source URL), prints "ready" and runs until it is
// killed.
const helperEnv = "BULWARK_CONSOLE_TEST_INSTANCE"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		beat, _ := time.ParseDuration(os.Getenv(helperEnv + "_BEAT"))
		os.Exit(runInstance(path, os.Getenv(helperEnv+"_ID"), beat))
	}
	os.Exit(m.Run())
}

func runInstance(source, id string, beat time.Duration) int {
	e := core.NewEngine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	go func() { _ = http.Serve(ln, admin.Handler(e)) }()
	c, err := rulechange.Open(context.Background(), source, rulechange.Options{})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	_, err = c.Document().(datasource.Registry).Register(context.Background(), datasource.Instance{ID: id, App: "orders", Version: "v1",
		Addr: ln.Addr().String(), AdminURL: "http://" + ln.Addr().String() + "/", Interval: beat})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ready")
	select {}
}

// startInstance runs the test binary as an instance registered beside
// the document at source (a URL), beating every beat; the returned
// process is killed at the end of the test.
func startInstance(t *testing.T, source, id string, beat time.Duration) *os.Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+source, helperEnv+"_ID="+id, helperEnv+"_BEAT="+beat.String())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	return cmd.Process
}

// engineWithTraffic is an engine whose resource "GET /orders" passed 3
// calls and had 2 blocked by a flow rule of count 3, served by admin on
// an httptest server.
func engineWithTraffic(t *testing.T) *httptest.Server {
	t.Helper()
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	srv := httptest.NewServer(admin.Handler(e))
	t.Cleanup(srv.Close)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 3}}))
	for range 5 {
		if en, err := e.Enter(bg, "GET /orders"); err == nil {
			en.Exit()
		}
	}
	return srv
}

// fleet answers /api/fleet as the client c.
func fleetOf(t *testing.T, c *client) map[string]any {
	t.Helper()
	code, v := c.do(http.MethodGet, "/api/fleet", nil, nil)
	require.Equal(t, http.StatusOK, code, "%v", v)
	return v
}

func instancesOf(v map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, i := range v["instances"].([]any) {
		m := i.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// TestFleetRegisteredAndByHand: instances registered beside a document and
// one named by hand are listed and fetched; the fleet's figures are the
// sums of each instance's.
// TestFleetRegisteredAndByHand: instances registered beside the document
// (in a file's directory, and in a real Consul server's KV under TTL
// sessions) and one named by hand are listed, and their figures summed.
func TestFleetRegisteredAndByHand(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "flow.json")
		src := file.New(path)
		t.Cleanup(func() { _ = src.Close() })
		fleetRegisteredAndByHand(t, "file://"+path, src)
	})
	t.Run("consul", func(t *testing.T) {
		srv := integration.StartConsul(t)
		cfg := consulapi.DefaultConfig()
		cfg.Address = srv.Addr()
		cli, err := consulapi.NewClient(cfg)
		require.NoError(t, err)
		src := consul.New(cli, "bulwark/orders/flow")
		t.Cleanup(func() { _ = src.Close() })
		fleetRegisteredAndByHand(t, src.String(), src)
	})
}

func fleetRegisteredAndByHand(t *testing.T, name string, src datasource.Registry) {
	a, b, manual := engineWithTraffic(t), engineWithTraffic(t), engineWithTraffic(t)
	for id, srv := range map[string]*httptest.Server{"a": a, "b": b} {
		reg, err := src.Register(bg, datasource.Instance{ID: id, App: "orders", Version: "v2", Addr: srv.Listener.Addr().String(), AdminURL: srv.URL + "/"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = reg.Close() })
	}
	s2 := console.New([]console.Document{{Name: name, Registry: src}},
		console.WithUsersFile(users(t)), console.WithInstances(manual.URL+"/"), console.WithRefresh(time.Hour))
	t.Cleanup(func() { _ = s2.Close() })
	ts2 := httptest.NewServer(s2)
	t.Cleanup(ts2.Close)

	c := newClient(t, ts2.URL)
	require.Equal(t, http.StatusOK, c.signIn("vi", "viewer-password"))
	s2.Refresh()
	v := fleetOf(t, c)
	ins := instancesOf(v)
	require.Len(t, ins, 3, "%v", v)
	for _, id := range []string{"a", "b", manual.URL + "/"} {
		require.Contains(t, ins, id)
		assert.Equal(t, "up", ins[id]["state"], "%s: %v", id, ins[id])
	}
	assert.Equal(t, "orders", ins["a"]["app"])
	assert.Equal(t, "v2", ins["a"]["version"])
	assert.Equal(t, name, ins["a"]["source"])
	assert.Equal(t, "", ins[manual.URL+"/"]["source"], "named by hand")

	// The sums are the sums of what each instance said in the same refresh.
	var passed, blocked, flowBlocked float64
	for _, in := range ins {
		code, st := c.do(http.MethodGet, "/api/instance?key="+url(in["key"].(string)), nil, nil)
		require.Equal(t, http.StatusOK, code, "%v", st)
		for _, r := range st["resources"].([]any) {
			r := r.(map[string]any)
			if r["resource"] == "GET /orders" {
				sec := r["second"].(map[string]any)
				passed += sec["passed"].(float64)
				blocked += sec["blocked"].(float64)
				if by, ok := sec["blockedBy"].(map[string]any); ok {
					flowBlocked += by["flow"].(float64)
				}
			}
		}
	}
	var orders map[string]any
	for _, r := range v["resources"].([]any) {
		if r.(map[string]any)["resource"] == "GET /orders" {
			orders = r.(map[string]any)
		}
	}
	require.NotNil(t, orders, "%v", v["resources"])
	assert.Equal(t, 3.0, orders["instances"])
	assert.Equal(t, passed, orders["passed"])
	assert.Equal(t, blocked, orders["blocked"])
	if blocked > 0 {
		assert.Equal(t, flowBlocked, orders["blockedBy"].(map[string]any)["flow"])
	}
}

func url(s string) string { return strings.NewReplacer("#", "%23", "/", "%2F", ":", "%3A").Replace(s) }

// TestFleetSlowInstance: an instance that never answers is shown down
// with the timeout; it delays nobody else's figures (the refresh returns
// while its handler still blocks).
func TestFleetSlowInstance(t *testing.T) {
	stuck := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(stuck) })
	fast := engineWithTraffic(t)
	s, ts := newServer(t, console.WithUsersFile(users(t)), console.WithInstances(slow.URL+"/", fast.URL+"/"),
		console.WithFetchTimeout(200*time.Millisecond))
	c := newClient(t, ts.URL)
	require.Equal(t, http.StatusOK, c.signIn("vi", "viewer-password"))
	s.Refresh()
	ins := instancesOf(fleetOf(t, c))
	assert.Equal(t, "down", ins[slow.URL+"/"]["state"])
	assert.Contains(t, ins[slow.URL+"/"]["why"], "no answer within 200ms")
	assert.Equal(t, "up", ins[fast.URL+"/"]["state"])
}

// TestFleetKilledInstanceStale: three instances (processes) register
// beside a file; one is killed (SIGKILL: its record stays); the console
// shows it stale within its expiry (3 beats of 100 ms), the others up.
func TestFleetKilledInstanceStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.json")
	procs := map[string]*os.Process{}
	for _, id := range []string{"i-1", "i-2", "i-3"} {
		procs[id] = startInstance(t, "file://"+path, id, 100*time.Millisecond)
	}
	src := file.New(path)
	t.Cleanup(func() { _ = src.Close() })
	s := console.New([]console.Document{{Name: path, Registry: src}}, console.WithUsersFile(users(t)), console.WithRefresh(time.Hour))
	t.Cleanup(func() { _ = s.Close() })
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c := newClient(t, ts.URL)
	require.Equal(t, http.StatusOK, c.signIn("vi", "viewer-password"))
	s.Refresh()
	ins := instancesOf(fleetOf(t, c))
	require.Len(t, ins, 3)
	for id, in := range ins {
		assert.Equal(t, "up", in["state"], "%s: %v", id, in)
	}

	require.NoError(t, procs["i-2"].Kill())
	killed := time.Now()
	expiry := datasource.MissedBeats * 100 * time.Millisecond
	var last map[string]map[string]any
	require.Eventually(t, func() bool {
		s.Refresh()
		last = instancesOf(fleetOf(t, c))
		return last["i-2"]["state"] == "stale"
	}, 10*time.Second, 20*time.Millisecond, "the killed instance never showed stale: %v", last)
	t.Logf("shown stale %v after the kill (expiry %v after the last beat)", time.Since(killed).Round(time.Millisecond), expiry)
	assert.Equal(t, "up", last["i-1"]["state"])
	assert.Equal(t, "up", last["i-3"]["state"])
	assert.Contains(t, last["i-2"]["why"], "no beat since")
	assert.Regexp(t, `no beat since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`, last["i-2"]["why"], "24-hour, not RFC 3339")
}
