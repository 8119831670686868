package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bulwark-go/bulwark/internal/rulechange"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goodFlow = `[
  {"resource": "GET /orders", "count": 100},
  {"resource": "GET /items", "count": 20, "controlBehavior": 1, "warmUpPeriodSec": 5}
]
`

const badFlow = `[
  {"resource": "GET /orders", "count": -1},
  {"resource": "GET /items", "count": 20, "controlBehaviour": 1},
  {"resource": "GET /users", "grade": "fast"}
]
`

// dashboardFlow is what Sentinel's dashboard (FlowRuleEntity) writes to a
// config center, with a license header as some teams keep.
const dashboardFlow = `// managed by the platform team
[{"id":3,"app":"order-service","ip":"10.0.0.7","port":8719,"limitApp":"default","resource":"GET /orders","grade":1,"count":50.0,"strategy":0,"refResource":null,"controlBehavior":0,"warmUpPeriodSec":null,"maxQueueingTimeMs":null,"clusterMode":false,"clusterConfig":{"flowId":null,"thresholdType":0,"fallbackToLocalWhenFail":true,"strategy":0,"sampleCount":10,"windowIntervalMs":1000,"resourceTimeout":2000,"resourceTimeoutStrategy":0,"acquireRefuseStrategy":0,"clientOfflineTime":2000},"gmtCreate":1700000000000,"gmtModified":1700000000000}]
`

// dashboardParamFlow is the dashboard's ParamFlowRuleEntity: the rule nested.
const dashboardParamFlow = `[{"id":1,"app":"order-service","ip":"10.0.0.7","port":8719,"rule":{"resource":"GET /orders","paramIdx":0,"count":5,"grade":1,"paramFlowItemList":[{"object":"vip","classType":"String","count":50}]},"gmtCreate":1700000000000,"gmtModified":1700000000000}]`

func TestValidateGood(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "flow.json", goodFlow)
	r := bulwark(t, "validate", good)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, good+": valid, 2 flow rules\n", r.stdout)
}

func TestValidateBadListsEveryProblemWithPosition(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "flow.json", badFlow)
	r := bulwark(t, "validate", bad)
	require.Equal(t, 1, r.code, r)
	// A rule that its Validate refuses is located at its start.
	assert.Equal(t, bad+`:2:3: [0] "GET /orders": count: must be >= 0
