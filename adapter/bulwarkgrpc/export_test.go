package bulwarkgrpc

// Blocked is the error of a blocked call, for tests.
var Blocked = blocked
