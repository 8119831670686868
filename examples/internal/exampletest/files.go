package exampletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Shipped copies the rules.json the example ships with (in the test's
// working directory, the example's folder) to a temporary file, and
// returns its path.
func Shipped(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("rules.json")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// Save replaces path's content atomically, as editors save.
func Save(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// SameFile asserts that a and b are one file.
func SameFile(t *testing.T, a, b string) {
	t.Helper()
	ai, err := os.Stat(a)
	require.NoError(t, err)
	bi, err := os.Stat(b)
	require.NoError(t, err)
	assert.True(t, os.SameFile(ai, bi), "%s and %s are different files", a, b)
}

var following = regexp.MustCompile(`(?m)^following (.+) \(edit it`)

// GoRun runs the README's commands for the example pkg (as
// "./examples/quickstart"): go run with args from the example's folder
// (the test's working directory) and from the repository root, each in a
// subtest. Each run must succeed and follow the rules.json beside the
// source (its line "following PATH (edit it"); check then looks at the
// output. Short tests, and a machine without the go command, skip it: it
// builds the program.
func GoRun(t *testing.T, pkg string, args []string, check func(t *testing.T, out string)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the program")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	for _, tc := range []struct{ dir, pkg string }{{".", "."}, {"../..", pkg}} {
		t.Run(tc.pkg, func(t *testing.T) {
			cmd := exec.Command(gobin, append([]string{"run", tc.pkg}, args...)...)
			cmd.Dir = tc.dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			m := following.FindSubmatch(out)
			require.NotNil(t, m, "no 'following' line in:\n%s", out)
			SameFile(t, "rules.json", string(m[1]))
			check(t, string(out))
		})
	}
}
