//go:build race

package integration

// nacosRaceEnabled: the test binary runs under the race detector.
const nacosRaceEnabled = true
