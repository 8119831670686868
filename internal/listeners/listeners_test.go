package listeners_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/internal/listeners"
)

func names(s *listeners.Set[func() string]) []string {
	var out []string
	for _, fn := range s.List() {
		out = append(out, fn())
	}
	return out
}

func TestSetOrderAndRemove(t *testing.T) {
	var s listeners.Set[func() string]
	assert.Empty(t, s.List())
	assert.Equal(t, 0, s.Len())
	removeA := s.Add(func() string { return "a" })
	removeB := s.Add(func() string { return "b" })
	s.Add(func() string { return "c" })
	assert.Equal(t, []string{"a", "b", "c"}, names(&s))

	removeB()
	assert.Equal(t, []string{"a", "c"}, names(&s))
	removeB() // a second call does nothing
	assert.Equal(t, []string{"a", "c"}, names(&s))
	s.Add(func() string { return "d" })
	removeA()
	assert.Equal(t, []string{"c", "d"}, names(&s))
	assert.Equal(t, 2, s.Len())
}

// A List taken before a change is not changed by it.
func TestSetListIsASnapshot(t *testing.T) {
	var s listeners.Set[func() string]
	remove := s.Add(func() string { return "a" })
	before := s.List()
	remove()
	s.Add(func() string { return "b" })
	require.Len(t, before, 1)
	assert.Equal(t, "a", before[0]())
}

func TestSetListDoesNotAllocate(t *testing.T) {
	var s listeners.Set[func(int)]
	s.Add(func(int) {})
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		for _, fn := range s.List() {
			fn(n)
			n++
		}
	})
	assert.Zero(t, allocs)
}

// Adding, removing and listing concurrently is safe (run with -race).
func TestSetConcurrent(t *testing.T) {
	var s listeners.Set[func() int]
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				remove := s.Add(func() int { return g*1000 + i })
				for _, fn := range s.List() {
					fn()
				}
				remove()
			}
		})
	}
	wg.Wait()
	assert.Zero(t, s.Len())
}
