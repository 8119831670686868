package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/flow"
)

// diffAligned, which a swap takes when both lists name the same resources
// at the same places, one rule each, finds what diffSorted finds.
func TestDiffAlignedAsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	equal, resource := flowKind.equal, flowKind.resource
	for n := range 200 {
		size := 1 + rng.IntN(40)
		old := make([]flow.Rule, size)
		for i := range old {
			old[i] = flow.Rule{Resource: fmt.Sprintf("r%d", rng.Int()), Count: float64(rng.IntN(3))}
		}
		cur := slices.Clone(old)
		for i := range cur {
			if rng.IntN(3) == 0 {
				cur[i].Count = float64(rng.IntN(3)) // changed, or not
			}
		}
		og := byResource(old, resource)
		keys := make([]string, len(cur))
		for i := range cur {
			keys[i] = cur[i].Resource
		}
		require.True(t, og.alone(keys), "case %d", n)
		a := diffAligned(old, og, cur, keys, equal)
		s := diffSorted(old, og, cur, keys, equal)
		assert.Equal(t, s.fresh, a.fresh, "case %d", n)
		assert.Equal(t, s.gone, a.gone, "case %d", n)
		assert.Equal(t, s.nFresh, a.nFresh, "case %d", n)
		assert.Equal(t, s.nGone, a.nGone, "case %d", n)
		assert.Equal(t, s.resources(), a.resources(), "case %d", n)
		var want []string // the resources of the rules that changed, plainly
		for o := range old {
			if s.gone[o] {
				want = append(want, old[o].Resource)
			}
		}
		for c := range cur {
			if s.fresh[c] {
				want = append(want, cur[c].Resource)
			}
		}
		slices.Sort(want)
		assert.Equal(t, slices.Compact(want), s.resources(), "case %d", n)
		assert.Equal(t, s.cur, a.cur, "case %d: the grouping kept for the next swap", n)
	}
}

// A list that names a resource twice, or names other resources or the
// same in another order, is not aligned: diff sorts it.
func TestDiffAlignedOnlyForOneRulePerPlace(t *testing.T) {
	rs := func(names ...string) []string { return names }
	og := group(rs("a", "b", "c"))
	assert.True(t, og.alone(rs("a", "b", "c")))
	assert.False(t, og.alone(rs("a", "c", "b")))
	assert.False(t, og.alone(rs("a", "b")))
	assert.False(t, og.alone(rs("a", "b", "d")))
	assert.False(t, group(rs("a", "a", "c")).alone(rs("a", "a", "c")))
	assert.False(t, group(nil).alone(nil))
}
