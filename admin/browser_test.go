package admin_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/admin"
	"github.com/bulwark-go/bulwark/cluster/redis"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
	"github.com/bulwark-go/bulwark/internal/browsertest"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// TestPageInChromium loads the page in headless Chromium while traffic
// flows and a rule changes through a real file datasource, and checks
// that the resource, its blocked count and the change event appear.
func TestPageInChromium(t *testing.T) {
	browser := browsertest.Chromium(t)

	dir := t.TempDir()
	rulesPath := filepath.Join(dir, "flow-rules.json")
	// GET /items has a shadow rule: its would-be blocks show, it blocks
	// nothing. GET /cart has a cluster rule, whose token service's Redis
	// refuses connections: the page shows it failing.
	const items = `{"resource":"GET /items","count":5,"shadow":true},` +
		`{"resource":"GET /cart","count":100,"clusterMode":true,"clusterConfig":{"flowId":1,"thresholdType":1}}`
	require.NoError(t, os.WriteFile(rulesPath, []byte(`[{"resource":"GET /orders","count":20},`+items+`]`), 0o600))
	client := goredis.NewClient(&goredis.Options{Addr: integration.RefusedAddr(t), MaxRetries: -1})
	defer client.Close()
	ts := redis.New(client)
	defer ts.Close()
	e := core.NewEngine(core.WithTokenService(ts))
	defer e.Close()
	ds := datasource.NewReadable(file.New(rulesPath), converter.FlowRules(), datasource.WithName("flow-rules.json"))
	e.Flow().Register(ds.Property())
	require.NoError(t, ds.Start(bg))
	defer ds.Close()
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{Resource: "GET /inventory", Grade: circuitbreaker.ErrorCount,
		Count: 3, TimeWindow: 30, MinRequestAmount: 1, StatIntervalMs: 1000}}))

	mux := http.NewServeMux()
	mux.Handle("/debug/bulwark/", admin.Handler(e, admin.WithDatasources(ds)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// Traffic: bursts of 10 orders every 100 ms (20 per second pass, the
	// rest is blocked once the rule says 5), items without rules, and
	// inventory calls that fail until its breaker opens.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for i := range 10 {
				if en, err := e.Enter(bg, "GET /orders", core.Inbound()); err == nil {
					time.Sleep(time.Millisecond)
					en.Exit()
				}
				if en, err := e.Enter(bg, "GET /items"); err == nil {
					en.Exit()
				}
				if en, err := e.Enter(bg, "GET /cart"); err == nil {
					en.Exit()
				}
				if i == 0 {
					if en, err := e.Enter(bg, "GET /inventory"); err == nil {
						en.SetError(errors.New("inventory down"))
						en.Exit()
					}
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	ctx := browsertest.Start(t, browser, 1280, 1000, 90*time.Second)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/debug/bulwark/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-resource="GET /orders"]`)),
	))
	name, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`tr[data-resource="GET /orders"] td.name`)))
	require.NoError(t, err)
	assert.Equal(t, "GET /orders", name)

	// The rule changes in the file: the datasource applies it, the engine
	// emits the event, and the page shows both the blocks and the diff.
	require.NoError(t, os.WriteFile(rulesPath, []byte(`[{"resource":"GET /orders","count":5},`+items+`]`), 0o600))
	blocked, err := chromedp.Run(ctx, chromedp.Poll[float64](`(() => {
		const s = document.querySelector('tr[data-resource="GET /orders"] td.blocked .cell span');
		const n = s ? Number(s.textContent.replace(/[^0-9]/g, '')) : 0;
		return n > 0 ? n : false;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the blocked count never showed")
	assert.Positive(t, blocked)
	kinds, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`tr[data-resource="GET /orders"] td.blocked .kinds`)))
	require.NoError(t, err)
	assert.Contains(t, kinds, "flow")

	shadowText, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const s = document.querySelector('tr[data-resource="GET /items"] td.blocked .shadow');
		return s && /flow [1-9]/.test(s.textContent) ? s.textContent : false;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the shadow blocks never showed")
	assert.Contains(t, shadowText, "shadow: flow")
	itemsBlocked, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`tr[data-resource="GET /items"] td.blocked .cell span`)))
	require.NoError(t, err)
	assert.Equal(t, "0", itemsBlocked, "a shadow rule blocks nothing")

	change, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		for (const li of document.querySelectorAll('#events li')) {
			if (li.textContent.includes('count 20 → 5')) return li.textContent;
		}
		return false;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the change event never showed")
	assert.Contains(t, change, "GET /orders: count 20 → 5")
	assert.Contains(t, change, "flow-rules.json @ ", "the source and its revision")

	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#breakers .state.OPEN') !== null`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the open breaker never showed")
	breakerRule, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#breakers td.wrap`)))
	require.NoError(t, err)
	assert.Contains(t, breakerRule, `limitApp="default" grade=errorCount count=3 timeWindow=30`, "enums by name, as the rule events write them")
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('#datasources td')].some(td => td.textContent === 'flow-rules.json')`,
		chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "the datasource never showed")

	clusterText, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const c = document.getElementById('cluster');
		return !document.getElementById('cluster-section').hidden && /fallbacks/.test(c.textContent) ? c.textContent : false;
	})()`, chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "the token service's health never showed")
	assert.Contains(t, clusterText, "token service failing since")
	assert.Contains(t, clusterText, "cluster rules fall back")

	// Let the sparklines draw a few seconds, then keep a screenshot.
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const pts = document.querySelector('tr[data-resource="GET /orders"] svg polyline');
		return pts && pts.getAttribute('points').split(' ').filter(p => !p.endsWith(',19.0')).length >= 3;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the sparkline never drew")
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.Greater(t, len(png), 10_000)
	out := filepath.Join(browsertest.ArtifactDir(t), "admin.png")
	require.NoError(t, os.WriteFile(out, png, 0o644))
	t.Logf("screenshot: %s", out)
	if os.Getenv("BULWARK_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile("../docs/admin.png", png, 0o644))
	}

	// A phone-sized viewport: the page still fits its width.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	require.NoError(t, err)
	assert.False(t, overflow, "the page is wider than a phone's screen")
}

