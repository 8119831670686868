package redis

// WithCloseWait lets tests shorten how long Close waits for calls in flight.
var WithCloseWait = withCloseWait

// WithHealthCheckInterval lets tests shorten how long Watch lets a
// subscription stay silent.
var WithHealthCheckInterval = withHealthCheckInterval
