package overlay

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGroups(t *testing.T) {
	names := []string{
		"flow.json.overlay.canary",
		"flow.json.overlay.eu-west_2",
		"flow.json.overlay.canary",           // listed twice (two Redis masters)
		"flow.json.overlay.",                 // no group
		"flow.json.overlay.a.b",              // not a group: a dot
		"flow.json.overlay.canary.tmp-12345", // a temporary file beside an overlay
		"flow.json.overlayX",
		"flow.json.overlay",
		"flow.json.history",
		"flow.json",
		".flow.json.overlay.canary.lock",
		"other.json.overlay.canary",
		"xflow.json.overlay.canary",
		"flow.json.overlay." + string(make([]byte, 65)), // too long, and not letters
	}
	assert.Equal(t, []string{"canary", "eu-west_2"}, Groups("flow.json", names))
	assert.Empty(t, Groups("flow.json", nil))
	assert.Equal(t, "flow.json.overlay.canary", Name("flow.json", "canary"))
	assert.True(t, ValidGroup("Canary-1_b"))
	for _, g := range []string{"", "a.b", "a/b", "a b", "é", string(make([]byte, 65))} {
		assert.False(t, ValidGroup(g), "%q", g)
	}
}
