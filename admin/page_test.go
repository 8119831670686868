package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/internal/browsertest"
)

// followed is an engine whose flow rules come from a file datasource
// named "flow-rules.json", with a little traffic, served by admin at
// /debug/bulwark/.
func followed(t *testing.T) (srv *httptest.Server) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flow-rules.json")
	require.NoError(t, os.WriteFile(path, []byte(`[{"resource":"GET /orders","count":2,"grade":0}]`), 0o600))
	e := core.NewEngine()
	t.Cleanup(func() { _ = e.Close() })
	ds := datasource.NewReadable(file.New(path), converter.FlowRules(), datasource.WithName("flow-rules.json"))
	e.Flow().Register(ds.Property())
	require.NoError(t, ds.Start(bg))
	t.Cleanup(func() { _ = ds.Close() })
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{Resource: "GET /reports", Grade: circuitbreaker.ErrorCount,
		Count: 3, TimeWindow: 30, MinRequestAmount: 1, StatIntervalMs: 1000}}))
	mux := http.NewServeMux()
	mux.Handle("/debug/bulwark/", admin.Handler(e, admin.WithDatasources(ds)))
	srv = httptest.NewServer(mux)
	drive(e, "GET /orders", 3)
	t.Cleanup(srv.Close)
	return srv
}

