// Package testclock is a core.Clock for tests whose time moves only when the
// test says so: the engine's and the adapters' tests drive windows, pacing
// and breakers with it instead of sleeping.
package testclock

import (
	"context"
	"sync"
	"time"
)

// Clock is a core.Clock with a Sleep method (the engine waits through it)
// whose time moves only through Advance and Sleep.
// Safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock at a fixed instant.
func New() *Clock { return &Clock{t: time.Unix(1_700_000_000, 0)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Sleep advances the clock by d at once, so an entry the engine makes wait
// returns immediately; it returns ctx's error if ctx has ended.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}
