package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// fromSentinelGo converts a JSON list of sentinel-golang rules (flow,
// isolation, circuit breaker, system, hotspot: the documents its
// datasources read) into Sentinel's (Java's) rule documents. It returns
// the document (a list of one kind, or a rule set when the rules are of
// several kinds) and a note for everything that has no equivalent; a rule
// that cannot be converted is left out, with a note.
func fromSentinelGo(data []byte) ([]byte, []string, error) {
	var items []map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&items); err != nil {
		return nil, nil, fmt.Errorf("not a JSON list of sentinel-golang rules: %w", err)
	}
	var notes []string
	out := map[string][]map[string]any{}
	var order []string
	for i, it := range items {
		g := goRule{i: i, f: it}
		kind, rule := g.convert()
		notes = append(notes, g.notes...)
		if rule == nil {
			continue
		}
		if _, ok := out[kind]; !ok {
			order = append(order, kind)
		}
		out[kind] = append(out[kind], rule)
	}
	var doc any
	switch len(order) {
	case 0:
		doc = []any{}
	case 1:
		doc = out[order[0]]
	default:
		set := map[string]any{}
		for k, rs := range out {
			set[k] = rs
		}
		doc = set
	}
	b, err := json.Marshal(doc)
	return b, notes, err
}

// goRule is one sentinel-golang rule being converted.
type goRule struct {
	i     int
	f     map[string]json.RawMessage
	notes []string
	used  map[string]bool
}

func (g *goRule) has(name string) bool { _, ok := g.f[name]; return ok }

func (g *goRule) str(name string) string {
	g.mark(name)
	var s string
	_ = json.Unmarshal(g.f[name], &s)
	return s
}

func (g *goRule) num(name string) float64 {
	g.mark(name)
	var n json.Number
	if err := json.Unmarshal(g.f[name], &n); err != nil {
		return 0
	}
	v, _ := n.Float64()
	return v
}

func (g *goRule) mark(name string) {
	if g.used == nil {
		g.used = map[string]bool{}
	}
	g.used[name] = true
}

func (g *goRule) note(format string, args ...any) {
	name := g.str("resource")
	label := fmt.Sprintf("[%d]", g.i)
	if name != "" {
		label += fmt.Sprintf(" %q", name)
	}
	g.notes = append(g.notes, label+": "+fmt.Sprintf(format, args...))
}

// dropped notes a field that is set (not zero) and has no equivalent.
func (g *goRule) dropped(name, why string) {
	if g.has(name) && g.num(name) != 0 {
		g.note("%s has no equivalent (%s): dropped", name, why)
	}
	g.mark(name)
}

// convert returns the Java kind and rule, or nil when it cannot.
func (g *goRule) convert() (string, map[string]any) {
	g.mark("id")
	var kind string
	var r map[string]any
	switch {
	case g.has("triggerCount"):
		kind, r = "system", g.system()
	case g.has("paramIndex") || g.has("paramKey") || g.has("specificItems"):
		kind, r = "paramFlow", g.hotspot()
	case g.has("retryTimeoutMs") || g.has("maxAllowedRtMs") || g.has("minRequestAmount") || g.has("probeNum"):
		kind, r = "degrade", g.breaker()
	case g.has("tokenCalculateStrategy") || g.has("relationStrategy") || g.has("warmUpPeriodSec") || g.has("controlBehavior"):
		kind, r = "flow", g.flow()
	case g.has("metricType") && g.has("threshold"):
		kind, r = "flow", g.isolation()
	default:
		g.note("not a sentinel-golang flow, isolation, circuit breaker, system or hotspot rule: left out")
		return "", nil
	}
	if r != nil {
		for name := range g.f {
			if !g.used[name] {
				g.note("unknown field %s: ignored", name)
			}
		}
	}
	return kind, r
}

func (g *goRule) flow() map[string]any {
	r := map[string]any{"resource": g.str("resource"), "grade": 1, "count": g.num("threshold")}
	tcs, cb := g.num("tokenCalculateStrategy"), g.num("controlBehavior")
	switch {
	case tcs == 2:
		g.note("tokenCalculateStrategy 2 (MemoryAdaptive) has no equivalent: rule left out")
		return nil
	case tcs > 2 || cb > 1:
		g.note("unknown tokenCalculateStrategy %v or controlBehavior %v: rule left out", tcs, cb)
		return nil
	}
	// Java's controlBehavior: 0 reject, 1 warm-up, 2 rate limiter, 3 warm-up + rate limiter.
	r["controlBehavior"] = int(tcs) + 2*int(cb)
	if g.num("relationStrategy") == 1 {
		r["strategy"] = 1
		r["refResource"] = g.str("refResource")
	} else {
		g.mark("refResource")
	}
	if g.has("maxQueueingTimeMs") {
		r["maxQueueingTimeMs"] = g.num("maxQueueingTimeMs")
	}
	if g.has("warmUpPeriodSec") && g.num("warmUpPeriodSec") > 0 {
		r["warmUpPeriodSec"] = g.num("warmUpPeriodSec")
	}
	if f := g.num("warmUpColdFactor"); f != 0 && f != 3 {
		g.note("warmUpColdFactor %v has no equivalent (Java's cold factor is 3): dropped", f)
	}
	if s := g.num("statIntervalInMs"); s != 0 && s != 1000 {
		g.note("statIntervalInMs %v has no equivalent (Java counts per second): dropped", s)
	}
	for _, name := range []string{"lowMemUsageThreshold", "highMemUsageThreshold", "memLowWaterMarkBytes", "memHighWaterMarkBytes"} {
		g.dropped(name, "memory-adaptive flow control")
	}
	if g.str("adaptiveConfigName") != "" {
		g.note("adaptiveConfigName has no equivalent: dropped")
	}
	return r
}

