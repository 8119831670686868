package codec_test

import (
	"fmt"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/codec"
)

func ExampleInspect() {
	// A DegradeRule as Sentinel 1.4 wrote it: cut and passCount were
	// getters of the rule then; Java ignores them today.
	doc := []byte(`[{"resource": "payment", "grade": 2, "count": 10, "timeWindow": 30, "cut": false, "passCount": 0}]`)
	rules, warnings, err := codec.Inspect(converter.CircuitBreakerRules(), doc)
	fmt.Println(len(rules), err)
	for _, w := range warnings {
		fmt.Printf("%d:%d: %v\n", w.Line, w.Column, w)
	}
	// Output:
	// 1 <nil>
	// 1:76: [0] "payment": cut: ignored: DegradeRule.cut, the breaker state that Sentinel 0.1 to 1.4 wrote; Java ignores it since 1.5
	// 1:96: [0] "payment": passCount: ignored: DegradeRule.passCount, the counter that Sentinel 0.1 to 1.6 wrote; Java ignores it since 1.7
}

func ExampleEncodeOver() {
	// Rules as Sentinel's dashboard saved them, entity fields and nulls
	// included.
	prev := []byte(`[
  {"id":1,"app":"shop","ip":"10.0.0.7","port":8720,"resource":"GET /orders","limitApp":"default","grade":1,"count":100,"refResource":null,"gmtCreate":1700000000000,"gmtModified":1700000000000},
  {"id":2,"app":"shop","ip":"10.0.0.7","port":8720,"resource":"POST /pay","limitApp":"default","grade":1,"count":20,"refResource":null,"gmtCreate":1700000000000,"gmtModified":1700000000000}
]
`)
	c := converter.FlowRules()
	rules, _ := c.Convert(prev)
	rules[1].Count = 25
	out, err := codec.EncodeOver(c, prev, rules)
	fmt.Print(string(out), err)
	// Output:
	// [
	//   {"id":1,"app":"shop","ip":"10.0.0.7","port":8720,"resource":"GET /orders","limitApp":"default","grade":1,"count":100,"refResource":null,"gmtCreate":1700000000000,"gmtModified":1700000000000},
	//   {"id":2,"app":"shop","ip":"10.0.0.7","port":8720,"resource":"POST /pay","limitApp":"default","grade":1,"count":25,"refResource":null,"gmtCreate":1700000000000,"gmtModified":1700000000000}
	// ]
	// <nil>
}

func ExampleEncodeCompact() {
	out, err := codec.EncodeCompact(converter.FlowRules(), []flow.Rule{
		{Resource: "GET /orders", Count: 20},
		{Resource: "POST /orders", Count: 5, ControlBehavior: flow.RateLimiter, MaxQueueingTimeMs: 100},
	})
	fmt.Print(string(out), err)
	// Output:
	// [
	//   {"resource":"GET /orders","count":20},
	//   {"resource":"POST /orders","count":5,"controlBehavior":2,"maxQueueingTimeMs":100}
	// ]
	// <nil>
}
