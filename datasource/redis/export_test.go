package redis

// WithCloseWait lets tests shorten how long Close waits for calls in flight.
var WithCloseWait = withCloseWait
