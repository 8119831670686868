package etcd_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine started by the tests (Readables, watches, clients,
// proxies, embedded servers) has ended when the package's tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
