package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/integration"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// backend gives a test a source URL for a key of a real config center (or a
// file), and the server behind it (nil for files).
type backend struct {
	name  string
	start func(t *testing.T) (url func(key string) string, srv *integration.Server)
}

var backends = []backend{
	{"file", func(t *testing.T) (func(string) string, *integration.Server) {
		dir := t.TempDir()
		return func(k string) string { return filepath.Join(dir, k+"-flow.json") }, nil
	}},
	{"etcd", func(t *testing.T) (func(string) string, *integration.Server) {
		srv := integration.StartEtcd(t)
		return func(k string) string { return "etcd://" + srv.Addr() + "/bulwark/" + k + "/flow" }, srv
	}},
	{"redis", func(t *testing.T) (func(string) string, *integration.Server) {
		srv := integration.StartRedis(t)
		return func(k string) string { return "redis://" + srv.Addr() + "/bulwark:" + k + ":flow" }, srv
	}},
	{"zookeeper", func(t *testing.T) (func(string) string, *integration.Server) {
		srv := integration.StartZooKeeper(t)
		return func(k string) string { return "zk://" + srv.Addr() + "/bulwark/" + k + "/flow" }, srv
	}},
	{"nacos", func(t *testing.T) (func(string) string, *integration.Server) {
		srv := integration.StartNacos(t)
		return func(k string) string { return "nacos://" + srv.Addr() + "/" + k + "-flow-rules?group=SENTINEL_GROUP" }, srv
	}},
	{"consul", func(t *testing.T) (func(string) string, *integration.Server) {
		srv := integration.StartConsul(t)
		return func(k string) string { return "consul://" + srv.Addr() + "/bulwark/" + k + "/flow?dc=dc1" }, srv
	}},
}

// TestBackends runs every scenario against a file and against real etcd,
// Redis, ZooKeeper, Nacos-protocol and Consul servers (skipped without them, unless
// BULWARK_IT_REQUIRE=1).
func TestBackends(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			url, srv := b.start(t)
			t.Run("ApplyThenGet", func(t *testing.T) { testApplyThenGet(t, url("apply")) })
			t.Run("RacingApplies", func(t *testing.T) { testRacingApplies(t, url("race")) })
			t.Run("Set", func(t *testing.T) { testSet(t, url("set")) })
			t.Run("HistoryAndRollback", func(t *testing.T) { testHistoryAndRollback(t, url("history")) })
			t.Run("Edit", func(t *testing.T) { testEdit(t, url("edit")) })
			t.Run("Watch", func(t *testing.T) { testWatch(t, url("watch")) })
			t.Run("LargeHistory", func(t *testing.T) { testLargeHistory(t, url("large")) })
			t.Run("Canary", func(t *testing.T) { testCanary(t, url("canary")) })
			t.Run("PromoteConflict", func(t *testing.T) { testPromoteConflict(t, url("conflict")) })
			t.Run("StatusLists", func(t *testing.T) { testStatusLists(t, url("status")) })
			if srv != nil {
				t.Run("Unresponsive", func(t *testing.T) { testUnresponsive(t, srv, url("paused")) })
			}
		})
	}
}

var (
	flowV2 = strings.Replace(goodFlow, `"count": 100`, `"count": 200`, 1)
	flowA  = `[{"resource":"GET /orders","count":111}]`
	flowB  = `[{"resource":"GET /orders","count":222}]`
)

// waitDoc waits until get returns want: a Nacos-protocol server answers
// reads from a cache refreshed every second, so a read right after a write
// may return the document it replaced.
func waitDoc(t *testing.T, src, want string) {
	t.Helper()
	var last result
	require.Eventually(t, func() bool {
		last = bulwark(t, "get", src)
		return last.code == 0 && last.stdout == want
	}, 30*time.Second, 100*time.Millisecond, "get %s never returned\n%s\nlast:\n%s", src, want, &last)
}

// seed applies doc and waits until it can be read back.
func seed(t *testing.T, src, doc string) {
	t.Helper()
	f := writeFile(t, t.TempDir(), "seed.json", doc)
	r := bulwark(t, "apply", "--yes", "--author", "seed", src, f)
	require.Equal(t, 0, r.code, r)
	waitDoc(t, src, doc)
}

// historyOf waits until the history of src has n entries and returns them.
func historyOf(t *testing.T, src string, n int) []rulechange.Entry {
	t.Helper()
	var es []rulechange.Entry
	var last result
	require.Eventually(t, func() bool {
		last = bulwark(t, "history", "--json", src)
		es = nil
		return last.code == 0 && json.Unmarshal([]byte(last.stdout), &es) == nil && len(es) == n
	}, 30*time.Second, 100*time.Millisecond, "history never had %d entries; last:\n%s", n, &last)
	return es
}

