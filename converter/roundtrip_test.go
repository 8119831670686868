package converter

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// gen makes random rules: valid ones mostly, with odd strings and
// numbers, from a seed so that a failure can be replayed.
type gen struct{ r *rand.Rand }

func (g gen) str() string {
	pool := []string{"", "a", "GET:/api/orders/{id}", "default", "other", "app-1,app-2", "é😀\"\\\n\t<&>", "\u2028", " x "}
	if g.r.IntN(4) == 0 {
		b := make([]rune, g.r.IntN(12))
		for i := range b {
			b[i] = rune(g.r.IntN(0x3000))
			if b[i] >= 0xD800 && b[i] < 0xE000 {
				b[i] = 'x'
			}
		}
		return string(b)
	}
	return pool[g.r.IntN(len(pool))]
}

func (g gen) resource() string {
	if s := g.str(); strings.TrimSpace(s) != "" {
		return s
	}
	return "res"
}

func (g gen) float() float64 {
	switch g.r.IntN(5) {
	case 0:
		return 0
	case 1:
		return float64(g.r.IntN(1000))
	case 2:
		return g.r.Float64()
	case 3:
		return g.r.Float64() * 1e12
	}
	return math.Abs(g.r.NormFloat64()) * 1e-7
}

func (g gen) int(n int) int { return g.r.IntN(n) }

func (g gen) flow() flow.Rule {
	r := flow.Rule{Resource: g.resource(), LimitApp: g.str(), Grade: flow.Grade(g.int(2)), Count: g.float(),
		Strategy: flow.Strategy(g.int(3)), RefResource: g.resource(), ControlBehavior: flow.ControlBehavior(g.int(4)),
		WarmUpPeriodSec: 1 + g.int(100), MaxQueueingTimeMs: 1 + g.int(1<<30), ClusterMode: g.int(2) == 0}
	if r.ClusterMode || g.int(2) == 0 {
		r.ClusterConfig = flow.ClusterConfig{FlowID: 1 + g.r.Int64(), ThresholdType: g.int(2), FallbackToLocalWhenFail: g.int(2) == 0,
			SampleCount: 10, WindowIntervalMs: 1000, ResourceTimeout: g.int(5000), ClientOfflineTime: g.int(5000),
			Strategy: g.int(2), ResourceTimeoutStrategy: g.int(2), AcquireRefuseStrategy: g.int(3)}
	}
	return r
}

func (g gen) circuitBreaker() circuitbreaker.Rule {
	grades := []circuitbreaker.Grade{0, 1, 2, 100}
	r := circuitbreaker.Rule{Resource: g.resource(), LimitApp: g.str(), Grade: grades[g.int(4)], Count: g.float(),
		TimeWindow: 1 + g.int(60), MinRequestAmount: 1 + g.int(100), SlowRatioThreshold: g.r.Float64(),
		StatIntervalMs: 1 + g.int(60000), RTSlowRequestAmount: g.int(10)}
	if r.Grade == circuitbreaker.ErrorRatio {
		r.Count = g.r.Float64()
	}
	return r
}

func (g gen) system() system.Rule {
	pick := func(v float64) float64 {
		if g.int(2) == 0 {
			return system.Unset
		}
		return v
	}
	pickInt := func(v int64) int64 {
		if g.int(2) == 0 {
			return system.Unset
		}
		return v
	}
	r := system.Rule{HighestSystemLoad: pick(0.5 + g.float()), HighestCPUUsage: pick(0.01 + 0.99*g.r.Float64()),
		QPS: pick(1 + g.float()), AvgRT: pickInt(1 + g.r.Int64N(1<<40)), MaxThread: pickInt(1 + g.r.Int64N(1000))}
	if r.HighestSystemLoad < 0 && r.HighestCPUUsage < 0 && r.QPS < 0 && r.AvgRT < 0 && r.MaxThread < 0 {
		r.MaxThread = 7
	}
	return r
}

func (g gen) authority() authority.Rule {
	return authority.Rule{Resource: g.resource(), LimitApp: g.resource(), Strategy: authority.Strategy(g.int(2))}
}

func (g gen) hotspot() hotspot.Rule {
	r := hotspot.Rule{Resource: g.resource(), LimitApp: g.str(), Grade: flow.Grade(g.int(2)), ParamIdx: g.int(10) - 5,
		Count: g.float(), ControlBehavior: []flow.ControlBehavior{0, 2}[g.int(2)], MaxQueueingTimeMs: g.int(1000),
		BurstCount: g.int(100), DurationInSec: 1 + g.r.Int64N(1<<40), ClusterMode: g.int(3) == 0}
	items := [][2]string{{"42", "int"}, {"-9000000000", "long"}, {"1.5", "double"}, {"2.5", "java.lang.Float"}, {"true", "boolean"},
		{"x", "char"}, {"vip", "String"}, {"any", ""}, {"12", "java.lang.Short"}, {"-3", "java.lang.Byte"}}
	for range g.int(4) {
		it := items[g.int(len(items))]
		r.ParamFlowItemList = append(r.ParamFlowItemList, hotspot.ParamFlowItem{Object: it[0], Count: g.int(1000), ClassType: it[1]})
	}
	if r.ClusterMode || g.int(2) == 0 {
		r.ClusterConfig = hotspot.ClusterConfig{FlowID: 1 + g.r.Int64N(1<<50), ThresholdType: g.int(2),
			FallbackToLocalWhenFail: g.int(2) == 0, SampleCount: g.int(20), WindowIntervalMs: g.int(5000)}
	}
	return r
}

func genList[T any](g gen, one func() T) []T {
	n := g.int(6)
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = one()
	}
	return out
}

// roundTrip encodes rules and decodes them back: they come back with
// Java's defaults in place of the zero values that stand for them.
func roundTrip[T any](t *testing.T, c Codec[T], v T) {
	t.Helper()
	data, err := c.Encode(v)
	require.NoError(t, err)
	back, err := c.Convert(data)
	require.NoError(t, err, "%s", data)
	require.Equal(t, normalized(v), any(back), "%s", data)
}

// normalized is v with its rules' defaults applied.
func normalized(v any) any {
	switch v := v.(type) {
	case []flow.Rule:
		return flowKind.normalizeAll(v)
	case []circuitbreaker.Rule:
		return cbKind.normalizeAll(v)
	case []system.Rule:
		return sysKind.normalizeAll(v)
	case []authority.Rule:
		return authKind.normalizeAll(v)
	case []hotspot.Rule:
		return hotKind.normalizeAll(v)
	case Rules:
		return normalizeSet(v)
	}
	panic("unknown rules")
}

func TestRoundTrip(t *testing.T) {
	const iterations = 300
	for seed := range uint64(iterations) {
		g := gen{rand.New(rand.NewPCG(seed, 0x62756c7761726b))}
		roundTrip(t, FlowRules(), genList(g, g.flow))
		roundTrip(t, CircuitBreakerRules(), genList(g, g.circuitBreaker))
		roundTrip(t, SystemRules(), genList(g, g.system))
		roundTrip(t, AuthorityRules(), genList(g, g.authority))
		roundTrip(t, HotspotRules(), genList(g, g.hotspot))
		roundTrip(t, RuleSet(), Rules{Flow: genList(g, g.flow), CircuitBreaker: genList(g, g.circuitBreaker),
			System: genList(g, g.system), Authority: genList(g, g.authority), Hotspot: genList(g, g.hotspot)})
	}
}
