// Package testtraffic drives known traffic through an engine on a test
// clock, a second at a time, for the tests of what the engine measures
// (suggestions from the baseline, in core, admin and the CLI).
package testtraffic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

// Load is one resource's traffic in one second: N entries from Origin
// (none when empty), Blocked of them blocked by the rules in force, the
// first Failed of the others failing, each taking RT (under 500 ms).
type Load struct {
	Resource  string
	Origin    string
	N, Failed int
	Blocked   int
	RT        time.Duration
}

// ErrFailed is the error the failing entries report.
var ErrFailed = errors.New("testtraffic: failed")

// Second enters every load's entries at the clock's time, exits each
// after its RT, and moves the clock on by a second, reading the
// statistics every half second as the engine's harvesting goroutine would
// on a real clock. Start the clock on a whole second of the engine (a new
// engine's clock is). It fails when the rules block other than Blocked
// entries of a load.
func Second(e *core.Engine, clk *testclock.Clock, loads ...Load) error {
	start := clk.Now()
	entries := make([][]*core.Entry, len(loads))
	for i, l := range loads {
		if l.RT >= 500*time.Millisecond {
			return fmt.Errorf("testtraffic: %s: RT %v, want under 500ms", l.Resource, l.RT)
		}
		var opts []core.EntryOption
		if l.Origin != "" {
			opts = append(opts, core.WithOrigin(l.Origin))
		}
		blocked := 0
		for range l.N {
			en, err := e.Enter(context.Background(), l.Resource, opts...)
			if errors.Is(err, core.ErrBlocked) {
				blocked++
				continue
			}
			if err != nil {
				return fmt.Errorf("testtraffic: %s: %w", l.Resource, err)
			}
			entries[i] = append(entries[i], en)
		}
		if blocked != l.Blocked {
			return fmt.Errorf("testtraffic: %s: %d of %d entries blocked, want %d", l.Resource, blocked, l.N, l.Blocked)
		}
	}
	order := make([]int, len(loads))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(loads[a].RT, loads[b].RT) })
	for _, i := range order {
		clk.Advance(start.Add(loads[i].RT).Sub(clk.Now()))
		for j, en := range entries[i] {
			if j < loads[i].Failed {
				en.SetError(ErrFailed)
			}
			en.Exit()
		}
	}
	clk.Advance(start.Add(500 * time.Millisecond).Sub(clk.Now()))
	e.History("")
	clk.Advance(500 * time.Millisecond)
	e.History("")
	return nil
}
