package core_test

import (
	"context"
	"sync"
	"time"

	"github.com/bulwark-go/bulwark/core"
)

// fakeClock is a Clock whose time moves only when told; Sleep advances it,
// so waiting entries (pacing, occupied windows) return at once.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

// The test clocks take over the engine's waiting through the documented
// contract.
var (
	_ core.Sleeper = (*fakeClock)(nil)
	_ core.Sleeper = (*stepClock)(nil)
)
