package circuitbreaker

import (
	"fmt"
	"time"
)

// State is the state of a rule's circuit breaker.
type State int32

// States. A breaker starts Closed.
const (
	// Closed lets every call through and watches their outcome.
	Closed State = iota
	// Open blocks every call until the rule's TimeWindow has passed.
	Open
	// HalfOpen has let one probe call through and blocks the others until
	// the probe completes.
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// StateChange is one transition of a breaker, delivered to the listeners
// of core.Engine.OnBreakerStateChange: Java's
// CircuitBreakerStateChangeObserver arguments.
type StateChange struct {
	From, To State
	// Value is what triggered the transition:
	//   - CLOSED → OPEN: the slow ratio, error ratio or error count of the
	//     statistic interval (AvgRT: the average RT, ms);
	//   - HALF_OPEN → OPEN: the probe's RT in ms for SlowRequestRatio, 1 for
	//     a failed probe or a probe that a later check blocked;
	//   - OPEN → HALF_OPEN, HALF_OPEN → CLOSED, OPEN → CLOSED (AvgRT): 0.
	Value float64
	// Rule is the breaker's rule.
	Rule Rule
	// Time is when the transition was made, on the engine's clock (see
	// core.WithClock).
	Time time.Time
}