func testApplyThenGet(t *testing.T, src string) {
	dir := t.TempDir()
	v1 := writeFile(t, dir, "v1.json", goodFlow)
	v2 := writeFile(t, dir, "v2.json", flowV2)

	r := bulwark(t, "get", src)
	require.Equal(t, 0, r.code, r)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "does not exist")

	r = bulwark(t, "apply", src, v1, "--yes")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "(does not exist)\n+++ "+v1+"\n")
	assert.Contains(t, r.stdout, "+ GET /orders: count 100\n+ GET /items: count 20, controlBehavior warmUp, warmUpPeriodSec 5\n2 rules: 2 added\n")
	assert.Contains(t, r.stdout, "written: ")
	waitDoc(t, src, goodFlow)

	r = bulwark(t, "get", "--json", src)
	require.Equal(t, 0, r.code, r)
	var got struct {
		Revision, Document string
		Missing            bool
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	assert.NotEmpty(t, got.Revision)
	assert.False(t, got.Missing)
	assert.Equal(t, goodFlow, got.Document)

	r = bulwark(t, "diff", src, v1)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "no changes\n")
	r = bulwark(t, "diff", src, v2)
	require.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders: count 100 → 200\n1 rule: 1 changed\n")

	r = bulwark(t, "apply", "--dry-run", src, v2)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders: count 100 → 200\n")
	assert.Contains(t, r.stdout, "dry run: nothing written\n")
	r = tty(t, "n\n", nil, "apply", src, v2)
	require.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "not confirmed: nothing written")
	r = bulwark(t, "get", src)
	assert.Equal(t, goodFlow, r.stdout, "neither the dry run nor the refused apply wrote")

	r = tty(t, "y\n", nil, "apply", src, v2)
	require.Equal(t, 0, r.code, r)
	waitDoc(t, src, flowV2)
}

func testRacingApplies(t *testing.T, src string) {
	seed(t, src, goodFlow)
	dir := t.TempDir()
	a := writeFile(t, dir, "a.json", flowA)
	b := writeFile(t, dir, "b.json", flowB)
	// Both read the document and wait at the question; then alice says
	// yes, then bob: bob's compare-and-set is against a revision that
	// is gone.
	pa := startTTY(t, nil, "apply", "--author", "alice", src, a)
	pb := startTTY(t, nil, "apply", "--author", "bob", src, b)
	require.Eventually(t, func() bool {
		return strings.Contains(pa.errOut.String(), "write this to") && strings.Contains(pb.errOut.String(), "write this to")
	}, 30*time.Second, 20*time.Millisecond)
	_, err := io.WriteString(pa.stdin, "y\n")
	require.NoError(t, err)
	ra := pa.wait(t)
	require.Equal(t, 0, ra.code, ra)
	_, err = io.WriteString(pb.stdin, "y\n")
	require.NoError(t, err)
	rb := pb.wait(t)
	require.Equal(t, 3, rb.code, rb)
	assert.Contains(t, rb.stderr, "changed since it was read at revision")
	assert.Contains(t, rb.stderr, "nothing written")
	assert.NotContains(t, rb.stdout, "written: ")

	waitDoc(t, src, flowA)
	es := historyOf(t, src, 2)
	assert.Equal(t, "alice", es[1].Author)
	assert.Equal(t, []string{"~ GET /orders: count 100 → 111", "- GET /items: count 20, controlBehavior warmUp, warmUpPeriodSec 5"}, es[1].Diff)
	r := bulwark(t, "get", src)
	assert.Equal(t, flowA, r.stdout, "bob wrote nothing")
}

// dashboardTwo is a dashboard document with two rules: set keeps its
// entity fields and the other rule's text.
const dashboardTwo = `[
{"id":3,"app":"order-service","gmtCreate":1700000000000,"resource":"GET /orders","count":50,"grade":1},
{"id":4,"app":"order-service","gmtCreate":1700000000001,"resource":"GET /items","count":10,"grade":1}
]
`

func testSet(t *testing.T, src string) {
	seed(t, src, dashboardTwo)
	r := bulwark(t, "set", "--yes", "--author", "carol", src, "GET /orders", "count=250", "controlBehavior=warmUp")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "~ GET /orders: count 50 → 250, controlBehavior reject → warmUp\n")
	want := strings.Replace(dashboardTwo, `"count":50,"grade":1}`, `"count":250,"grade":1,"controlBehavior":1}`, 1)
	r = bulwark(t, "get", src)
	waitDoc(t, src, want)

	// Two sets at once on two rules: whichever loses the compare-and-set
	// reads again; neither edit is lost.
	p1 := start(t, nil, "set", "--yes", src, "GET /orders", "count=300")
	p2 := start(t, nil, "set", "--yes", src, "GET /items", "count=30")
	r1, r2 := p1.wait(t), p2.wait(t)
	require.Equal(t, 0, r1.code, r1)
	require.Equal(t, 0, r2.code, r2)
	want = strings.Replace(strings.Replace(want, `"count":250`, `"count":300`, 1), `"count":10`, `"count":30`, 1)
	waitDoc(t, src, want)

	r = bulwark(t, "set", "--yes", src, "GET /nothing", "count=1")
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, `no rule of resource "GET /nothing" matches (resources: GET /orders, GET /items)`)
	r = bulwark(t, "set", "--yes", src, "GET /orders", "count=-1")
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, `the changed rule is not valid, nothing written: converter: [0] "GET /orders": count: must be >= 0`)
	r = bulwark(t, "get", src)
	assert.Equal(t, want, r.stdout)
}

