//go:build tools

// Package consul pins the Consul server (v1.14.11, the last MPL-2.0 line
// whose module the Go proxy serves complete), so the integration tests can
// build and run it. Build it with .ci/consul.sh.
package consul

import (
	_ "github.com/hashicorp/consul"
)
