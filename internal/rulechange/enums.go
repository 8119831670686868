package rulechange

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
)

// enumNames name the values of each kind's enum fields, by Java's number:
// the rule types' String methods, whose names documents also take
// ("grade": "QPS").
var enumNames = map[string]map[string]func(int) fmt.Stringer{
	"flow": {
		"grade":           func(n int) fmt.Stringer { return javaGrade(n, flow.GradeThread, flow.GradeQPS) },
		"strategy":        func(n int) fmt.Stringer { return flow.Strategy(n) },
		"controlBehavior": func(n int) fmt.Stringer { return flow.ControlBehavior(n) },
	},
	"degrade": {
		"grade": func(n int) fmt.Stringer { return circuitbreaker.Grade(n) },
	},
	"paramFlow": {
		"grade":           func(n int) fmt.Stringer { return javaGrade(n, flow.GradeThread, flow.GradeQPS) },
		"controlBehavior": func(n int) fmt.Stringer { return flow.ControlBehavior(n) },
	},
	"authority": {
		"strategy": func(n int) fmt.Stringer { return authority.Strategy(n) },
	},
}

// javaGrade is the grade of Java's number n (0 thread, 1 QPS: not the Go
// values), nil for another number.
func javaGrade[G fmt.Stringer](n int, thread, qps G) fmt.Stringer {
	switch n {
	case 0:
		return thread
	case 1:
		return qps
	}
	return nil
}

// show is a field's value for a person: an enum's name (grade QPS), else
// the JSON value (a number no name stands for, too).
func (k *Kind) show(field string, v json.RawMessage) string {
	c := string(compact(v))
	if k == nil || enumNames[k.name][field] == nil {
		return c
	}
	n, err := strconv.Atoi(c)
	if err != nil {
		return c
	}
	s := enumNames[k.name][field](n)
	if s == nil || strings.HasSuffix(s.String(), ")") { // Grade(7): no name
		return c
	}
	return s.String()
}
