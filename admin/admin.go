package admin

import (
	"bytes"
	"cmp"
	_ "embed" // the page
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	coresystem "github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/datasource"
)

// pageHTML is the live page: one file, everything inline. It is a
// template: the server renders a static summary of the state into it, for
// a browser without JavaScript; the script replaces it with the live
// sections.
//
//go:embed page.html
var pageHTML string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"clock":  clock,
	"plural": plural,
}).Parse(pageHTML))

// clock is t as the page and the examples' console print it: 24-hour
// local time.
func clock(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Local().Format("15:04:05")
}

// plural is n with its unit: "1 rule", "3 rules".
func plural(n any, unit string) string {
	s := fmt.Sprint(n)
	if s == "1" {
		return s + " " + unit
	}
	return s + " " + unit + "s"
}

// Option configures a Handler.
type Option func(*config)

type config struct {
	sources []interface{ Status() datasource.Status }
}

// WithDatasources shows the Status of each datasource (a
// datasource.Readable), under its Status().Name.
func WithDatasources(ds ...interface{ Status() datasource.Status }) Option {
	return func(c *config) { c.sources = append(c.sources, ds...) }
}

// maxResources is how many resources the page lists (the busiest), and
// maxHistories how many of them get sparklines.
const (
	maxResources = 200
	maxHistories = 50
)

// Handler returns the page and its JSON API for e (see the package doc).
func Handler(e *core.Engine, opts ...Option) http.Handler {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "admin: read-only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		switch {
		case strings.HasSuffix(r.URL.Path, "/api/state"):
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(state(e, &c))
		case strings.HasSuffix(r.URL.Path, "/api/suggest"):
			serveSuggest(w, r, e)
		case r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/"):
			var b bytes.Buffer
			if err := page.Execute(&b, state(e, &c)); err != nil {
				http.Error(w, "admin: "+err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:")
			_, _ = w.Write(b.Bytes())
		default:
			http.NotFound(w, r)
		}
	})
}

// figures is core.Figures as the page reads them.
type figures struct {
	Passed    int64            `json:"passed"`
	Blocked   int64            `json:"blocked"`
	BlockedBy map[string]int64 `json:"blockedBy,omitempty"`
	// ShadowBlocked is what shadow rules would have blocked, by kind.
	ShadowBlocked map[string]int64 `json:"shadowBlocked,omitempty"`
	Succeeded     int64            `json:"succeeded"`
	Failed        int64            `json:"failed"`
	AvgRTMs       float64          `json:"avgRtMs"`
	MinRTMs       float64          `json:"minRtMs"`
	Concurrency   int64            `json:"concurrency"`
}

var blockKinds = []core.BlockKind{core.BlockFlow, core.BlockCircuitBreaker, core.BlockSystem, core.BlockAuthority, core.BlockHotspot}

func toFigures(f core.Figures) figures {
	out := figures{Passed: f.Passed, Blocked: f.Blocked, Succeeded: f.Succeeded, Failed: f.Failed,
		AvgRTMs: ms(f.AvgRT()), MinRTMs: ms(f.MinRT), Concurrency: f.Concurrency}
	out.BlockedBy = byKind(&f.BlockedBy)
	out.ShadowBlocked = byKind(&f.ShadowBlocked)
	return out
}

// byKind returns the non-zero counts of c by kind name, nil when none.
func byKind(c *[core.BlockCircuitBreaker + 1]int64) map[string]int64 {
	var m map[string]int64
	for _, k := range blockKinds {
		if c[k] > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[k.String()] = c[k]
		}
	}
	return m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// history is a resource's last 60 seconds, one array per figure.
type history struct {
	Passed      []int64   `json:"passed"`
	Blocked     []int64   `json:"blocked"`
	Failed      []int64   `json:"failed"`
	AvgRTMs     []float64 `json:"avgRtMs"`
	Concurrency []int64   `json:"concurrency"`
}

type resource struct {
	Resource string   `json:"resource"`
	Second   figures  `json:"second"`
	Minute   figures  `json:"minute"`
	History  *history `json:"history,omitempty"`
}

type breaker struct {
	Resource string          `json:"resource"`
	State    string          `json:"state"`
	Since    time.Time       `json:"since"`
	Rule     json.RawMessage `json:"rule"`
}

