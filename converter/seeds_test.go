package converter

import "testing"

// TestSeedsDecode keeps the fuzz seeds honest: all but the deliberately
// broken one are valid documents.
func TestSeedsDecode(t *testing.T) {
	check := func(name string, conv func([]byte) error, seeds []string, broken int) {
		for i, s := range seeds {
			if err := conv([]byte(s)); (err != nil) != (i == broken) {
				t.Errorf("%s seed %d: %v", name, i, err)
			}
		}
	}
	check("flow", func(b []byte) error { _, err := FlowRules().Convert(b); return err }, flowSeeds, len(flowSeeds)-1)
	check("degrade", func(b []byte) error { _, err := CircuitBreakerRules().Convert(b); return err }, degradeSeeds, -1)
	check("system", func(b []byte) error { _, err := SystemRules().Convert(b); return err }, systemSeeds, -1)
	check("authority", func(b []byte) error { _, err := AuthorityRules().Convert(b); return err }, authoritySeeds, -1)
	check("paramFlow", func(b []byte) error { _, err := HotspotRules().Convert(b); return err }, paramFlowSeeds, -1)
}
