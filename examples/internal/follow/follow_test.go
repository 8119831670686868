package follow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/datasource"
)

func TestRulesPrintsWhatChanged(t *testing.T) {
	engine := core.NewEngine()
	defer engine.Close()
	var out strings.Builder
	cancel := Rules(&out, engine)
	defer cancel()

	orders := flow.Rule{Resource: "GET /orders", Count: 10, Grade: flow.GradeQPS}
	web := flow.Rule{Resource: "GET /orders", Count: 3, Grade: flow.GradeQPS, LimitApp: "web"}
	items := flow.Rule{Resource: "GET /items", Count: 2, Grade: flow.GradeThread}
	require.NoError(t, engine.Flow().Load([]flow.Rule{orders, web, items}))
	assert.Contains(t, out.String(), " flow rules changed: 3 in force\n  + GET /orders: count=10\n  + GET /orders: limitApp=\"web\" count=3\n  + GET /items: grade=thread count=2\n")

	// The rule for web changes: it pairs with the new rule for web, not
	// with the unchanged default one.
	web2 := web
	web2.Count, web2.ControlBehavior, web2.WarmUpPeriodSec = 20, flow.WarmUp, 10
	web2.ClusterConfig.FlowID = 7
	out.Reset()
	require.NoError(t, engine.Flow().Load([]flow.Rule{orders, web2, items}))
	assert.Regexp(t, `^\d\d:\d\d:\d\d\.\d{3} flow rules changed: 3 in force\n`+
		`  ~ GET /orders: count 3 → 20, controlBehavior reject → warmUp, clusterConfig.flowId 0 → 7, `+
		`clusterConfig.sampleCount 0 → 10, clusterConfig.windowIntervalMs 0 → 1000, clusterConfig.resourceTimeout 0 → 2000, `+
		`clusterConfig.clientOfflineTime 0 → 2000\n$`, out.String()) // the engine holds rules with Java's defaults

	// A removal, an addition and a change of origin.
	web3 := web2
	web3.LimitApp = "mobile"
	out.Reset()
	require.NoError(t, engine.Flow().Load([]flow.Rule{orders, web3, {Resource: "POST /orders", Count: 5, Grade: flow.GradeQPS}}))
	assert.Contains(t, out.String(), " flow rules changed: 3 in force\n"+
		`  ~ GET /orders: limitApp "web" → "mobile"`+"\n"+
		"  - GET /items: grade=thread count=2\n"+
		"  + POST /orders: count=5\n")

	out.Reset()
	require.NoError(t, engine.Flow().Load(nil))
	assert.Contains(t, out.String(), " flow rules changed: none in force, every call passes\n  - GET /orders: count=10\n")

	cancel()
	out.Reset()
	require.NoError(t, engine.Flow().Load([]flow.Rule{orders}))
	assert.Empty(t, out.String(), "nothing printed after cancel")
}

// A rule set of four kinds prints each kind's change, named as the
// document names it, with its own count; a kind emptied while others stay
// says so without claiming that every call passes.
func TestRulesPrintsEveryKind(t *testing.T) {
	engine := core.NewEngine()
	defer engine.Close()
	var out strings.Builder
	defer Rules(&out, engine)()

	set := core.RuleSet{
		Flow:      []flow.Rule{{Resource: "GET /orders/{id}", Count: 20}},
		Hotspot:   []hotspot.Rule{{Resource: "GET /orders/{id}", Count: 2, DurationInSec: 1}},
		Authority: []authority.Rule{{Resource: "GET /orders/{id}", LimitApp: "scraper", Strategy: authority.Black}},
		CircuitBreaker: []circuitbreaker.Rule{{Resource: "GET /reports/{name}", Grade: circuitbreaker.ErrorCount, Count: 2,
			TimeWindow: 10, MinRequestAmount: 3, StatIntervalMs: 1000}},
	}
	require.NoError(t, engine.LoadRuleSet(set))
	got := out.String()
	for _, want := range []string{
		" flow rules changed: 1 in force\n  + GET /orders/{id}: count=20\n",
		" degrade rules changed: 1 in force\n  + GET /reports/{name}: grade=errorCount count=2 timeWindow=10 minRequestAmount=3",
		" authority rules changed: 1 in force\n  + GET /orders/{id}: limitApp=\"scraper\" strategy=black\n",
		" paramFlow rules changed: 1 in force\n  + GET /orders/{id}: count=2",
	} {
		assert.Contains(t, got, want)
	}
	assert.Equal(t, 4, rulesOf(engine).count())

	out.Reset()
	set.Hotspot = nil
	require.NoError(t, engine.LoadRuleSet(set))
	assert.Regexp(t, `^\d\d:\d\d:\d\d\.\d{3} paramFlow rules changed: none in force\n  - GET /orders/\{id\}: count=2`, out.String())
	assert.NotContains(t, out.String(), "every call passes", "three rules of other kinds are in force")
}

