package sentinelcmp

import (
	"fmt"
	"testing"

	"github.com/alibaba/sentinel-golang/core/flow"
	"github.com/alibaba/sentinel-golang/logging"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	bflow "github.com/bulwark-go/bulwark/core/flow"
)

const nRules = 10_000

func sentinelRules(threshold float64) []*flow.Rule {
	rs := make([]*flow.Rule, nRules)
	for i := range rs {
		rs[i] = &flow.Rule{
			Resource:               fmt.Sprintf("res-%d", i),
			TokenCalculateStrategy: flow.Direct,
			ControlBehavior:        flow.Reject,
			Threshold:              threshold,
			StatIntervalInMs:       1000,
		}
	}
	return rs
}

func bulwarkRules(count float64) []bflow.Rule {
	rs := make([]bflow.Rule, nRules)
	for i := range rs {
		rs[i] = bflow.Rule{Resource: fmt.Sprintf("res-%d", i), Grade: bflow.GradeQPS, Count: count}
	}
	return rs
}

// alternate loads a, then b, a, b, … : every load changes every rule. The
// first load of a (new resources) is outside the timer.
func alternate[L any](b *testing.B, load func(L) error, a, c L) {
	if err := load(a); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		next := a
		if i%2 == 1 {
			next = c
		}
		if err := load(next); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad10kChanged(b *testing.B) {
	b.Run("impl=sentinel", func(b *testing.B) {
		logging.ResetGlobalLoggerLevel(logging.WarnLevel)
		load := func(rs []*flow.Rule) error {
			changed, err := flow.LoadRules(rs)
			if err == nil && !changed {
				err = fmt.Errorf("sentinel: rules unchanged")
			}
			return err
		}
		alternate(b, load, sentinelRules(10), sentinelRules(20))
		if _, err := flow.LoadRules(nil); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("impl=bulwark", func(b *testing.B) {
		e := core.NewEngine()
		defer e.Close()
		alternate(b, e.Flow().Load, bulwarkRules(10), bulwarkRules(20))
	})
}

func BenchmarkDocument10k(b *testing.B) {
	codec := converter.FlowRules()
	a, err := codec.Encode(bulwarkRules(10))
	if err != nil {
		b.Fatal(err)
	}
	c, err := codec.Encode(bulwarkRules(20))
	if err != nil {
		b.Fatal(err)
	}
	e := core.NewEngine()
	defer e.Close()
	load := func(doc []byte) error {
		rs, err := codec.Convert(doc)
		if err != nil {
			return err
		}
		return e.Flow().Load(rs)
	}
	alternate(b, load, a, c)
	b.ReportMetric(float64(len(a)), "doc-bytes")
}
