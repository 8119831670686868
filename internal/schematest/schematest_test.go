package schematest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJSONName(t *testing.T) {
	for goName, want := range map[string]string{
		"Resource": "resource", "LimitApp": "limitApp", "HighestCPUUsage": "highestCpuUsage", "QPS": "qps",
		"AvgRT": "avgRt", "RTSlowRequestAmount": "rtSlowRequestAmount", "FlowID": "flowId",
		"WarmUpPeriodSec": "warmUpPeriodSec", "ParamFlowItemList": "paramFlowItemList", "ID": "id",
	} {
		assert.Equal(t, want, JSONName(goName), goName)
	}
}

type level int

func (l level) String() string {
	switch l {
	case 0:
		return "low"
	case 3:
		return "high"
	case 5:
		return "top"
	}
	return fmt.Sprintf("level(%d)", int(l))
}

type item struct {
	Name  string
	Count int
}

type sample struct {
	Name   string
	On     bool
	Level  level
	N      int64
	Ratio  float64
	Nested struct{ ID int }
	Items  []item
}

func TestFillLeavesChange(t *testing.T) {
	var a sample
	Fill(&a)
	assert.Equal(t, "s1", a.Name)
	assert.True(t, a.On)
	assert.Contains(t, []level{3, 5}, a.Level, "a named value other than zero")
	assert.Len(t, a.Items, 1)
	assert.NotZero(t, a.Items[0].Count)

	var got []string
	for _, l := range Leaves[sample]() {
		got = append(got, l.Go+" "+l.JSON)
		b := a
		b.Items = []item{a.Items[0]}
		Change(&b, l)
		assert.NotEqual(t, a, b, l.Go)
	}
	assert.Equal(t, []string{"Name name", "On on", "Level level", "N n", "Ratio ratio", "Nested.ID nested.id",
		"Items[0].Name items[0].name", "Items[0].Count items[0].count"}, got)

	assert.Panics(t, func() { Fill(&struct{ M map[string]int }{}) })
}
