package stat

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBucketAtAndTotals(t *testing.T) {
	for _, stripes := range []int{1, 4} {
		w := NewWindow(2, 1000, stripes)
		w.Add(ms(100), Pass, 3)
		w.Add(ms(100), Block, 2)
		w.complete(200, 2, 30, true, false, 0)
		w.complete(200, 1, 7, false, false, 0)
		w.Add(ms(600), Pass, 5)

		b, ok := w.BucketAt(ms(0))
		assert.True(t, ok)
		assert.Equal(t, Bucket{Pass: 3, Block: 2, Success: 3, Exception: 2, RT: 37, MinRT: 7}, b, "stripes %d", stripes)
		_, ok = w.BucketAt(ms(1000))
		assert.False(t, ok, "not written yet")

		tot := w.Totals(ms(700))
		assert.Equal(t, int64(8), tot.Pass)
		assert.Equal(t, int64(7), tot.MinRT)
		assert.Equal(t, w.Sum(ms(700), Pass), tot.Pass)

		w.Add(ms(1100), Pass, 1) // reuses the slot of [0, 500)
		_, ok = w.BucketAt(ms(0))
		assert.False(t, ok, "reused for a later start")
		b, ok = w.BucketAt(ms(500))
		assert.True(t, ok)
		assert.Equal(t, int64(5), b.Pass)
		assert.Equal(t, int64(math.MaxInt64), b.MinRT, "nothing completed")
	}
}

func TestTallyCountsKinds(t *testing.T) {
	ty := NewTally(2)
	ty.Add(ms(100), 1, 2)
	ty.Add(ms(100), 5, 3)
	ty.Add(ms(600), 5, 1)
	ty.Add(ms(600), 0, 9) // out of range: ignored
	ty.Add(ms(600), TallyKinds, 9)
	c, ok := ty.BucketAt(ms(0))
	assert.True(t, ok)
	assert.Equal(t, Counts{0, 2, 0, 0, 0, 3}, c)
	assert.Equal(t, Counts{0, 2, 0, 0, 0, 4}, ty.Totals(ms(700)))
	assert.Equal(t, Counts{0, 0, 0, 0, 0, 1}, ty.Totals(ms(1200)), "the first bucket slid out")
	assert.Equal(t, int64(500), ty.BucketMs())
}

// Every kind is counted, whatever slot of the window it uses: kind 2 is
// the slot of completions, which a striped window keeps apart.
func TestTallyCountsEveryKind(t *testing.T) {
	for _, stripes := range []int{1, 2, 4} {
		ty := NewTally(stripes)
		for k := 1; k < TallyKinds; k++ {
			ty.Add(ms(100), k, int64(10*k))
		}
		want := Counts{0, 10, 20, 30, 40, 50}
		c, ok := ty.BucketAt(ms(0))
		assert.True(t, ok)
		assert.Equal(t, want, c, "stripes %d", stripes)
		assert.Equal(t, want, ty.Totals(ms(200)), "stripes %d", stripes)
	}
}