func testHistoryAndRollback(t *testing.T, src string) {
	dir := t.TempDir()
	v1 := writeFile(t, dir, "v1.json", goodFlow)
	v2 := writeFile(t, dir, "v2.json", flowV2)
	r := bulwark(t, "apply", "--yes", "--author", "alice", src, v1)
	require.Equal(t, 0, r.code, r)
	waitDoc(t, src, goodFlow)
	r = bulwark(t, "apply", "--yes", "--author", "bob", src, v2)
	require.Equal(t, 0, r.code, r)
	waitDoc(t, src, flowV2)

	es := historyOf(t, src, 2)
	assert.Equal(t, 1, es[0].Seq)
	assert.Equal(t, "alice", es[0].Author)
	assert.Equal(t, "apply", es[0].Command)
	assert.Nil(t, es[0].Previous, "alice created the document")
	assert.Empty(t, es[0].From)
	assert.Equal(t, 2, es[1].Seq)
	assert.Equal(t, "bob", es[1].Author)
	assert.Equal(t, es[0].To, es[1].From)
	assert.Equal(t, []string{"~ GET /orders: count 100 → 200"}, es[1].Diff)
	require.NotNil(t, es[1].Previous)
	assert.Equal(t, goodFlow, *es[1].Previous)
	assert.False(t, es[1].Time.Before(es[0].Time))

	r = bulwark(t, "history", src)
	require.Equal(t, 0, r.code, r)
	assert.Regexp(t, `(?m)^#1 \S+ \S+  alice  apply  revision none → \S+\n    \+ GET /orders: count 100\n    \+ GET /items: count 20, controlBehavior warmUp, warmUpPeriodSec 5\n#2 \S+ \S+  bob  apply  revision \S+ → \S+\n    ~ GET /orders: count 100 → 200\n$`, r.stdout)

	// carol rolls back bob's change: alice's document again, recorded.
	r = bulwark(t, "rollback", "--yes", "--author", "carol", src)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "+++ the document before change #2 (apply by bob)\n~ GET /orders: count 200 → 100\n")
	waitDoc(t, src, goodFlow)
	es = historyOf(t, src, 3)
	assert.Equal(t, "carol", es[2].Author)
	assert.Equal(t, "rollback 2", es[2].Command)
	assert.Equal(t, es[1].To, es[2].From)

	// Rolling back the change that created the document leaves no rules.
	r = bulwark(t, "rollback", "--yes", src, "1")
	require.Equal(t, 0, r.code, r)
	waitDoc(t, src, "[]\n")
	historyOf(t, src, 4)

	r = bulwark(t, "rollback", "--yes", src, "99")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "no change #99 in the history")
}

func testEdit(t *testing.T, src string) {
	seed(t, src, goodFlow)
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	// The first save breaks a rule; told so, the "user" fixes it.
	editor := writeFile(t, dir, "editor.sh", fmt.Sprintf(`#!/bin/sh
n=$(cat %[1]s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s
if [ $n = 1 ]; then sed -i 's/"count": 100/"count": -5/' "$1"; else sed -i 's/"count": -5/"count": 150/' "$1"; fi
`, count))
	require.NoError(t, os.Chmod(editor, 0o755))
	r := tty(t, "y\n", []string{"EDITOR=" + editor, "VISUAL="}, "edit", "--author", "dave", src)
	require.Equal(t, 0, r.code, r)
	assert.Regexp(t, `\.json:2:31: \[0\] "GET /orders": count: must be >= 0\n`, r.stderr)
	assert.Contains(t, r.stderr, "opening the editor again")
	assert.Contains(t, r.stdout, "+++ your edit\n~ GET /orders: count 100 → 150\n")
	n, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, "2\n", string(n))
	waitDoc(t, src, strings.Replace(goodFlow, `"count": 100`, `"count": 150`, 1))
	es := historyOf(t, src, 2)
	assert.Equal(t, "dave", es[1].Author)
	assert.Equal(t, "edit", es[1].Command)
}

