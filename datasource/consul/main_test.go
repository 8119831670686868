package consul_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine started by the tests (Readables, watches, beats,
// proxies) has ended when the package's tests end. The HTTP transports of
// the Consul clients (and of the Docker client, in docker mode) hold idle
// connections: those are not ours; nor is the thread from which the
// integration package starts local servers.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, append(httpConns,
		goleak.IgnoreAnyFunction("github.com/bulwark-go/bulwark/internal/integration.init.func3.1"))...)
}

var httpConns = []goleak.Option{
	goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
}
