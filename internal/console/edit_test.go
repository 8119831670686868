package console_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/internal/console"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// fileConsole is a console over a flow rule file holding doc.
func fileConsole(t *testing.T, doc string, opts ...console.Option) (path string, ts *httptest.Server) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "flow-rules.json")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
	c, err := rulechange.Open(bg, "file://"+path, rulechange.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	s := console.New([]console.Document{{Center: c}}, append([]console.Option{console.WithUsersFile(users(t)), console.WithRefresh(time.Hour)}, opts...)...)
	t.Cleanup(func() { _ = s.Close() })
	ts = httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return path, ts
}

func signedIn(t *testing.T, ts *httptest.Server, name, password string) *client {
	t.Helper()
	c := newClient(t, ts.URL)
	require.Equal(t, http.StatusOK, c.signIn(name, password))
	return c
}

// readDoc is /api/doc of source 0.
func readDoc(t *testing.T, c *client) map[string]any {
	t.Helper()
	code, d := c.do(http.MethodGet, "/api/doc?source=0", nil, nil)
	require.Equal(t, http.StatusOK, code, "%v", d)
	return d
}

func countEdit(d map[string]any, count any, review bool) map[string]any {
	return map[string]any{"source": 0, "revision": d["revision"], "op": "change", "index": 0, "review": review,
		"rule": map[string]any{"resource": "GET /orders", "count": count}}
}

func flowCount(t *testing.T, path string) float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rules, err := converter.FlowRules().Convert(data)
	require.NoError(t, err)
	require.Len(t, rules, 1)
	return rules[0].Count
}

func history(t *testing.T, c *client) []any {
	t.Helper()
	code, h := c.do(http.MethodGet, "/api/history?source=0", nil, nil)
	require.Equal(t, http.StatusOK, code, "%v", h)
	return h["entries"].([]any)
}

// TestEditReviewApply: an editor's change is reviewed (a field-by-field
// diff, nothing written), then applied with compare-and-set and recorded
// in the history under the editor's name.
func TestEditReviewApply(t *testing.T) {
	path, ts := fileConsole(t, `[{"resource":"GET /orders","count":10}]`)
	ed := signedIn(t, ts, "ed", "editor-password")
	d := readDoc(t, ed)
	assert.Equal(t, "flow", d["kind"])
	rules := d["rules"].([]any)
	require.Len(t, rules, 1)
	assert.Equal(t, "GET /orders", rules[0].(map[string]any)["resource"])
	// For a person: the compact form, enums by name.
	assert.Equal(t, "count 10", rules[0].(map[string]any)["text"])
	assert.Equal(t, map[string]any{"grade": "QPS", "strategy": "direct", "controlBehavior": "reject"}, rules[0].(map[string]any)["names"])

	code, v := ed.write("/api/edit", countEdit(d, 5, true))
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, false, v["applied"])
	assert.Equal(t, "1 rule: 1 changed", v["summary"])
	ch := v["changes"].([]any)[0].(map[string]any)
	assert.Equal(t, "changed", ch["op"])
	assert.Equal(t, "GET /orders", ch["rule"])
	assert.Equal(t, []any{map[string]any{"field": "count", "from": 10.0, "to": 5.0, "text": "count 10 → 5", "fromText": "10", "toText": "5"}}, ch["fields"])
	assert.Equal(t, "~ GET /orders: count 10 → 5", ch["line"], "the line the CLI prints")

	// An enum by its name: the change reads as the CLI prints it.
	code, v = ed.write("/api/edit", map[string]any{"source": 0, "revision": d["revision"], "op": "change", "index": 0, "review": true,
		"rule": map[string]any{"resource": "GET /orders", "count": 10, "controlBehavior": "warmUp"}})
	require.Equal(t, http.StatusOK, code, "%v", v)
	ch = v["changes"].([]any)[0].(map[string]any)
	assert.Equal(t, "~ GET /orders: controlBehavior reject → warmUp", ch["line"])
	f := ch["fields"].([]any)[0].(map[string]any)
	assert.Equal(t, "reject", f["fromText"])
	assert.Equal(t, "warmUp", f["toText"])
	assert.Equal(t, 10.0, flowCount(t, path), "a review writes nothing")

	code, v = ed.write("/api/edit", countEdit(d, 5, false))
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, true, v["applied"])
	assert.Equal(t, 5.0, flowCount(t, path))
	h := history(t, ed)
	require.Len(t, h, 1)
	en := h[0].(map[string]any)
	assert.Equal(t, "ed", en["author"])
	assert.Equal(t, "console change GET /orders", en["command"])
	assert.Equal(t, []any{"~ GET /orders: count 10 → 5"}, en["diff"])

	// Add, then delete.
	d = readDoc(t, ed)
	code, v = ed.write("/api/edit", map[string]any{"source": 0, "revision": d["revision"], "op": "add", "rule": map[string]any{"resource": "GET /items", "count": 7}})
	require.Equal(t, http.StatusOK, code, "%v", v)
	d = readDoc(t, ed)
	require.Len(t, d["rules"], 2)
	code, v = ed.write("/api/edit", map[string]any{"source": 0, "revision": d["revision"], "op": "delete", "index": 1})
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, "removed", v["changes"].([]any)[0].(map[string]any)["op"])
	assert.Equal(t, "GET /items", v["changes"].([]any)[0].(map[string]any)["rule"])
	assert.Equal(t, "count 7", v["changes"].([]any)[0].(map[string]any)["text"])
	assert.Equal(t, "- GET /items: count 7", v["changes"].([]any)[0].(map[string]any)["line"])
	assert.Equal(t, 5.0, flowCount(t, path))

	// Roll back the first change: reviewed, then written.
	d = readDoc(t, ed)
	code, v = ed.write("/api/rollback", map[string]any{"source": 0, "revision": d["revision"], "seq": 1, "review": true})
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, 5.0, flowCount(t, path))
	code, v = ed.write("/api/rollback", map[string]any{"source": 0, "revision": d["revision"], "seq": 1})
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, 10.0, flowCount(t, path))
	assert.Equal(t, "console rollback 1", history(t, ed)[0].(map[string]any)["command"])
}

