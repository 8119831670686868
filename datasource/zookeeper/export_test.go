package zookeeper

// WithCloseWait lets tests shorten how long Close waits for calls in flight.
var WithCloseWait = withCloseWait

// WithSessionCheck lets tests change how often Watch checks the session;
// ErrNoSession is what the errors of calls without a session wrap.
var (
	WithSessionCheck = withSessionCheck
	ErrNoSession     = errNoSession
)
