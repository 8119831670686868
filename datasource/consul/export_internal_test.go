package consul

// WithWaitTime lets tests shorten each blocking query of Watch.
var WithWaitTime = withWaitTime