// TestEditInvalid: a rule that does not validate is refused with the
// field named, in the words of bulwark validate; nothing is written.
func TestEditInvalid(t *testing.T) {
	path, ts := fileConsole(t, `[{"resource":"GET /orders","count":10}]`)
	ed := signedIn(t, ts, "ed", "editor-password")
	d := readDoc(t, ed)
	code, v := ed.write("/api/edit", countEdit(d, -1, true))
	require.Equal(t, http.StatusUnprocessableEntity, code, "%v", v)
	assert.Equal(t, "[0].count", v["field"])
	// The same message as bulwark validate prints for that document.
	k, err := rulechange.KindNamed("flow")
	require.NoError(t, err)
	_, fs, err := k.Check("the edited document", []byte(`[{"resource":"GET /orders","count":-1}]`))
	require.Error(t, err)
	got := v["findings"].([]any)[0].(map[string]any)
	assert.Equal(t, fs[0].Message, got["message"])
	assert.Equal(t, fs[0].Path, got["path"])
	// Line 2 of the canonical document (one rule a line, indented two
	// spaces), at the rule's first field, as bulwark validate points.
	assert.Contains(t, v["error"], `the edited document:2:4: [0] "GET /orders": count: must be >= 0`)

	code, v = ed.write("/api/edit", countEdit(d, "lots", false))
	require.Equal(t, http.StatusUnprocessableEntity, code, "%v", v)
	assert.Equal(t, "[0].count", v["field"])
	code, v = ed.write("/api/edit", map[string]any{"source": 0, "revision": d["revision"], "op": "change", "index": 0,
		"rule": map[string]any{"resource": "GET /orders", "count": 1, "colour": "red"}})
	require.Equal(t, http.StatusUnprocessableEntity, code, "%v", v)
	assert.Contains(t, v["error"], "colour")
	assert.Equal(t, 10.0, flowCount(t, path), "nothing written")
}