type kindRules struct {
	Kind     string          `json:"kind"`
	Count    int             `json:"count"`
	Source   string          `json:"source"`
	Revision string          `json:"revision"`
	Applied  int64           `json:"applied"`
	Rejected int64           `json:"rejected"`
	Rules    json.RawMessage `json:"rules"`
}

type dsStatus struct {
	Name      string    `json:"name"`
	Revision  string    `json:"revision"`
	AppliedAt time.Time `json:"appliedAt"`
	FromCache bool      `json:"fromCache"`
	Missing   bool      `json:"missing"`
	Err       string    `json:"err,omitempty"`
	Failures  int       `json:"failures"`
	LastRead  time.Time `json:"lastRead"`
	Watching  bool      `json:"watching"`
	WatchErr  string    `json:"watchErr,omitempty"`
}

type event struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`
	Source   string    `json:"source"`
	Revision string    `json:"revision"`
	Author   string    `json:"author,omitempty"`
	Rejected bool      `json:"rejected"`
	Rules    int       `json:"rules"`
	Added    []string  `json:"added,omitempty"`
	Removed  []string  `json:"removed,omitempty"`
	Changed  []string  `json:"changed,omitempty"`
	Errors   []string  `json:"errors,omitempty"`
}

type system struct {
	Load1    *float64 `json:"load1"`
	CPUUsage *float64 `json:"cpuUsage"`
	Inbound  figures  `json:"inbound"`
}

type snapshot struct {
	Time        time.Time   `json:"time"`
	Resources   []resource  `json:"resources"`
	Total       int         `json:"totalResources"`
	Breakers    []breaker   `json:"breakers"`
	System      system      `json:"system"`
	Rules       []kindRules `json:"rules"`
	Datasources []dsStatus  `json:"datasources"`
	Events      []event     `json:"events"`
	// Cluster is the token service's health; absent without one.
	Cluster *clusterHealth `json:"cluster,omitempty"`
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func finite(f float64) *float64 {
	if f != f { // NaN: not collected
		return nil
	}
	return &f
}

// state gathers everything the page shows.
func state(e *core.Engine, c *config) snapshot {
	st := e.Stats()
	s := snapshot{Time: st.Time, Total: len(st.Resources), Breakers: []breaker{}, Datasources: []dsStatus{}, Events: []event{}}
	// The busiest first: by the last minute, then the last second.
	rs := slices.Clone(st.Resources)
	busy := func(r core.ResourceStats) int64 {
		return r.Minute.Passed + r.Minute.Blocked + r.Second.Passed + r.Second.Blocked + r.Second.Concurrency
	}
	slices.SortStableFunc(rs, func(a, b core.ResourceStats) int { return cmp.Compare(busy(b), busy(a)) })
	rs = rs[:min(len(rs), maxResources)]
	s.Resources = make([]resource, len(rs))
	for i, r := range rs {
		s.Resources[i] = resource{Resource: r.Resource, Second: toFigures(r.Second), Minute: toFigures(r.Minute)}
		if i < maxHistories {
			s.Resources[i].History = toHistory(e.History(r.Resource))
		}
	}
	for _, b := range st.Breakers {
		rule := namedDoc([]circuitbreaker.Rule{b.Rule}, converter.CircuitBreakerRules(), breakerNames)
		s.Breakers = append(s.Breakers, breaker{Resource: b.Rule.Resource, State: b.State.String(), Since: b.Since, Rule: firstOf(rule)})
	}
	s.System = system{Load1: finite(st.System.Load1), CPUUsage: finite(st.System.CPUUsage), Inbound: toFigures(st.System.Inbound.Second)}
	docs := ruleDocs(e)
	for i, k := range st.Rules {
		s.Rules = append(s.Rules, kindRules{Kind: k.Kind, Count: k.Rules, Source: k.Source.Name, Revision: k.Source.Revision,
			Applied: k.Applied, Rejected: k.Rejected, Rules: docs[i]})
	}
	for _, ds := range c.sources {
		d := ds.Status()
		s.Datasources = append(s.Datasources, dsStatus{Name: d.Name, Revision: d.Revision, AppliedAt: d.AppliedAt,
			FromCache: d.FromCache, Missing: d.Missing, Err: errString(d.Err), Failures: d.Failures,
			LastRead: d.LastRead, Watching: d.Watching, WatchErr: errString(d.WatchErr)})
	}
	s.Cluster = toCluster(st.Cluster)
	evs := e.RuleEvents()
	for i := len(evs) - 1; i >= 0; i-- { // newest first
		ev := evs[i]
		s.Events = append(s.Events, event{Time: ev.Time, Kind: ev.Kind, Source: ev.Source.Name, Revision: ev.Source.Revision,
			Author: ev.Source.Author, Rejected: ev.Rejected, Rules: ev.Rules, Added: ev.Added, Removed: ev.Removed, Changed: ev.Changed, Errors: ev.Errors})
	}
	return s
}

// clusterHealth is cluster.Health as the page reads it.
type clusterHealth struct {
	Healthy   bool      `json:"healthy"`
	Since     time.Time `json:"since"`
	Failures  int       `json:"failures"`
	Err       string    `json:"err,omitempty"`
	Requests  uint64    `json:"requests"`
	Fallbacks uint64    `json:"fallbacks"`
}

func toCluster(h *cluster.Health) *clusterHealth {
	if h == nil {
		return nil
	}
	return &clusterHealth{Healthy: h.Healthy, Since: h.Since, Failures: h.Failures, Err: errString(h.Err),
		Requests: h.Requests, Fallbacks: h.Fallbacks}
}

// firstOf returns the first element of a JSON array of one.
func firstOf(doc []byte) json.RawMessage {
	var a []json.RawMessage
	if json.Unmarshal(doc, &a) != nil || len(a) == 0 {
		return json.RawMessage("null")
	}
	return a[0]
}

// ruleDocs returns the rules in force of every kind as Sentinel's JSON
// documents, in the order of core.Stats.Rules, with enums by name
// ("grade": "thread", as the examples and the rule events print them;
// converter reads names as well as Java's numbers).
func ruleDocs(e *core.Engine) []json.RawMessage {
	return []json.RawMessage{
		namedDoc(e.Flow().Rules(), converter.FlowRules(), func(r flow.Rule) []string {
			return []string{"grade", r.Grade.String(), "strategy", r.Strategy.String(), "controlBehavior", r.ControlBehavior.String()}
		}),
		namedDoc(e.CircuitBreaker().Rules(), converter.CircuitBreakerRules(), breakerNames),
		namedDoc(e.System().Rules(), converter.SystemRules(), func(coresystem.Rule) []string { return nil }),
		namedDoc(e.Authority().Rules(), converter.AuthorityRules(), func(r authority.Rule) []string {
			return []string{"strategy", r.Strategy.String()}
		}),
		namedDoc(e.Hotspot().Rules(), converter.HotspotRules(), func(r hotspot.Rule) []string {
			return []string{"grade", r.Grade.String(), "controlBehavior", r.ControlBehavior.String()}
		}),
	}
}

// breakerNames gives the enum fields of a degrade rule by name.
func breakerNames(r circuitbreaker.Rule) []string { return []string{"grade", r.Grade.String()} }

// namedDoc encodes rules with enc and writes the enum fields of each rule
// by name: names gives them as key, name pairs. "null" when rules do not
// encode.
func namedDoc[R any](rules []R, enc converter.Encoder[[]R], names func(R) []string) json.RawMessage {
	doc, err := enc.Encode(rules)
	if err != nil {
		return json.RawMessage("null")
	}
	var objs []json.RawMessage
	if json.Unmarshal(doc, &objs) != nil || len(objs) != len(rules) {
		return doc
	}
	for i, r := range rules {
		objs[i] = withNames(objs[i], names(r))
	}
	out, err := json.Marshal(objs)
	if err != nil {
		return doc
	}
	return out
}

// withNames returns the JSON object obj with the value of each key of
// pairs (key, name, key, name, …) that it has replaced by the name; the
// keys keep their order.
func withNames(obj json.RawMessage, pairs []string) json.RawMessage {
	if len(pairs) == 0 {
		return obj
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return obj
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return obj
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return obj
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i] == key {
				v, _ = json.Marshal(pairs[i+1])
			}
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func toHistory(h []core.Figures) *history {
	out := &history{
		Passed: make([]int64, len(h)), Blocked: make([]int64, len(h)), Failed: make([]int64, len(h)),
		AvgRTMs: make([]float64, len(h)), Concurrency: make([]int64, len(h)),
	}
	for i, f := range h {
		out.Passed[i], out.Blocked[i], out.Failed[i] = f.Passed, f.Blocked, f.Failed
		out.AvgRTMs[i], out.Concurrency[i] = ms(f.AvgRT()), f.Concurrency
	}
	return out
}