`+bad+`:3:43: [1] "GET /items": controlBehaviour: unknown field
`+bad+`:4:39: [2] "GET /users": grade: unknown name "fast": expected 0 (thread) or 1 (QPS)
`, r.stdout)
}

func TestValidateFormatJSON(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "flow.json", badFlow)
	r := bulwark(t, "validate", "--format", "json", bad)
	require.Equal(t, 1, r.code, r)
	var fs []rulechange.Finding
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &fs), r.stdout)
	require.Len(t, fs, 3)
	assert.Equal(t, bad, fs[0].File)
	assert.Equal(t, 2, fs[0].Line)
	assert.Equal(t, 3, fs[0].Column)
	assert.Equal(t, "error", fs[0].Severity)
	require.NotNil(t, fs[0].Rule)
	assert.Equal(t, 0, *fs[0].Rule)
	assert.Equal(t, "GET /orders", fs[0].Resource)
	assert.Equal(t, "must be >= 0", fs[0].Message)

	good := writeFile(t, dir, "good.json", goodFlow)
	r = bulwark(t, "validate", "--format", "json", good)
	require.Equal(t, 0, r.code, r)
	assert.JSONEq(t, `[]`, r.stdout)
}

func TestValidateJavaDashboardDocuments(t *testing.T) {
	dir := t.TempDir()
	flow := writeFile(t, dir, "flow.json", dashboardFlow)
	param := writeFile(t, dir, "param-flow.json", dashboardParamFlow)
	degrade := writeFile(t, dir, "degrade.json", `[{"resource":"GET /orders","grade":0,"count":200,"timeWindow":10,"cut":false,"passCount":0}]`)
	r := bulwark(t, "validate", flow, param, degrade)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, flow+": valid, 1 flow rule\n")
	assert.Contains(t, r.stdout, param+": valid, 1 paramFlow rule\n")
	assert.Contains(t, r.stdout, degrade+": valid, 1 degrade rule\n")
	// The fields of older releases are warnings, with their position.
	assert.Contains(t, r.stdout, degrade+`:1:72: warning: [0] "GET /orders": cut: ignored`)
}

func TestValidateStdinAndRuleSet(t *testing.T) {
	r := cli(t, `{"flow":[{"resource":"a","count":1}],"system":[{"qps":100}]}`, nil, "validate", "-")
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, "-: valid, 2 ruleset rules\n", r.stdout)

	r = cli(t, `{"flow":[{"resource":"a","count":1}],"degrade":[{"resource":"b","count":-2}]}`, nil, "validate", "-")
	require.Equal(t, 1, r.code, r)
	assert.Equal(t, "-:1:49: degrade[0] \"b\": count: must be >= 0\n-:1:49: degrade[0] \"b\": timeWindow: must be > 0 (seconds)\n", r.stdout)

	r = cli(t, `[{"resource":"a","count":1}`, nil, "validate", "-")
	require.Equal(t, 1, r.code, r)
	assert.Equal(t, "-:1:28: not valid JSON: expected ',' or ']', found the end of the document\n", r.stdout)
}

func TestFmtRoundTrip(t *testing.T) {
	dir := t.TempDir()
	flow := writeFile(t, dir, "flow.json", dashboardFlow)
	r := bulwark(t, "fmt", flow)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, `[
  {"resource":"GET /orders","limitApp":"default","grade":1,"count":50,"strategy":0,"refResource":"","controlBehavior":0,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":{"flowId":0,"thresholdType":0,"fallbackToLocalWhenFail":true,"strategy":0,"sampleCount":10,"windowIntervalMs":1000,"resourceTimeout":2000,"resourceTimeoutStrategy":0,"acquireRefuseStrategy":0,"clientOfflineTime":2000}}
]
`, r.stdout)
	canon := writeFile(t, dir, "canon.json", r.stdout)

	// The canonical document holds the same rules, and is canonical.
	r = bulwark(t, "diff", flow, canon)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "no changes")
	r = bulwark(t, "fmt", "--check", canon, flow)
	require.Equal(t, 1, r.code, r)
	assert.Equal(t, flow+"\n", r.stdout)

	// -w rewrites in place; then the file is canonical.
	r = bulwark(t, "fmt", "-w", flow)
	require.Equal(t, 0, r.code, r)
	r = bulwark(t, "fmt", "--check", flow)
	require.Equal(t, 0, r.code, r)

	bad := writeFile(t, dir, "bad.json", badFlow)
	r = bulwark(t, "fmt", bad)
	require.Equal(t, 1, r.code, r)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "count: must be >= 0")
}

func TestHelpForEveryCommand(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			r := bulwark(t, name, "--help")
			require.Equal(t, 0, r.code, r)
			assert.True(t, strings.HasPrefix(r.stdout, "Usage: bulwark "+name+" "), r.stdout)
			r2 := bulwark(t, "help", name)
			assert.Equal(t, r.stdout, r2.stdout)
		})
	}
	r := bulwark(t)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "Exit codes: 0 ok, 1 invalid or differences found")
	r = bulwark(t, "frobnicate")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `unknown command "frobnicate"`)
	r = bulwark(t, "diff", "only-one-argument")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "usage: bulwark diff SOURCE FILE")
	r = bulwark(t, "get", "--no-such-flag", "x")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "flag provided but not defined: -no-such-flag")
}

func TestCredentialsStayOutOfURLsAndOutput(t *testing.T) {
	r := bulwark(t, "get", "etcd://alice:s3cret@127.0.0.1:1/key")
	require.Equal(t, 2, r.code, r)
	assert.NotContains(t, r.stdout+r.stderr, "s3cret")
	assert.Contains(t, r.stderr, "credentials do not go in the URL")
}

func TestFileApplyRefusesInvalidAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "flow.json")
	bad := writeFile(t, dir, "bad.json", badFlow)
	r := bulwark(t, "apply", "--yes", doc, bad)
	require.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, bad+`:2:3: [0] "GET /orders": count: must be >= 0`)
	assert.Contains(t, r.stderr, "nothing written")
	assert.NoFileExists(t, doc)
	assert.NoFileExists(t, doc+".history")
}

func TestFmtFromSentinelGolang(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "go-flow.json", `[
 {"id":"1","resource":"GET /orders","tokenCalculateStrategy":1,"controlBehavior":0,"threshold":100,"warmUpPeriodSec":20,"statIntervalInMs":1000},
 {"resource":"GET /pay","tokenCalculateStrategy":0,"controlBehavior":1,"threshold":10,"maxQueueingTimeMs":200,"relationStrategy":1,"refResource":"GET /orders"},
 {"resource":"mem","tokenCalculateStrategy":2,"threshold":1}
]`)
	r := bulwark(t, "fmt", "--from", "sentinel-golang", src)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, `[
  {"resource":"GET /orders","limitApp":"default","grade":1,"count":100,"strategy":0,"refResource":"","controlBehavior":1,"warmUpPeriodSec":20,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null},
  {"resource":"GET /pay","limitApp":"default","grade":1,"count":10,"strategy":1,"refResource":"GET /orders","controlBehavior":2,"warmUpPeriodSec":10,"maxQueueingTimeMs":200,"clusterMode":false,"clusterConfig":null}
]
`, r.stdout)
	assert.Equal(t, src+`: note: [2] "mem": tokenCalculateStrategy 2 (MemoryAdaptive) has no equivalent: rule left out`+"\n", r.stderr)

	// Rules of several kinds make a rule set; the result validates.
	mixed := writeFile(t, dir, "go-mixed.json", `[
 {"resource":"db","metricType":0,"threshold":20},
 {"resource":"GET /items","strategy":2,"retryTimeoutMs":1500,"threshold":5,"probeNum":3},
 {"metricType":3,"triggerCount":1000,"strategy":-1},
 {"resource":"GET /orders","metricType":1,"paramIndex":0,"threshold":5,"specificItems":[{"valKind":1,"valStr":"vip","threshold":50}]}
]`)
	r = bulwark(t, "fmt", "--from", "sentinel-golang", mixed)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, `"degrade": [
    {"resource":"GET /items","limitApp":"default","grade":2,"count":5,"timeWindow":2,`)
	assert.Contains(t, r.stdout, `{"resource":"db","limitApp":"default","grade":0,"count":20,`)
	assert.Contains(t, r.stdout, `"qps":1000`)
	assert.Contains(t, r.stdout, `"paramFlowItemList":[{"object":"vip","count":50,"classType":"String"}]`)
	assert.Contains(t, r.stderr, `note: [1] "GET /items": retryTimeoutMs 1500: Java's timeWindow is in seconds: 2 s`)
	assert.Contains(t, r.stderr, `note: [1] "GET /items": probeNum has no equivalent`)
	converted := writeFile(t, dir, "converted.json", r.stdout)
	r = bulwark(t, "validate", converted)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, converted+": valid, 4 ruleset rules\n", r.stdout)
}

func TestFileURLs(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "flow.json")
	v1 := writeFile(t, dir, "v1.json", goodFlow)
	r := bulwark(t, "apply", "--yes", "file://"+doc, v1)
	require.Equal(t, 0, r.code, r)
	r = bulwark(t, "get", doc)
	require.Equal(t, 0, r.code, r)
	assert.Equal(t, goodFlow, r.stdout)
	r = bulwark(t, "diff", "file://localhost"+doc, v1)
	assert.Equal(t, 0, r.code, r)
	r = bulwark(t, "get", "ftp://host/x")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, `unknown source scheme in "ftp://host/x"`)
}

// TestEditConflictKeepsTheEdit: someone else applies while the editor is
// open; the edit is not written (exit 3) and is kept in a file.
func TestEditConflictKeepsTheEdit(t *testing.T) {
	dir := t.TempDir()
	doc := writeFile(t, dir, "flow.json", goodFlow)
	other := writeFile(t, dir, "other.json", flowA)
	editor := writeFile(t, dir, "editor.sh", fmt.Sprintf(`#!/bin/sh
%s apply --yes --author someone-else %s %s >/dev/null
sed -i 's/"count": 100/"count": 150/' "$1"
`, bin, doc, other))
	require.NoError(t, os.Chmod(editor, 0o755))
	r := cli(t, "", []string{"EDITOR=" + editor, "VISUAL="}, "edit", "--yes", doc)
	require.Equal(t, 3, r.code, r)
	assert.Contains(t, r.stderr, "changed since it was read")
	m := regexp.MustCompile(`your edit is kept in (\S+)`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	kept, err := os.ReadFile(m[1])
	require.NoError(t, err)
	assert.Contains(t, string(kept), `"count": 150`)
	require.NoError(t, os.RemoveAll(filepath.Dir(m[1])))
	got, err := os.ReadFile(doc)
	require.NoError(t, err)
	assert.Equal(t, flowA, string(got), "the other writer's document stays")
}

// TestInterruptAtTheQuestion: Ctrl-C while apply asks is a no.
func TestInterruptAtTheQuestion(t *testing.T) {
	dir := t.TempDir()
	doc := writeFile(t, dir, "flow.json", goodFlow)
	v2 := writeFile(t, dir, "v2.json", flowV2)
	p := start(t, nil, "apply", doc, v2)
	require.Eventually(t, func() bool { return strings.Contains(p.errOut.String(), "write this to") }, 30*time.Second, 10*time.Millisecond)
	p.interrupt(t)
	r := p.wait(t)
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stderr, "not confirmed: nothing written")
	got, err := os.ReadFile(doc)
	require.NoError(t, err)
	assert.Equal(t, goodFlow, string(got))
}

// sharedFlowID is valid rule by rule, but its shadow cluster rule shares
// the enforcing cluster rule's flowId, which an engine refuses.
const sharedFlowID = `[
  {"resource": "GET /orders", "count": 100, "clusterMode": true, "clusterConfig": {"flowId": 7}},
  {"resource": "GET /orders", "count": 80, "clusterMode": true, "clusterConfig": {"flowId": 7}, "shadow": true}
]
`

// TestValidateChecksRulesAgainstEachOther: validate, apply and set refuse
// what a service's engine would refuse though every rule is valid alone,
// in a single-kind document and in a rule set.
func TestValidateChecksRulesAgainstEachOther(t *testing.T) {
	dir := t.TempDir()
	doc := writeFile(t, dir, "flow.json", sharedFlowID)
	r := bulwark(t, "validate", doc)
	require.Equal(t, 1, r.code, r)
	assert.Equal(t, doc+`: [1] "GET /orders": clusterConfig.flowId: shadow cluster rule shares flowId 7 with enforcing cluster rule rules[0] ("GET /orders") and would spend its budget; give the shadow rule a flowId of its own
`, r.stdout)

	set := writeFile(t, dir, "set.json", `{"flow": `+sharedFlowID+`, "degrade": [{"resource": "GET /orders", "grade": 2, "count": 5, "timeWindow": 10}]}`)
	r = bulwark(t, "validate", set)
	require.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stdout, set+`: flow[1] "GET /orders": clusterConfig.flowId: shadow cluster rule shares flowId 7`)

	// apply writes nothing; set refuses to make the conflict.
	target := writeFile(t, dir, "target.json", goodFlow)
	r = bulwark(t, "apply", "--yes", target, doc)
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, "nothing written")
	solo := writeFile(t, dir, "solo.json", strings.Replace(sharedFlowID, `"clusterConfig": {"flowId": 7}, "shadow": true`, `"clusterConfig": {"flowId": 8}, "shadow": true`, 1))
	r = bulwark(t, "validate", solo)
	require.Equal(t, 0, r.code, r)
	r = bulwark(t, "set", solo, "GET /orders", "clusterConfig.flowId=7", "--where", "shadow=true")
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, "the changed rule is not valid, nothing written")
	assert.Contains(t, r.stderr, "shares flowId 7")
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, goodFlow, string(got))
}
