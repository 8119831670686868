package bulwarkhttp

// BlockResponse is the default answer to a blocked request, for tests.
var BlockResponse = blockResponse
