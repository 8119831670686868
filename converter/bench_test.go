package converter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulwark-go/bulwark/core/flow"
)

// flowDoc is a document of n flow rules in the shape Sentinel's dashboard
// writes (entity fields included).
func flowDoc(n int) []byte {
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id":%d,"app":"order-service","ip":"10.0.0.7","port":8719,"resource":"GET:/api/orders/%d","limitApp":"default","grade":1,"count":%d.0,"strategy":0,"refResource":null,"controlBehavior":%d,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false,"clusterConfig":null,"gmtCreate":1700000000000,"gmtModified":1700000000000}`,
			i, i, 10+i%1000, i%4)
	}
	b.WriteString("\n]\n")
	return []byte(b.String())
}

// BenchmarkDecodeFlow10kDashboard decodes 10,000 rules as the dashboard
// writes them (entity fields too: 70% more bytes).
func BenchmarkDecodeFlow10kDashboard(b *testing.B) {
	doc := flowDoc(10000)
	c := FlowRules()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		rules, err := c.Convert(doc)
		if err != nil || len(rules) != 10000 {
			b.Fatal(len(rules), err)
		}
	}
}

func BenchmarkEncodeFlow10k(b *testing.B) {
	c := FlowRules()
	rules, err := c.Convert(flowDoc(10000))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Encode(rules); err != nil {
			b.Fatal(err)
		}
	}
}

// plainFlowDoc is a document of n flow rules as a Java program writes it
// (every FlowRule field, no dashboard entity fields).
func plainFlowDoc(n int) []byte {
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"resource":"GET:/api/orders/%d","limitApp":"default","grade":1,"count":%d,"strategy":0,"refResource":null,"controlBehavior":%d,"warmUpPeriodSec":10,"maxQueueingTimeMs":500,"clusterMode":false}`,
			i, 10+i%1000, i%4)
	}
	b.WriteString("\n]\n")
	return []byte(b.String())
}

// BenchmarkDecodeFlow10k decodes 10,000 rules as a Java program writes them.
func BenchmarkDecodeFlow10k(b *testing.B) {
	doc := plainFlowDoc(10000)
	c := FlowRules()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		rules, err := c.Convert(doc)
		if err != nil || len(rules) != 10000 {
			b.Fatal(len(rules), err)
		}
	}
}

// BenchmarkDecodeHotspot10k decodes 10,000 param-flow rules with three
// items each.
func BenchmarkDecodeHotspot10k(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 10000 {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, `{"resource":"getUser%d","paramIdx":0,"grade":1,"count":5,"durationInSec":1,"paramFlowItemList":[{"object":"%d","count":100,"classType":"int"},{"object":"vip","count":50,"classType":"String"},{"object":"1.5","count":1,"classType":"double"}]}`, i, i)
	}
	sb.WriteString("]")
	doc := []byte(sb.String())
	c := HotspotRules()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		rules, err := c.Convert(doc)
		if err != nil || len(rules) != 10000 {
			b.Fatal(len(rules), err)
		}
	}
}

// BenchmarkEncodeOverFlow10k writes 10,000 dashboard rules, one of them
// changed, over their document.
func BenchmarkEncodeOverFlow10k(b *testing.B) {
	doc := flowDoc(10000)
	c := FlowRules().(canEncodeOver[[]flow.Rule])
	rules, err := FlowRules().Convert(doc)
	if err != nil {
		b.Fatal(err)
	}
	rules[5000].Count++
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.EncodeOver(doc, rules); err != nil {
			b.Fatal(err)
		}
	}
}
