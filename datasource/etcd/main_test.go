package etcd_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine started by the tests (Readables, watches, clients,
// proxies, embedded servers) has ended when the package's tests end. In
// docker mode the Docker client that testcontainers keeps for the process
// holds idle HTTP connections: those are not ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	)
}
