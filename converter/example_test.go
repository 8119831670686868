package converter_test

import (
	"errors"
	"fmt"

	"github.com/bulwark-go/bulwark/converter"
)

func ExampleFlowRules() {
	doc := []byte(`[
		{"resource": "GET:/orders", "count": 20},
		{"resource": "POST:/orders", "grade": "QPS", "count": 5, "controlBehavior": "warmUp", "warmUpPeriodSec": 30}
	]`)
	rules, err := converter.FlowRules().Convert(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rules {
		fmt.Printf("%s: %s %g, %s, limitApp %s\n", r.Resource, r.Grade, r.Count, r.ControlBehavior, r.LimitApp)
	}
	// Output:
	// GET:/orders: QPS 20, reject, limitApp default
	// POST:/orders: QPS 5, warmUp, limitApp default
}

func ExampleDecodeError() {
	doc := []byte(`[
		{"resource": "a", "count": 10},
		{"resource": "b", "count": -1, "controlBehavior": "fast"},
		{"resource": "c", "cuont": 3}
	]`)
	_, err := converter.FlowRules().Convert(doc)
	var de *converter.DecodeError
	if errors.As(err, &de) {
		for _, p := range de.Problems {
			fmt.Println(p)
		}
	}
	fmt.Println(errors.Is(err, converter.ErrInvalid), errors.Is(err, converter.ErrSyntax))
	// Output:
	// [1] "b": controlBehavior: unknown name "fast": expected 0 (reject), 1 (warmUp), 2 (rateLimiter) or 3 (warmUpRateLimiter)
	// [1] "b": count: must be >= 0
	// [2] "c": cuont: unknown field (did you mean "count"?)
	// true true
}

func ExampleRuleSet() {
	doc := []byte(`{
		"flow":      [{"resource": "checkout", "count": 100}],
		"degrade":   [{"resource": "payment", "grade": "errorRatio", "count": 0.5, "timeWindow": 10}],
		"authority": [{"resource": "admin", "limitApp": "ops-console", "strategy": "white"}]
	}`)
	rs, err := converter.RuleSet().Convert(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rs.Flow), len(rs.CircuitBreaker), len(rs.System), len(rs.Authority), len(rs.Hotspot))
	fmt.Println(rs.CircuitBreaker[0].Grade, rs.CircuitBreaker[0].MinRequestAmount, rs.CircuitBreaker[0].StatIntervalMs)
	// Output:
	// 1 1 0 1 0
	// errorRatio 5 1000
}

func ExampleCodec_Encode() {
	codec := converter.SystemRules()
	rules, _ := codec.Convert([]byte(`[{"highestCpuUsage": 0.8}]`))
	out, _ := codec.Encode(rules)
	fmt.Print(string(out))
	// Output:
	// [
	//   {"highestSystemLoad":-1,"highestCpuUsage":0.8,"qps":-1,"avgRt":-1,"maxThread":-1}
	// ]
}

func ExampleFlowRules_comments() {
	doc := []byte("\ufeff/*\n * Copyright 2024 ACME Corp. Licensed under the Apache License, Version 2.0.\n */\n" +
		"[\n  // checkout is fragile\n  {\"resource\": \"POST /checkout\", \"count\": 5}\n]\n")
	rules, err := converter.FlowRules().Convert(doc)
	fmt.Println(len(rules), rules[0].Resource, err)
	// Output:
	// 1 POST /checkout <nil>
}

func ExampleDecodeError_partial() {
	doc := []byte(`[
		{"resource": "GET /orders", "count": 20},
		{"count": -1, "resource": "POST /orders"},
		{"resource": "GET /items", "count": 5}
	]`)
	rules, err := converter.FlowRules().Convert(doc)
	var de *converter.DecodeError
	if errors.As(err, &de) && de.Partial {
		// A lenient consumer may apply the rules without a problem.
		for _, p := range de.Problems {
			fmt.Printf("refused rule %d: %v\n", p.Rule, p)
		}
		for _, r := range rules {
			fmt.Println("kept", r.Resource)
		}
	}
	// Output:
	// refused rule 1: [1] "POST /orders": count: must be >= 0
	// kept GET /orders
	// kept GET /items
}