func TestSummary(t *testing.T) {
	name := "etcd:/k"
	for _, tc := range []struct {
		st   datasource.Status
		want string
	}{
		{datasource.Status{Name: name}, "nothing applied"},
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

func decodeErr(msg string) error {
	return fmt.Errorf("datasource: f: decode revision 9: %w",
		&converter.DecodeError{Problems: []converter.Problem{{Path: "[0].count", Message: msg, Err: converter.ErrInvalid}}})
}

func TestEvents(t *testing.T) {
	rules := inForce{flow: []flow.Rule{{Resource: "GET /orders", Count: 20, Grade: flow.GradeQPS}}}
	other := inForce{flow: []flow.Rule{{Resource: "GET /orders", Count: 5, Grade: flow.GradeQPS}}}
	two := inForce{flow: rules.flow, paramFlow: []hotspot.Rule{{Resource: "GET /orders", Count: 2, DurationInSec: 1}}}
	twoOther := inForce{flow: rules.flow, paramFlow: []hotspot.Rule{{Resource: "GET /orders", Count: 3, DurationInSec: 1}}}
	readErr := errors.New("datasource: f: read: connection refused")
	applied := datasource.Status{Revision: "1"}
	for _, tc := range []struct {
		name            string
		prev, st        datasource.Status
		now, beforeFail inForce
		want            []string
	}{
		{"nothing changed", applied, applied, rules, inForce{}, nil},
		{"rejected with rules", applied, datasource.Status{Revision: "1", Err: decodeErr("must be >= 0")}, rules, inForce{},
			[]string{"document rejected: the 1 rule in force stays"}},
		{"rejected without rules", datasource.Status{}, datasource.Status{Err: decodeErr("must be >= 0")}, inForce{}, inForce{},
			[]string{"document rejected: no rules in force, every call passes"}},
		{"rejected by the engine", applied, datasource.Status{Revision: "1", Err: fmt.Errorf("set: %w", &core.ValidationError{Kind: "flow"})}, rules, inForce{},
			[]string{"document rejected: the 1 rule in force stays"}},
		{"the same rejection again", datasource.Status{Err: decodeErr("x")}, datasource.Status{Err: decodeErr("x"), Failures: 2}, inForce{}, inForce{}, nil},
		{"another rejection", datasource.Status{Err: decodeErr("x")}, datasource.Status{Err: decodeErr("y")}, inForce{}, inForce{},
			[]string{"document rejected: no rules in force, every call passes"}},
		{"fixed back", datasource.Status{Revision: "1", Err: decodeErr("x")}, datasource.Status{Revision: "3"}, rules, rules,
			[]string{"document valid again, rules unchanged (1 in force)"}},
		{"fixed to other rules", datasource.Status{Revision: "1", Err: decodeErr("x")}, datasource.Status{Revision: "3"}, other, rules,
			[]string{"document valid again"}},
		{"applied in part", applied, datasource.Status{Revision: "2", Err: &core.ValidationError{Kind: "flow", Applied: true}}, other, inForce{},
			[]string{"warning: document applied in part: 1 rule in force, the invalid ones skipped"}},
		{"unreachable", applied, datasource.Status{Revision: "1", Err: readErr}, rules, inForce{},
			[]string{"source unreachable: the 1 rule in force stays"}},
		{"still unreachable", datasource.Status{Revision: "1", Err: readErr}, datasource.Status{Revision: "1", Err: errors.New("timeout")}, rules, inForce{}, nil},
		{"answers again", datasource.Status{Revision: "1", Err: readErr}, applied, rules, rules,
			[]string{"source answers again, rules unchanged (1 in force)"}},
		{"deleted", applied, datasource.Status{Missing: true}, inForce{}, inForce{},
			[]string{"warning: the document was deleted: no rules in force, every call passes"}},
		{"deleted, rules kept", applied, datasource.Status{Missing: true}, rules, inForce{},
			[]string{"warning: the document was deleted: its 1 rule is kept"}},
		{"rejected with rules of two kinds", applied, datasource.Status{Revision: "1", Err: decodeErr("must be >= 0")}, two, inForce{},
			[]string{"document rejected: the 2 rules in force stay"}},
		{"fixed back, two kinds", datasource.Status{Revision: "1", Err: decodeErr("x")}, datasource.Status{Revision: "3"}, two, two,
			[]string{"document valid again, rules unchanged (2 in force)"}},
		{"fixed to another paramFlow rule", datasource.Status{Revision: "1", Err: decodeErr("x")}, datasource.Status{Revision: "3"}, twoOther, two,
			[]string{"document valid again"}},
		{"missing after a failed start", datasource.Status{Err: readErr}, datasource.Status{Missing: true}, inForce{}, inForce{},
			[]string{"source answers again, rules unchanged (0 in force)", "warning: the document does not exist: no rules in force, every call passes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, events(tc.prev, tc.st, tc.now, tc.beforeFail))
		})
	}
}

// statuses is a datasource whose Status the test sets, and which counts
// how often it was asked.
type statuses struct {
	mu    sync.Mutex
	st    datasource.Status
	calls atomic.Int64
}

func (s *statuses) Status() datasource.Status {
	s.calls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}
func (s *statuses) set(st datasource.Status) { s.mu.Lock(); defer s.mu.Unlock(); s.st = st }

// lines hands each Write to the test, one line per Write as Status writes.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// Status runs on the fake clock of a synctest bubble: its ticks are
// counted, not waited for.
func TestStatusPrintsChangesOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		engine := core.NewEngine()
		defer engine.Close()
		rules := []flow.Rule{{Resource: "GET /orders", Count: 20, Grade: flow.GradeQPS}}
		require.NoError(t, engine.Flow().Load(rules))
		ds := &statuses{st: datasource.Status{Revision: "1", Watching: true}}
		out := make(lines, 10)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		const every = time.Millisecond
		since := BaselineOf(engine, ds)
		asked := ds.calls.Load()
		go func() { done <- Status(ctx, out, engine, ds, since, every) }()

		// printed returns what Status printed until it waits for its next
		// tick.
		printed := func() []string {
			synctest.Wait()
			var got []string
			for {
				select {
				case l := <-out:
					got = append(got, l)
				default:
					return got
				}
			}
		}
		got := printed()
		require.Len(t, got, 1)
		assert.Regexp(t, `^\d\d:\d\d:\d\d\.\d{3} status: revision 1, watching\n$`, got[0])
		time.Sleep(5 * every) // five ticks
		assert.Empty(t, printed(), "a line without a change")
		assert.Equal(t, int64(6), ds.calls.Load()-asked, "Status asked at once and at every tick")

		ds.set(datasource.Status{Name: "f", Revision: "1", Watching: true, Err: decodeErr("must be >= 0"), Failures: 1})
		time.Sleep(every)
		got = printed()
		require.Len(t, got, 2)
		assert.Regexp(t, ` status: revision 1, watching, error \(1 failure\): decode revision 9: converter: \[0\]\.count: must be >= 0\n$`, got[0])
		assert.Regexp(t, ` document rejected: the 1 rule in force stays\n$`, got[1])

		ds.set(datasource.Status{Revision: "1", Watching: true})
		time.Sleep(every)
		got = printed()
		require.Len(t, got, 2)
		assert.Regexp(t, ` status: revision 1, watching\n$`, got[0])
		assert.Regexp(t, ` document valid again, rules unchanged \(1 in force\)\n$`, got[1])

		cancel()
		require.NoError(t, <-done)
	})
}

