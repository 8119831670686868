package core_test

import (
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

// The test clock takes over the engine's waiting through the documented
// contract.
var _ core.Sleeper = (*testclock.Clock)(nil)
