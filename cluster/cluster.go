package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/bulwark-go/bulwark/core/flow"
)

// TokenService hands out the tokens of cluster-mode flow rules. The engine
// asks it for one [Budget] per cluster rule when the rule is loaded, and
// releases the budget when the rule goes away; an unchanged rule keeps its
// budget across rule swaps.
type TokenService interface {
	// Budget returns the budget of r, a valid cluster-mode rule (its
	// defaults applied). Rules with the same ClusterConfig.FlowID share one
	// budget across every instance, whatever their resources.
	Budget(r flow.Rule) Budget
}

// Budget is one cluster rule's share of a flow's budget, as seen by one
// instance. It is safe for concurrent use.
type Budget interface {
	// RequestToken asks for acquire tokens for one entry. It must return
	// within the service's timeout whatever the service's backend does:
	// a backend that cannot answer in time is a [Fail], which the engine
	// turns into the rule's fallback.
	RequestToken(ctx context.Context, acquire int64, prioritized bool) Result
	// Release tells the service the rule is no longer in force. The engine
	// calls it once; entries already in flight may still call RequestToken.
	Release()
}

// Result is a budget's answer to RequestToken.
type Result struct {
	Status Status
	// Wait is how long a prioritized entry must wait before it runs (with
	// ShouldWait): its token belongs to the next window.
	Wait time.Duration
}

// Status is the verdict of a Result: Java's TokenResultStatus, reduced to
// what an entry can act on.
type Status uint8

// Statuses. The zero value is OK, so that a zero Result admits.
const (
	// OK: the entry has its tokens.
	OK Status = iota
	// Blocked: the flow's budget for this window is spent.
	Blocked
	// ShouldWait: a prioritized entry got tokens of the next window and
	// must wait Result.Wait first.
	ShouldWait
	// Fail: no answer could be had in time (the backend is slow, down or
	// backing off). The engine applies the rule's fallback: the local check
	// with the rule's count when ClusterConfig.FallbackToLocalWhenFail is
	// set, otherwise the entry passes, as in Java.
	Fail
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Blocked:
		return "blocked"
	case ShouldWait:
		return "shouldWait"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Health is the state of a token service's backend. A TokenService that
// has a method
//
//	Health() cluster.Health
//
// (cluster/redis's has) reports it through the engine's statistics
// (core.Stats.Cluster), and so to its metrics and live page.
type Health struct {
	// Healthy is false while the backend is failing: entries that need it
	// get Fail (their rule's fallback), without asking it while the
	// service backs off.
	Healthy bool
	// Err is the last failure while not Healthy.
	Err error
	// Since is when Healthy last changed (zero if it never did).
	Since time.Time
	// Failures counts the consecutive failed requests to the backend.
	Failures int
	// Requests counts the requests sent to the backend (cluster/redis:
	// the leases asked of Redis); Fallbacks the entries answered Fail.
	// Both only grow.
	Requests, Fallbacks uint64
}
