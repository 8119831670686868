package core

import (
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// RuleSet holds rules of every kind; Engine.LoadRuleSet applies them together: all kinds change or none.
type RuleSet struct {
	Flow           []flow.Rule
	CircuitBreaker []circuitbreaker.Rule
	System         []system.Rule
	Authority      []authority.Rule
	Hotspot        []hotspot.Rule
}
