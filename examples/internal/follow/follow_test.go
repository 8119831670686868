package follow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
)

func TestRulesPrintsRemovedAndAdded(t *testing.T) {
	engine := core.NewEngine()
	defer engine.Close()
	var out strings.Builder
	cancel := Rules(&out, engine)
	defer cancel()

	require.NoError(t, engine.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 10, Grade: flow.GradeQPS}}))
	require.NoError(t, engine.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 20, Grade: flow.GradeQPS, LimitApp: "web", ControlBehavior: flow.WarmUp, WarmUpPeriodSec: 10}}))
	got := out.String()
	assert.Contains(t, got, " rules changed: 1 in force\n  + GET /orders: 10 QPS\n")
	assert.Contains(t, got, " rules changed: 1 in force\n  - GET /orders: 10 QPS\n  + GET /orders: 20 QPS for web, warmUp\n")

	cancel()
	require.NoError(t, engine.Flow().Load(nil))
	assert.Equal(t, got, out.String(), "nothing printed after cancel")
}

func TestSummary(t *testing.T) {
	name := "etcd:/k"
	for _, tc := range []struct {
		st   datasource.Status
		want string
	}{
		{datasource.Status{Name: name}, ""},
		{datasource.Status{Name: name, Missing: true, Watching: true}, "document missing, watching"},
		{datasource.Status{Name: name, Revision: "0123456789abcdef", Watching: true}, "revision 0123456789ab, watching"},
		{datasource.Status{Name: name, Revision: "7", FromCache: true,
			WatchErr: fmt.Errorf("datasource: %s: watch: %w", name, errors.New("connection lost")),
			Err:      fmt.Errorf("datasource: %s: read: %w", name, errors.New("connection refused")), Failures: 3},
			"revision 7, from cache, not watching: watch: connection lost, error (3 failures): read: connection refused"},
	} {
		assert.Equal(t, tc.want, summary(tc.st))
	}
}

type statuses struct {
	mu sync.Mutex
	st datasource.Status
}

func (s *statuses) Status() datasource.Status { s.mu.Lock(); defer s.mu.Unlock(); return s.st }
func (s *statuses) set(st datasource.Status)  { s.mu.Lock(); defer s.mu.Unlock(); s.st = st }

// lines hands each Write to the test, one line per Write as Status writes.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

func TestStatusPrintsChangesOnly(t *testing.T) {
	ds := &statuses{st: datasource.Status{Revision: "1", Watching: true}}
	out := make(lines, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Status(ctx, out, ds, time.Millisecond) }()

	next := func() string {
		t.Helper()
		select {
		case l := <-out:
			return l
		case <-time.After(5 * time.Second):
			t.Fatal("no status line")
			return ""
		}
	}
	assert.Regexp(t, `^\d\d:\d\d:\d\d\.\d{3} status: revision 1, watching\n$`, next())
	time.Sleep(20 * time.Millisecond) // many checks, no change
	assert.Empty(t, out, "a line without a change")
	ds.set(datasource.Status{Revision: "2", Watching: true, Err: errors.New("boom"), Failures: 1})
	assert.Regexp(t, ` status: revision 2, watching, error \(1 failures\): boom\n$`, next())

	cancel()
	require.NoError(t, <-done)
}

func TestEnvOr(t *testing.T) {
	t.Setenv("FOLLOW_TEST_VAR", "")
	assert.Equal(t, "def", EnvOr("FOLLOW_TEST_VAR", "def"))
	t.Setenv("FOLLOW_TEST_VAR", "set")
	assert.Equal(t, "set", EnvOr("FOLLOW_TEST_VAR", "def"))
}