// The page's HTML holds a summary of the state, rendered by the server,
// for a browser without JavaScript: resources, rules, breakers and
// datasources, counts with their units, times on a 24-hour clock.
func TestPageHTMLHasAStaticSummary(t *testing.T) {
	srv := followed(t)
	resp, body := get(t, srv.URL+"/debug/bulwark/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := string(body)
	assert.Regexp(t, `<td class="name">GET /orders</td><td class="num">3</td>`, page)
	assert.Regexp(t, `<b>flow</b>: 1 rule, from flow-rules.json @ [0-9a-f]+</li>`, page)
	assert.Contains(t, page, `<b>degrade</b>: 1 rule</li>`)
	assert.Contains(t, page, `<b>paramFlow</b>: 0 rules</li>`)
	assert.Contains(t, page, `<span class="name">GET /reports</span> <span class="state CLOSED">CLOSED</span>`)
	assert.Contains(t, page, `<span class="name">flow-rules.json</span>: <span class="ok">ok</span>`)
	assert.Regexp(t, `<span class="muted" id="updated">as of \d\d:\d\d:\d\d</span>`, page)
	assert.Contains(t, page, `<span class="muted" id="count">2 resources</span>`)
	summary := page[strings.Index(page, `<section id="summary">`):strings.Index(page, `<div id="live" hidden>`)]
	assert.NotContains(t, summary, "(s)", "every count has its unit")
}

// The rules on the page write enums by name, as the examples and the rule
// events do; the document still reads back as the rules in force.
func TestStateWritesEnumsByName(t *testing.T) {
	srv := followed(t)
	_, body := get(t, srv.URL+"/debug/bulwark/api/state")
	var st struct {
		Rules []struct {
			Kind  string
			Rules json.RawMessage
		}
		Breakers []struct{ Rule map[string]any }
	}
	require.NoError(t, json.Unmarshal(body, &st), string(body))
	require.Len(t, st.Rules, 5)
	doc := st.Rules[0].Rules
	assert.Contains(t, string(doc), `"grade":"thread"`)
	assert.Contains(t, string(doc), `"strategy":"direct"`)
	assert.Contains(t, string(doc), `"controlBehavior":"reject"`)
	rules, err := converter.FlowRules().Convert(doc)
	require.NoError(t, err, string(doc))
	assert.Equal(t, []flow.Rule{flow.Rule{Resource: "GET /orders", Count: 2, Grade: flow.GradeThread}.WithDefaults()}, rules)
	require.Len(t, st.Breakers, 1)
	assert.Equal(t, "errorCount", st.Breakers[0].Rule["grade"])
}

// TestPageWithoutJavaScript: with scripts disabled the browser shows the
// server's summary.
func TestPageWithoutJavaScript(t *testing.T) {
	browser := browsertest.Chromium(t)
	srv := followed(t)
	ctx := browsertest.Start(t, browser, 1280, 1000, 90*time.Second)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.Navigate(srv.URL+"/debug/bulwark/"),
		chromedp.WaitVisible(chromedp.CSS(`#summary`)),
	))
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#summary`)))
	require.NoError(t, err)
	for _, want := range []string{"GET /orders", "flow: 1 rule, from flow-rules.json @", "degrade: 1 rule", "GET /reports CLOSED since",
		"flow-rules.json: ok"} {
		assert.Contains(t, summary, want)
	}
	assert.Regexp(t, `GET /orders\t\d+\t.*\t\d+ calls? passed, \d+ blocked, \d+ failed`, summary)
	live, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("live").hidden`))
	if err == nil { // evaluating may itself be refused without scripts
		assert.True(t, live, "the live sections stay hidden")
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	out := filepath.Join(browsertest.ArtifactDir(t), "admin-nojs.png")
	require.NoError(t, os.WriteFile(out, png, 0o644))
	t.Logf("screenshot: %s", out)
}

// TestPageInChromiumIsComplete: in an en-US browser, an engine with no
// breakers, datasources or rule changes shows a sentence instead of bare
// headers, times on a 24-hour clock, counts with units, and suggestion
// notes that wrap between words, never inside one.
func TestPageInChromiumIsComplete(t *testing.T) {
	browser := browsertest.Chromium(t)
	e := core.NewEngine()
	defer e.Close()
	srv := httptest.NewServer(admin.Handler(e))
	defer srv.Close()
	require.Zero(t, drive(e, "GET /orders", 3)) // too little traffic to suggest rules: a note says why
	ctx := browsertest.Start(t, browser, 1280, 1000, 90*time.Second)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: "en_US"})
			return err
		}),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-resource="GET /orders"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-suggest="GET /orders"] td.note`)),
	))
	locale, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new Date(2026, 0, 1, 15, 4, 5).toLocaleTimeString()`))
	require.NoError(t, err)
	require.Equal(t, "3:04:05 PM", locale, "the browser's own format is 12-hour: the page must not use it")

	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err)
		return s
	}
	assert.Equal(t, "No circuit breakers: no degrade rules in force.", text(`#breakers tbody td.empty`))
	assert.Equal(t, "No datasources: pass them to admin.Handler with admin.WithDatasources.", text(`#datasources tbody td.empty`))
	assert.Equal(t, "No rule changes yet.", text(`#events li.empty`))
	bare, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table")].filter(t => t.offsetParent && !t.querySelector("tbody tr")).map(t => t.id)`))
	require.NoError(t, err)
	assert.Empty(t, bare, "tables with headers only")

	assert.Regexp(t, `^updated \d\d:\d\d:\d\d$`, text(`#updated`))
	assert.Equal(t, "1 resource", text(`#count`))
	assert.Regexp(t, `^flow — 0 rules, from — · 0 changes applied, 0 rejected`, text(`#rules details[data-kind=flow] summary`))
	assert.Regexp(t, `^from \d\d:\d\d:\d\d to \d\d:\d\d:\d\d, factor 1.3$`, text(`#suggest-span`))
	body := text(`body`)
	assert.NotRegexp(t, regexp.MustCompile(`\b(AM|PM)\b`), body)
	assert.NotContains(t, body, "(s)")

	// A phone's width makes the note wrap: at spaces only.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	var wrap struct {
		Lines  int
		Broken []string
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const node = document.querySelector('tr[data-suggest="GET /orders"] td.note').firstChild;
		const lineTops = r => new Set([...r.getClientRects()].map(x => Math.round(x.top)));
		const all = document.createRange(); all.selectNodeContents(node);
		const broken = [];
		for (const m of node.textContent.matchAll(/\S+/g)) {
			const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
			if (lineTops(r).size > 1) broken.push(m[0]);
		}
		return JSON.stringify({lines: lineTops(all).size, broken});
	})()`))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(got), &wrap))
	assert.Greater(t, wrap.Lines, 1, "the note wraps at this width")
	assert.Empty(t, wrap.Broken, "words broken across lines")

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	out := filepath.Join(browsertest.ArtifactDir(t), "admin-phone.png")
	require.NoError(t, os.WriteFile(out, png, 0o644))
	t.Logf("screenshot: %s", out)
}
