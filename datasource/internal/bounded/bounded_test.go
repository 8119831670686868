package bounded_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/bulwark-go/bulwark/datasource/internal/bounded"
)

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var wg sync.WaitGroup
		release := make(chan struct{})
		wg.Go(func() { <-release })
		start := time.Now()
		assert.False(t, bounded.Wait(&wg, time.Second), "still running")
		assert.Equal(t, time.Second, time.Since(start), "gave up at the bound")
		close(release)
		assert.True(t, bounded.Wait(&wg, time.Second))
		assert.True(t, bounded.Wait(&wg, 0), "no bound")
	})
}