// TestStatusReportsChangesSinceTheBaseline: a change between the
// caller's report on Start (the baseline) and Status's first reading is
// reported; the state the caller reported on is not reported again.
func TestStatusReportsChangesSinceTheBaseline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, then datasource.Status
		want       []string
	}{
		{"another mistake before the first reading", datasource.Status{Err: decodeErr("x")}, datasource.Status{Err: decodeErr("must be >= 0")},
			[]string{`status: nothing applied, error \(0 failures\): datasource: f: decode revision 9: converter: \[0\]\.count: must be >= 0`, "document rejected: no rules in force, every call passes"}},
		{"the mistake reported at Start", datasource.Status{Err: decodeErr("x")}, datasource.Status{Err: decodeErr("x")},
			[]string{`status: nothing applied, error \(0 failures\): datasource: f: decode revision 9: converter: \[0\]\.count: x`}},
		{"fixed before the first reading", datasource.Status{Err: decodeErr("x")}, datasource.Status{Revision: "1"},
			[]string{"status: revision 1", `document valid again, rules unchanged \(0 in force\)`}},
		{"deleted before the first reading", datasource.Status{Revision: "1"}, datasource.Status{Missing: true},
			[]string{"status: document missing", "warning: the document was deleted: no rules in force, every call passes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				engine := core.NewEngine()
				defer engine.Close()
				ds := &statuses{st: tc.base}
				since := BaselineOf(engine, ds)
				ds.set(tc.then)
				out := make(lines, 10)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- Status(ctx, out, engine, ds, since, time.Millisecond) }()
				synctest.Wait()
				cancel()
				require.NoError(t, <-done)
				close(out)
				var got []string
				for l := range out {
					got = append(got, l)
				}
				require.Len(t, got, len(tc.want), "%q", got)
				for i, w := range tc.want {
					assert.Regexp(t, `^\d\d:\d\d:\d\d\.\d{3} `+w+`\n$`, got[i])
				}
			})
		})
	}
}

func TestEnvOr(t *testing.T) {
	t.Setenv("FOLLOW_TEST_VAR", "")
	assert.Equal(t, "def", EnvOr("FOLLOW_TEST_VAR", "def"))
	t.Setenv("FOLLOW_TEST_VAR", "set")
	assert.Equal(t, "set", EnvOr("FOLLOW_TEST_VAR", "def"))
}