// isolation rules limit concurrency: a flow rule of grade 0 (threads).
func (g *goRule) isolation() map[string]any {
	if m := g.num("metricType"); m != 0 {
		g.note("isolation metricType %v unknown: rule left out", m)
		return nil
	}
	return map[string]any{"resource": g.str("resource"), "grade": 0, "count": g.num("threshold")}
}

func (g *goRule) breaker() map[string]any {
	r := map[string]any{"resource": g.str("resource")}
	switch s := g.num("strategy"); s {
	case 0:
		r["grade"] = 0
		r["count"] = g.num("maxAllowedRtMs")
		r["slowRatioThreshold"] = g.num("threshold")
	case 1, 2:
		r["grade"] = int(s)
		r["count"] = g.num("threshold")
		g.mark("maxAllowedRtMs")
	default:
		g.note("unknown circuit breaker strategy %v: rule left out", s)
		return nil
	}
	ms := g.num("retryTimeoutMs")
	sec := math.Ceil(ms / 1000)
	if sec*1000 != ms {
		g.note("retryTimeoutMs %v: Java's timeWindow is in seconds: %v s", ms, sec)
	}
	r["timeWindow"] = sec
	if g.has("minRequestAmount") && g.num("minRequestAmount") > 0 {
		r["minRequestAmount"] = g.num("minRequestAmount")
	}
	if g.has("statIntervalMs") && g.num("statIntervalMs") > 0 {
		r["statIntervalMs"] = g.num("statIntervalMs")
	}
	g.dropped("statSlidingWindowBucketCount", "Java's breakers count in one window")
	g.dropped("probeNum", "Java's half-open state lets one call through")
	return r
}

func (g *goRule) system() map[string]any {
	fields := []string{"highestSystemLoad", "avgRt", "maxThread", "qps", "highestCpuUsage"}
	m := g.num("metricType")
	if m < 0 || int(m) >= len(fields) || m != math.Trunc(m) {
		g.note("unknown system metricType %v: rule left out", m)
		return nil
	}
	if s := g.num("strategy"); m == 0 && s != 1 {
		g.note("strategy %v: Java's load check is always adaptive (BBR)", s)
	}
	g.mark("groupId")
	g.mark("name")
	return map[string]any{fields[int(m)]: g.num("triggerCount")}
}

func (g *goRule) hotspot() map[string]any {
	idx := g.num("paramIndex")
	if idx < 0 {
		g.note("paramIndex %v counts from the end: Java's paramIdx does too only from Sentinel 1.8.1 on", idx)
	}
	if g.str("paramKey") != "" {
		g.note("paramKey has no equivalent (Java takes parameters by index): dropped")
	}
	r := map[string]any{"resource": g.str("resource"), "paramIdx": idx, "count": g.num("threshold")}
	switch m := g.num("metricType"); m {
	case 0:
		r["grade"] = 0
	case 1:
		r["grade"] = 1
	default:
		g.note("unknown hotspot metricType %v: rule left out", m)
		return nil
	}
	if g.num("controlBehavior") == 1 {
		r["controlBehavior"] = 2
	}
	for _, name := range []string{"maxQueueingTimeMs", "burstCount", "durationInSec"} {
		if g.has(name) && g.num(name) != 0 {
			r[name] = g.num(name)
		}
	}
	g.dropped("paramsMaxCapacity", "bulwark bounds the value cache itself")
	if g.has("specificItems") {
		g.mark("specificItems")
		var items []struct {
			ValKind   int     `json:"valKind"`
			ValStr    string  `json:"valStr"`
			Threshold float64 `json:"threshold"`
		}
		if err := json.Unmarshal(g.f["specificItems"], &items); err != nil {
			g.note("specificItems: not a list of {valKind, valStr, threshold}: dropped")
		}
		classes := []string{"int", "String", "boolean", "double"}
		var list []map[string]any
		for _, it := range items {
			if it.ValKind < 0 || it.ValKind >= len(classes) {
				g.note("specificItems: valKind %d has no Java class: item dropped", it.ValKind)
				continue
			}
			list = append(list, map[string]any{"object": it.ValStr, "classType": classes[it.ValKind], "count": it.Threshold})
		}
		if len(list) > 0 {
			r["paramFlowItemList"] = list
		}
	}
	return r
}
