package rulesfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSourceDirIsTheCallersFolder(t *testing.T) {
	wd, err := os.Getwd() // go test runs in the package's folder
	require.NoError(t, err)
	assert.Equal(t, wd, SourceDir())
	t.Chdir(t.TempDir())
	assert.Equal(t, wd, SourceDir(), "whatever the working directory")
}

func TestDefaultFollowsACopyWithoutTheSourcesFile(t *testing.T) {
	// This folder has no rules.json: Default says it follows a copy.
	t.Setenv("TMPDIR", t.TempDir())
	var out strings.Builder
	path, err := Default(&out, "test", []byte("[]"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(os.TempDir(), "bulwark-test", "rules.json"), path)
	assert.Equal(t, "the rules.json beside the source is not there: following a copy of the built-in one\n", out.String())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "[]", string(data))
}
