package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/converter"
)

const rulesDoc = `[{"resource":"GET /orders","count":20},{"resource":"GET /items","grade":0,"count":4}]`

func TestRunChangesOneThreshold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, []byte(rulesDoc), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out, path, "GET /orders", 50))
	assert.Equal(t, "before:\n  GET /orders     QPS 20\n  GET /items      thread 4\n"+
		"after:\n  GET /orders     QPS 50\n  GET /items      thread 4\n", out.String())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rules, err := converter.FlowRules().Convert(data)
	require.NoError(t, err)
	assert.Equal(t, 50.0, rules[0].Count)
	assert.Equal(t, 4.0, rules[1].Count)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "permissions kept")
}

func TestRunUnknownResourceChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, []byte(rulesDoc), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := run(ctx, &bytes.Buffer{}, path, "POST /nowhere", 1)
	require.ErrorIs(t, err, errNoRule)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, rulesDoc, string(data))
}

func TestRunMissingFileSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow-rules.json")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := run(ctx, &bytes.Buffer{}, path, "GET /orders", 1)
	require.ErrorIs(t, err, errMissing)
	assert.Contains(t, err.Error(), path)
	assert.NoFileExists(t, path, "nothing created")
}
