package datasource

import (
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffBounds(t *testing.T) {
	for n := range 20 {
		d := backoff(n, 100*time.Millisecond, 5*time.Second)
		want := min(100*time.Millisecond<<max(n-1, 0), 5*time.Second)
		assert.GreaterOrEqual(t, d, want/2, "n=%d", n)
		assert.LessOrEqual(t, d, want, "n=%d", n)
	}
	// Jitter: not every delay the same.
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[backoff(5, 100*time.Millisecond, 5*time.Second)] = true
	}
	assert.Greater(t, len(seen), 1)
}

func TestNormalize(t *testing.T) {
	assert.Equal(t, Snapshot{Missing: true}, normalize(Snapshot{Missing: true, Revision: "x", Data: []byte("y")}))
	s := normalize(Snapshot{Data: []byte("[]")})
	assert.Equal(t, contentrev.Of([]byte("[]")), s.Revision)
	assert.Len(t, s.Revision, 32)
}

func TestAfterWrite(t *testing.T) {
	a := Snapshot{Revision: "a"}
	b := Snapshot{Revision: "b"}
	missing := Snapshot{Missing: true}
	read := func(s Snapshot) docState { return docState{valid: true, missing: s.Missing, rev: s.Revision} }
	for _, tc := range []struct {
		name          string
		doc           docState
		prev, written Snapshot
		want          seen
	}{
		{"the write", read(b), a, b, sawWrite},
		{"the replaced document", read(a), a, b, sawStale},
		{"another document", read(Snapshot{Revision: "c"}), a, b, sawLater},
		{"missing after an update", read(missing), a, b, sawStale},
		{"missing after a create", read(missing), missing, b, sawStale},
		{"a delete written", read(missing), a, missing, sawWrite},
		{"present after a delete written", read(a), a, missing, sawStale},
		{"another document after a delete written", read(b), a, missing, sawLater},
	} {
		assert.Equal(t, tc.want, afterWrite(tc.doc, tc.prev, tc.written), tc.name)
	}
}