// TestEditConflict: two editors read the same revision; the second's
// apply is a conflict that shows the first's change, and writes nothing;
// redone on the new document it applies.
func TestEditConflict(t *testing.T) {
	path, ts := fileConsole(t, `[{"resource":"GET /orders","count":10}]`)
	a := signedIn(t, ts, "ed", "editor-password")
	b := signedIn(t, ts, "ed", "editor-password")
	da, db := readDoc(t, a), readDoc(t, b)
	code, v := a.write("/api/edit", countEdit(da, 20, false))
	require.Equal(t, http.StatusOK, code, "%v", v)

	code, v = b.write("/api/edit", countEdit(db, 30, false))
	require.Equal(t, http.StatusConflict, code, "%v", v)
	assert.Equal(t, true, v["conflict"])
	assert.Contains(t, v["error"], "changed since you read it")
	since := v["since"].([]any)
	require.Len(t, since, 1)
	assert.Equal(t, []any{"~ GET /orders: count 10 → 20"}, since[0].(map[string]any)["diff"])
	cur := v["current"].(map[string]any)
	assert.NotEqual(t, db["revision"], cur["revision"])
	assert.Equal(t, 20.0, flowCount(t, path), "the other edit is not overwritten")

	code, v = b.write("/api/edit", countEdit(cur, 30, false))
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, 30.0, flowCount(t, path))
}

// TestEditRefusals: anonymous, without the CSRF token, and as a viewer:
// refused, nothing written.
func TestEditRefusals(t *testing.T) {
	path, ts := fileConsole(t, `[{"resource":"GET /orders","count":10}]`)
	ed := signedIn(t, ts, "ed", "editor-password")
	d := readDoc(t, ed)
	body := countEdit(d, 5, false)

	code, _ := newClient(t, ts.URL).do(http.MethodPost, "/api/edit", body, nil)
	assert.Equal(t, http.StatusUnauthorized, code, "anonymous")
	code, _ = newClient(t, ts.URL).do(http.MethodGet, "/api/doc?source=0", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, code, "anonymous read")
	code, _ = ed.do(http.MethodPost, "/api/edit", body, nil)
	assert.Equal(t, http.StatusForbidden, code, "no CSRF token")
	vi := signedIn(t, ts, "vi", "viewer-password")
	code, v := vi.write("/api/edit", body)
	assert.Equal(t, http.StatusForbidden, code, "a viewer")
	assert.Contains(t, v["error"], "editor role")
	for _, p := range []string{"/api/replace", "/api/rollback", "/api/promote", "/api/abort"} {
		code, _ = vi.write(p, body)
		assert.Equal(t, http.StatusForbidden, code, "a viewer: %s", p)
		code, _ = ed.do(http.MethodPost, p, body, nil)
		assert.Equal(t, http.StatusForbidden, code, "no CSRF token: %s", p)
	}
	assert.Equal(t, 10.0, flowCount(t, path), "nothing written")
	assert.Empty(t, history(t, ed))
}

// TestReplaceUndecodable: a document that does not decode is shown with
// its error and text; it is replaced only at the revision the page read.
func TestReplaceUndecodable(t *testing.T) {
	path, ts := fileConsole(t, `[{"resource":"GET /orders","count":"lots"}]`)
	ed := signedIn(t, ts, "ed", "editor-password")
	d := readDoc(t, ed)
	assert.Contains(t, d["problem"], "count")
	assert.Equal(t, `[{"resource":"GET /orders","count":"lots"}]`, d["data"])
	code, v := ed.write("/api/edit", countEdit(d, 5, false))
	assert.Equal(t, http.StatusUnprocessableEntity, code, "an edit of a document that does not decode: %v", v)
	assert.Contains(t, v["error"], "replace it first")

	// Someone else repairs it meanwhile (another tool): the replacement
	// read before is a conflict.
	require.NoError(t, os.WriteFile(path, []byte(`[{"resource":"GET /orders","count":"many"}]`), 0o600))
	good := `[{"resource":"GET /orders","count":12}]`
	code, v = ed.write("/api/replace", map[string]any{"source": 0, "revision": d["revision"], "data": good})
	require.Equal(t, http.StatusConflict, code, "%v", v)
	d = v["current"].(map[string]any)
	assert.Contains(t, d["data"], "many", "the conflict shows the document as it is now")

	code, v = ed.write("/api/replace", map[string]any{"source": 0, "revision": d["revision"], "data": `[{"resource":"GET /orders","count":-3}]`})
	require.Equal(t, http.StatusUnprocessableEntity, code, "an invalid replacement: %v", v)
	assert.Equal(t, "[0].count", v["field"])
	code, v = ed.write("/api/replace", map[string]any{"source": 0, "revision": d["revision"], "data": good, "review": true})
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.NotEmpty(t, v["replaced"], "the review says the document is replaced whole")
	code, v = ed.write("/api/replace", map[string]any{"source": 0, "revision": d["revision"], "data": good})
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, 12.0, flowCount(t, path))
}

