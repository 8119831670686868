package core

// For the tests of package core_test: the engine's unexported contracts.
type Sleeper = sleeper

var ErrInvalidArgument = errInvalidArgument
