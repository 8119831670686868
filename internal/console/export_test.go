package console

import "time"

// WithClock sets the clock of sessions and sign-in limits.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Refresh lists and fetches the fleet now.
func (s *Server) Refresh() { s.fleet.refresh(s.ctx) }