// TestCanaryPromoteAbort: an edit written to a canary group's overlay, the
// group shown with its changes, promoted; another aborted.
func TestCanaryPromoteAbort(t *testing.T) {
	path, ts := fileConsole(t, `[{"resource":"GET /orders","count":10}]`, console.WithCanaryGroups("blue"))
	ed := signedIn(t, ts, "ed", "editor-password")
	d := readDoc(t, ed)
	groups := d["groups"].([]any)
	require.Len(t, groups, 1)
	assert.Equal(t, false, groups[0].(map[string]any)["exists"])

	e := countEdit(d, 15, false)
	e["group"] = "blue"
	code, v := ed.write("/api/edit", e)
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, 10.0, flowCount(t, path), "the document is untouched")
	d = readDoc(t, ed)
	g := d["groups"].([]any)[0].(map[string]any)
	require.Equal(t, true, g["exists"], "%v", g)
	assert.Equal(t, "count", g["changes"].([]any)[0].(map[string]any)["fields"].([]any)[0].(map[string]any)["field"])
	assert.Equal(t, "~ GET /orders: count 10 → 15", g["changes"].([]any)[0].(map[string]any)["line"], "the group's line as the CLI prints it")

	code, v = ed.write("/api/promote", map[string]any{"source": 0, "revision": d["revision"], "group": "blue", "review": true})
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, 10.0, flowCount(t, path))
	code, v = ed.write("/api/promote", map[string]any{"source": 0, "revision": d["revision"], "group": "blue"})
	require.Equal(t, http.StatusOK, code, "%v", v)
	assert.Equal(t, 15.0, flowCount(t, path))
	d = readDoc(t, ed)
	assert.Equal(t, false, d["groups"].([]any)[0].(map[string]any)["exists"], "promote removes the overlay")

	e = countEdit(d, 99, false)
	e["group"] = "blue"
	code, v = ed.write("/api/edit", e)
	require.Equal(t, http.StatusOK, code, "%v", v)
	d = readDoc(t, ed)
	g = d["groups"].([]any)[0].(map[string]any)
	// An edit of the group by someone who read it before it had an
	// overlay: a conflict, the overlay stays.
	e = countEdit(d, 50, false)
	e["group"] = "blue"
	code, v = ed.write("/api/edit", e)
	require.Equal(t, http.StatusConflict, code, "%v", v)
	e["groupRevision"] = g["revision"]
	e["review"] = true
	code, v = ed.write("/api/edit", e)
	require.Equal(t, http.StatusOK, code, "at the overlay's revision: %v", v)
	code, v = ed.write("/api/abort", map[string]any{"source": 0, "revision": g["revision"], "group": "blue"})
	require.Equal(t, http.StatusOK, code, "%v", v)
	d = readDoc(t, ed)
	assert.Equal(t, false, d["groups"].([]any)[0].(map[string]any)["exists"], "abort removes the overlay")
	assert.Equal(t, 15.0, flowCount(t, path))
	h := history(t, ed)
	assert.Equal(t, "console abort blue", h[0].(map[string]any)["command"])
	assert.Equal(t, "ed", h[0].(map[string]any)["author"])
}
