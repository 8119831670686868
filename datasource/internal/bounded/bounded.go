// Package bounded waits for goroutines up to a bound: how a Readable's
// Close and a backend's Close wait for work that may ignore cancellation
// (a call that takes no context), without hanging on it.
package bounded

import (
	"sync"
	"time"
)

// Wait waits for wg for at most d (d <= 0: without bound) and reports
// whether wg finished. When it gives up, the goroutine waiting for wg stays
// until wg finishes.
func Wait(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if d <= 0 {
		<-done
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
