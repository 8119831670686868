//go:build tools

// Package polaris pins the PolarisMesh server, a Go implementation of the
// Nacos config protocol, so the integration tests can build and run it.
// Build it with .ci/polaris.sh.
package polaris

import (
	_ "github.com/polarismesh/polaris"
)