// TestSuggestionsInChromium shows the suggested-rules section of an engine
// that measured known traffic (see knownTraffic), changes the factor, and
// copies a document.
func TestSuggestionsInChromium(t *testing.T) {
	browser := browsertest.Chromium(t)
	e := knownTraffic(t)
	srv := httptest.NewServer(admin.Handler(e))
	defer srv.Close()
	ctx := browsertest.Start(t, browser, 1280, 1000, 90*time.Second)

	row := `tr[data-suggest="GET /orders"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(row)),
	))
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err)
		return s
	}
	assert.Equal(t, "150", text(row+" td.peak"))
	assert.Equal(t, "195", text(row+" td.count"), "ceil(1.3 × 150)")
	assert.Equal(t, "RT > 52 ms for > 50 % of calls", text(row+" td.slow"))
	assert.Equal(t, "error ratio > 0.2", text(row+" td.errors"))

	// Another factor: the section asks again.
	require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`#suggest-form input[name=factor]`), "2")))
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#suggest-form').dispatchEvent(new Event('change')), true`))
	require.NoError(t, err)
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('tr[data-suggest="GET /orders"] td.count').textContent === "300"`,
		chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "the count for factor 2 never showed")

	// The flow document: the rule in force and the suggestion, in shadow.
	doc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#suggest-docs details[data-doc=flow] pre').textContent`))
	require.NoError(t, err)
	rules, err := converter.FlowRules().Convert([]byte(doc))
	require.NoError(t, err, doc)
	require.Len(t, rules, 2)
	assert.False(t, rules[0].Shadow)
	assert.True(t, rules[1].Shadow)
	assert.Equal(t, 300.0, rules[1].Count)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#suggest-docs details[data-doc=flow] button.copy`))))
	label, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const t = document.querySelector('#suggest-docs details[data-doc=flow] button.copy').textContent;
		return t !== "copy" ? t : false;
	})()`, chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "the copy button did nothing")
	assert.Contains(t, []string{"copied", "selected: copy it"}, label)

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	out := filepath.Join(browsertest.ArtifactDir(t), "admin-suggest.png")
	require.NoError(t, os.WriteFile(out, png, 0o644))
	t.Logf("screenshot: %s", out)
}
