package datasource

// CloseTimeout is closeTimeout, for the external tests.
const CloseTimeout = closeTimeout
