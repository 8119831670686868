package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/examples/internal/exampletest"
	"github.com/bulwark-go/bulwark/examples/internal/rulesfile"
)

func TestLocateFindsTheFileBesideTheSource(t *testing.T) {
	// go test runs in the package's folder: rules.json here is the one
	// beside the source.
	beside, err := filepath.Abs("rules.json")
	require.NoError(t, err)
	for _, wd := range []string{".", "../..", t.TempDir()} {
		t.Run(wd, func(t *testing.T) {
			t.Chdir(wd)
			tmp := t.TempDir()
			path, copied, err := rulesfile.Locate(rulesfile.SourceDir(), tmp, "quickstart", defaultRules)
			require.NoError(t, err)
			assert.False(t, copied)
			exampletest.SameFile(t, beside, path)
			assert.NoDirExists(t, filepath.Join(tmp, "bulwark-quickstart"), "no copy written")
		})
	}
}

func TestLocateCopiesTheBuiltInRulesWithoutTheSource(t *testing.T) {
	src, tmp := t.TempDir(), t.TempDir() // src: a source folder without rules.json
	path, copied, err := rulesfile.Locate(src, tmp, "quickstart", defaultRules)
	require.NoError(t, err)
	assert.True(t, copied)
	assert.Equal(t, filepath.Join(tmp, "bulwark-quickstart", "rules.json"), path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, defaultRules, data)

	// A later run follows the same copy, with its edits.
	require.NoError(t, os.WriteFile(path, []byte("[]"), 0o600))
	again, copied, err := rulesfile.Locate("", tmp, "quickstart", defaultRules)
	require.NoError(t, err)
	assert.True(t, copied)
	assert.Equal(t, path, again)
	data, err = os.ReadFile(again)
	require.NoError(t, err)
	assert.Equal(t, "[]", string(data))

	// Once the source folder has a rules.json, that one is used.
	require.NoError(t, os.WriteFile(filepath.Join(src, "rules.json"), defaultRules, 0o644))
	path, copied, err = rulesfile.Locate(src, tmp, "quickstart", defaultRules)
	require.NoError(t, err)
	assert.False(t, copied)
	assert.Equal(t, filepath.Join(src, "rules.json"), path)
}

// TestGoRunFollowsTheFileBesideTheSource runs the README's commands: go
// run from the repository root and from the example's folder.
func TestGoRunFollowsTheFileBesideTheSource(t *testing.T) {
	exampletest.GoRun(t, "./examples/quickstart", []string{"-duration", "100ms"}, func(t *testing.T, out string) {
		assert.NotContains(t, out, "copy of the built-in")
	})
}

// start runs the quickstart on path until the test ends, and returns a
// function that waits until the output after mark contains every want.
func start(t *testing.T, path string) (out *exampletest.Output, waitFor func(mark int, want ...string) int) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	out = exampletest.Start(t, ctx, 20*time.Second, func(ctx context.Context, out io.Writer) error {
		return run(ctx, out, config{path: path, every: 200 * time.Millisecond, statusEvery: 10 * time.Millisecond, admin: "127.0.0.1:0"})
	})
	return out, out.WaitFor
}

func TestQuickstartFollowsEditsAndSurvivesTypos(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	exampletest.Save(t, path, string(defaultRules))
	out, waitFor := start(t, path)
	mark := waitFor(0, "following "+path, "+ GET /orders: count=20", "by flow rule QPS 20")
	assert.NotContains(t, out.String(), "warning")

	// A threshold change prints old → new and is applied.
	edited := strings.Replace(string(defaultRules), `"count":20`, `"count":3`, 1)
	exampletest.Save(t, path, edited)
	mark = waitFor(mark, "rules changed: 3 in force\n  ~ GET /orders: count 20 → 3\n")
	mark = waitFor(mark, "by flow rule QPS 3")

	// A typo is reported and the rules in force keep working.
	exampletest.Save(t, path, `[{"resource": "GET /orders", "count": 3,]`)
	mark = waitFor(mark, "document rejected: the 3 rules in force stay")
	mark = waitFor(mark, "by flow rule QPS 3", "GET /inventory")

	// Fixed back to the rules in force: said so, nothing changes.
	exampletest.Save(t, path, edited)
	mark = waitFor(mark, "document valid again, rules unchanged (3 in force)")
	mark = waitFor(mark, "by flow rule QPS 3")

	// Deleting the file clears the rules, loudly.
	require.NoError(t, os.Remove(path))
	waitFor(mark, "rules changed: none in force", "warning: the document was deleted: no rules in force")
	assert.NotContains(t, out.String(), "1 added")
}

func TestQuickstartMissingFileIsLoud(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	_, waitFor := start(t, path)
	mark := waitFor(0, "warning: "+path+" does not exist: no rules in force")

	exampletest.Save(t, path, `[{"resource": "GET /orders", "count": 5}]`)
	waitFor(mark, "rules changed: 1 in force\n  + GET /orders: count=5\n", "by flow rule QPS 5")
}

func TestQuickstartBrokenAtStartHasNoRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	exampletest.Save(t, path, `[{"resource": "GET /orders", "count": 5,]`)
	out, waitFor := start(t, path)
	mark := waitFor(0, "warning: no rules in force, every call passes until the file is fixed")

	exampletest.Save(t, path, `[{"resource": "GET /orders", "count": -5}]`) // another mistake
	mark = waitFor(mark, "document rejected: no rules in force")

	exampletest.Save(t, path, `[{"resource": "GET /orders", "count": 5}]`)
	waitFor(mark, "+ GET /orders: count=5", "document valid again\n", "by flow rule QPS 5")
	assert.NotContains(t, out.String(), "still in force")
	assert.NotContains(t, out.String(), "rules in force stay")
}

// TestQuickstartServesTheLivePage reads the page's URL from the output and
// finds the demo's traffic and rules behind it.
func TestQuickstartServesTheLivePage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	exampletest.Save(t, path, string(defaultRules))
	out, waitFor := start(t, path)
	waitFor(0, "live page: http://127.0.0.1:")
	m := regexp.MustCompile(`live page: (http://127\.0\.0\.1:\d+/debug/bulwark/)\n`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())

	resp, err := http.Get(m[1])
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), "<title>bulwark</title>")

	require.Eventually(t, func() bool {
		resp, err := http.Get(m[1] + "api/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st struct {
			Resources []struct {
				Resource string
				Second   struct{ Blocked int64 }
			}
			Rules []struct {
				Kind   string
				Count  int
				Source string
			}
		}
		if json.NewDecoder(resp.Body).Decode(&st) != nil || len(st.Rules) == 0 {
			return false
		}
		blocked := false
		for _, r := range st.Resources {
			blocked = blocked || (r.Resource == "GET /orders" && r.Second.Blocked > 0)
		}
		return blocked && st.Rules[0].Count == 3 && st.Rules[0].Source != ""
	}, 20*time.Second, 50*time.Millisecond, "the page never showed GET /orders blocked under the file's rules")
}
