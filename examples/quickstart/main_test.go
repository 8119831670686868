package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// syncBuffer is an io.Writer the test reads while run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestQuickstartFollowsEditsAndSurvivesTypos(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, defaultRules, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, &out, path, 200*time.Millisecond) }()

	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		require.Eventually(t, func() bool { return cond(out.String()) }, 20*time.Second, 50*time.Millisecond,
			"waiting for %s; output so far:\n%s", what, out.String())
	}
	waitFor("the first report", func(s string) bool { return strings.Contains(s, "by flow rule QPS 20") })

	// A threshold change is applied and reported.
	edited := strings.Replace(string(defaultRules), `"count": 20`, `"count": 3`, 1)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	waitFor("the new threshold", func(s string) bool { return strings.Contains(s, "by flow rule QPS 3") })

	// A typo is reported and the rules in force keep working.
	require.NoError(t, os.WriteFile(path, []byte(`[{"resource": "GET /orders", "count": 3,]`), 0o644))
	waitFor("the rejection", func(s string) bool { return strings.Contains(s, "rules file rejected, previous rules still in force") })
	mark := len(out.String())
	waitFor("reports after the typo", func(s string) bool {
		return strings.Contains(s[mark:], "by flow rule QPS 3") && strings.Contains(s[mark:], "GET /inventory")
	})

	cancel()
	require.NoError(t, <-done)
}