func testWatch(t *testing.T, src string) {
	seed(t, src, goodFlow)
	w := start(t, nil, "watch", src)
	require.Eventually(t, func() bool { return strings.Contains(w.out.String(), "watching ") }, 30*time.Second, 20*time.Millisecond, "stdout: %s\nstderr: %s", w.out, w.errOut)
	// Another writer changes the document.
	v2 := writeFile(t, t.TempDir(), "v2.json", flowV2)
	r := bulwark(t, "apply", "--yes", src, v2)
	require.Equal(t, 0, r.code, r)
	require.Eventually(t, func() bool {
		return strings.Contains(w.out.String(), "~ GET /orders: count 100 → 200\n1 rule: 1 changed\n")
	}, 30*time.Second, 20*time.Millisecond, "stdout: %s\nstderr: %s", w.out, w.errOut)
	assert.Regexp(t, `\n\d{4}-\d\d-\d\dT\S+ \S+ revision \S+\n~ GET /orders: count 100 → 200\n`, w.out.String())
	w.interrupt(t)
	rw := w.wait(t)
	assert.Equal(t, 0, rw.code, rw)
}

// testUnresponsive: a server that accepts connections and answers nothing
// makes a command fail with exit code 4 once --timeout is over.
func testUnresponsive(t *testing.T, srv *integration.Server, src string) {
	ctx := context.Background()
	require.NoError(t, srv.Pause(ctx))
	defer func() { require.NoError(t, srv.Resume(ctx)) }()
	began := time.Now()
	r := bulwark(t, "get", "--timeout", "1s", "--password", "s3cret", src)
	took := time.Since(began)
	require.Equal(t, 4, r.code, r)
	assert.NotContains(t, r.stdout+r.stderr, "s3cret")
	// Bounded by the timeout, not by a client's own retries (a loose
	// bound: the process also starts and dials).
	assert.Less(t, took, 10*time.Second)
}

// TestUnreachable: nothing listens at the address; every kind of center
// fails with exit code 4 and names the source, in one line: the clients'
// logs are shown with -v only.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	r := bulwark(t, "get", "-v", "--timeout", "1s", "redis://"+addr+"/k")
	require.Equal(t, 4, r.code, r)
	assert.Regexp(t, `level=DEBUG msg="redis: connection pool: failed to dial after \d+ attempts: [^"]*" client=redis\n`, r.stderr)
	for _, src := range []string{
		"etcd://" + addr + "/bulwark/svc/flow",
		"redis://" + addr + "/bulwark:svc:flow",
		"zk://" + addr + "/bulwark/svc/flow",
		"nacos://" + addr + "/svc-flow-rules",
		"consul://" + addr + "/bulwark/svc/flow",
	} {
		t.Run(strings.SplitN(src, ":", 2)[0], func(t *testing.T) {
			began := time.Now()
			r := bulwark(t, "get", "--timeout", "1s", src)
			took := time.Since(began)
			require.Equal(t, 4, r.code, r)
			assert.Contains(t, r.stderr, strings.SplitN(src, "/", 3)[0]+"//"+addr)
			assert.Less(t, took, 10*time.Second)
			// The client libraries' own logs stay out of the output: the
			// error is the CLI's one line.
			assert.Regexp(t, `^bulwark get: [^\n]*\n$`, r.stderr)
		})
	}
}

// testLargeHistory: the history is bounded in bytes (--history-bytes) as
// well as in entries: the oldest entries give way, the newest is always
// recorded whole.
func testLargeHistory(t *testing.T, src string) {
	dir := t.TempDir()
	for round := 1; round <= 3; round++ {
		var b strings.Builder
		b.WriteString("[")
		for i := range 150 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"resource":"GET /api/v1/resource-%03d","count":%d}`, i, round*10)
		}
		b.WriteString("]")
		f := writeFile(t, dir, fmt.Sprintf("v%d.json", round), b.String())
		// Each entry of rounds 2 and 3 holds a 7 KB document and 150
		// diff lines: two do not fit in 20000 bytes.
		r := bulwark(t, "apply", "--yes", "--history-bytes", "20000", "--author", fmt.Sprintf("round-%d", round), src, f)
		require.Equal(t, 0, r.code, r)
		assert.NotContains(t, r.stderr, "not recorded", r)
		waitDoc(t, src, b.String())
	}
	var es []rulechange.Entry
	require.Eventually(t, func() bool {
		r := bulwark(t, "history", "--json", src)
		es = nil
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &es) == nil && len(es) > 0 && es[len(es)-1].Author == "round-3"
	}, 30*time.Second, 100*time.Millisecond)
	require.Len(t, es, 1, "only the newest entry fits")
	last := es[0]
	assert.Equal(t, 3, last.Seq, "numbers go on")
	assert.Len(t, last.Diff, 150)
	require.NotNil(t, last.Previous)
	assert.Contains(t, *last.Previous, `"count":20}`)
}
