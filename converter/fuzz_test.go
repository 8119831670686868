package converter

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

// overEncoder is what encodeOver of every codec here looks like: it also
// tells whether it fell back to Encode although prev decoded.
type overEncoder[T any] interface {
	encodeOver(prev []byte, v T) ([]byte, bool, error)
}

// fuzzCodec checks a codec on arbitrary bytes: Inspect never panics,
// fails only with this package's errors, and every document it accepts
// (or the partial value of a document whose problems are all inside
// rules) encodes and decodes back to equal rules. EncodeOver of the
// document with its own value, or with mutate's change of it, decodes to
// that value without falling back to Encode; its own value gives the
// rules of the document back as they were.
func fuzzCodec[T any](f *testing.F, c Codec[T], mutate func(T) T, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
		f.Add([]byte("\xef\xbb\xbf/* header */\n" + s + " // end"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, warnings, err := c.(canInspect[T]).Inspect(data)
		for _, w := range warnings {
			if !errors.Is(w, errIgnored) || w.Line < 1 || w.Column < 1 || w.Path == "" {
				t.Fatalf("bad warning: %+v", w)
			}
		}
		if err != nil {
			var de *DecodeError
			switch {
			case !errors.As(err, &de) || len(de.Problems) == 0:
				t.Fatalf("error is not a *DecodeError with problems: %v", err)
			case !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrInvalid):
				t.Fatalf("error is neither ErrSyntax nor ErrInvalid: %v", err)
			}
			_ = err.Error()
			if de == nil || !de.Partial {
				if !reflect.ValueOf(&v).Elem().IsZero() {
					t.Fatalf("a value with an error that is not partial: %+v", v)
				}
				return
			}
			for _, p := range de.Problems {
				if p.Rule < 0 {
					t.Fatalf("partial with a problem outside the rules: %+v", p)
				}
			}
		}
		out, err := c.Encode(v)
		if err != nil {
			t.Fatalf("accepted rules do not encode: %v\ninput: %q", err, data)
		}
		back, err := c.Convert(out)
		if err != nil {
			t.Fatalf("encoded document does not decode: %v\nencoded: %s", err, out)
		}
		if !reflect.DeepEqual(v, back) {
			t.Fatalf("round trip changed the rules\nfirst:  %+v\nsecond: %+v\nencoded: %s", v, back, out)
		}
		compact, err := c.(canEncodeCompact[T]).EncodeCompact(v)
		if err != nil {
			t.Fatalf("accepted rules do not encode compactly: %v\ninput: %q", err, data)
		}
		if back, err = c.Convert(compact); err != nil || !reflect.DeepEqual(v, back) {
			t.Fatalf("compact round trip changed the rules (%v)\nfirst:  %+v\nsecond: %+v\nencoded: %s", err, v, back, compact)
		}
		for i, w := range []T{v, mutate(v)} {
			over, fellBack, err := c.(overEncoder[T]).encodeOver(data, w)
			if err != nil {
				if _, encErr := c.Encode(w); encErr != nil {
					continue // an invalid mutation
				}
				t.Fatalf("EncodeOver: %v\nprev: %q", err, data)
			}
			if fellBack {
				t.Fatalf("EncodeOver fell back to Encode (value %d)\nprev: %q\nvalue: %+v", i, data, w)
			}
			back, err := c.Convert(over)
			if err != nil || !reflect.DeepEqual(w, back) {
				t.Fatalf("EncodeOver does not decode to the value (%d): %v\nprev: %q\nwritten: %q\nwant: %+v\ngot:  %+v", i, err, data, over, w, back)
			}
		}
	})
}

// Seeds: documents in the shape of Sentinel's rule JSON, written from the
// field lists of Java's rule classes, and of its dashboard's entities.

var flowSeeds = []string{
	`[]`, `null`,
	`[{"resource":"GET:/hello","limitApp":"default","grade":1,"count":20,"strategy":0,"controlBehavior":0}]`,
	`[{"resource":"writeDb","grade":1,"count":5,"strategy":1,"refResource":"readDb"},
	  {"resource":"order","grade":0,"count":8,"strategy":2,"refResource":"entrance_a"},
	  {"resource":"warm","count":100,"controlBehavior":1,"warmUpPeriodSec":30},
	  {"resource":"pace","count":10,"controlBehavior":2,"maxQueueingTimeMs":2000},
	  {"resource":"both","count":10,"controlBehavior":"warmUpRateLimiter","warmUpPeriodSec":5,"maxQueueingTimeMs":100}]`,
	`[{"resource":"c","count":1000,"clusterMode":true,"clusterConfig":{"flowId":101,"thresholdType":1,"fallbackToLocalWhenFail":true,"sampleCount":10,"windowIntervalMs":1000}}]`,
	`[{"id":1,"app":"demo","ip":"192.168.0.2","port":8720,"limitApp":"default","resource":"/api","grade":1,"count":3.0,"strategy":0,"refResource":null,"controlBehavior":0,"warmUpPeriodSec":null,"maxQueueingTimeMs":null,"clusterMode":false,"clusterConfig":{"flowId":null,"thresholdType":0,"fallbackToLocalWhenFail":true,"strategy":0,"sampleCount":10,"windowIntervalMs":1000,"resourceTimeout":2000,"resourceTimeoutStrategy":0,"acquireRefuseStrategy":0,"clientOfflineTime":2000},"gmtCreate":1529918562796,"gmtModified":1529918562796}]`,
	"/* license */\n[ // a\n {\"resource\":\"a\" /* r */, \"count\": 1}, // b\n {\"resource\":\"b\",\"count\":2}\n]",
	`[{"resource":"a\u00e9\"","count":-1,"grade":"fast","x":[1,{"y":null}]}]`,
}

var degradeSeeds = []string{
	`[]`,
	`[{"resource":"slow","grade":0,"count":200,"slowRatioThreshold":0.2,"timeWindow":10,"minRequestAmount":5,"statIntervalMs":1000}]`,
	`[{"resource":"err","grade":1,"count":0.5,"timeWindow":30,"minRequestAmount":10,"statIntervalMs":60000},
	  {"resource":"errc","grade":2,"count":100,"timeWindow":60}]`,
	`[{"resource":"legacy","grade":"avgRt","count":50,"timeWindow":5,"rtSlowRequestAmount":5}]`,
	`[{"resource":"old","grade":0,"count":50,"timeWindow":5,"cut":false,"passCount":0}, {"resource":"b","count":1,"timeWindow":1,"passCount":{}}]`,
	`[{"id":7,"app":"demo","ip":"10.0.0.1","port":8719,"resource":"x","limitApp":"default","count":1.0,"timeWindow":10,"grade":2,"minRequestAmount":5,"slowRatioThreshold":1.0,"statIntervalMs":1000,"gmtCreate":1,"gmtModified":2}]`,
}

var systemSeeds = []string{
	`[]`,
	`[{"highestSystemLoad":8.0,"highestCpuUsage":-1,"qps":-1,"avgRt":-1,"maxThread":-1}]`,
	`[{"highestCpuUsage":0.8},{"qps":2000},{"avgRt":20},{"maxThread":200}]`,
	`[{"id":3,"app":"demo","ip":"1.1.1.1","port":8719,"resource":null,"limitApp":null,"highestSystemLoad":-1.0,"avgRt":-1,"maxThread":-1,"qps":1000.0,"highestCpuUsage":-1.0,"gmtCreate":null,"gmtModified":null}]`,
}

var authoritySeeds = []string{
	`[]`,
	`[{"resource":"getOrder","limitApp":"appA,appB","strategy":0}]`,
	`[{"resource":"admin","limitApp":"crawler","strategy":1}]`,
	`[{"id":4,"app":"demo","ip":"10.1.1.1","port":8719,"rule":{"resource":"r","limitApp":"a","strategy":1},"gmtCreate":1,"gmtModified":1}]`,
}

var paramFlowSeeds = []string{
	`[]`,
	`[{"resource":"getUser","paramIdx":0,"grade":1,"count":5,"durationInSec":1,"burstCount":0,"controlBehavior":0}]`,
	`[{"resource":"getItem","paramIdx":1,"count":10,"controlBehavior":2,"maxQueueingTimeMs":500,
	  "paramFlowItemList":[{"object":"1001","count":100,"classType":"long"},{"object":"vip","count":50,"classType":"java.lang.String"},
	    {"object":"1.5","count":1,"classType":"double"},{"object":"c","count":2,"classType":"char"},{"object":"true","count":3,"classType":"boolean"}]}]`,
	`[{"id":5,"app":"demo","ip":"10.0.0.9","port":8719,"gmtCreate":1,"gmtModified":1,
	  "rule":{"resource":"hot","limitApp":"default","grade":1,"paramIdx":0,"count":3,"controlBehavior":0,"maxQueueingTimeMs":0,"burstCount":0,"durationInSec":1,
	    "paramFlowItemList":[{"object":"7","count":9,"classType":"int"}],"parsedHotItems":{"7":9},"clusterMode":false,
	    "clusterConfig":{"flowId":null,"thresholdType":0,"fallbackToLocalWhenFail":false,"sampleCount":10,"windowIntervalMs":1000}},
	  "resource":"hot","paramIdx":0,"count":3,"grade":1,"limitApp":"default","clusterMode":false}]`,
}

// Mutations for EncodeOver: change the first rule, drop the second,
// add one.

func mutateList[T any](v []T, change func(*T), add T) []T {
	w := slices.Clone(v)
	if len(w) > 0 {
		change(&w[0])
	}
	if len(w) > 2 {
		w = slices.Delete(w, 1, 2)
	}
	return append(w, add)
}

func mutateFlow(v []flow.Rule) []flow.Rule {
	return mutateList(v, func(r *flow.Rule) { r.Count++ },
		flow.Rule{Resource: "new", LimitApp: "default", Grade: flow.GradeQPS, Count: 1, WarmUpPeriodSec: 10, MaxQueueingTimeMs: 500})
}

func mutateCircuitBreaker(v []circuitbreaker.Rule) []circuitbreaker.Rule {
	return mutateList(v, func(r *circuitbreaker.Rule) {
		if r.TimeWindow > 1 {
			r.TimeWindow--
		} else {
			r.TimeWindow++
		}
	}, circuitbreaker.Rule{Resource: "new", LimitApp: "default", Grade: circuitbreaker.ErrorCount, Count: 3, TimeWindow: 10,
		MinRequestAmount: 5, StatIntervalMs: 1000, SlowRatioThreshold: 1, RTSlowRequestAmount: 5})
}

func mutateSystem(v []system.Rule) []system.Rule {
	return mutateList(v, func(r *system.Rule) { r.MaxThread = 7 + r.MaxThread%2 },
		system.Rule{HighestSystemLoad: -1, HighestCPUUsage: 0.5, QPS: -1, AvgRT: -1, MaxThread: -1})
}

func mutateAuthority(v []authority.Rule) []authority.Rule {
	return mutateList(v, func(r *authority.Rule) { r.Strategy = 1 - r.Strategy },
		authority.Rule{Resource: "new", LimitApp: "a,b", Strategy: authority.Black})
}

func mutateHotspot(v []hotspot.Rule) []hotspot.Rule {
	return mutateList(v, func(r *hotspot.Rule) { r.Count++ },
		hotspot.Rule{Resource: "new", LimitApp: "default", Grade: flow.GradeQPS, ParamIdx: 1, Count: 3, DurationInSec: 1,
			ParamFlowItemList: []hotspot.ParamFlowItem{{Object: "7", Count: 1, ClassType: "int"}}})
}

func mutateRuleSet(rs Rules) Rules {
	return Rules{Flow: mutateFlow(rs.Flow), CircuitBreaker: mutateCircuitBreaker(rs.CircuitBreaker),
		System: mutateSystem(rs.System), Authority: mutateAuthority(rs.Authority), Hotspot: mutateHotspot(rs.Hotspot)}
}

func FuzzFlowRules(f *testing.F) { fuzzCodec(f, FlowRules(), mutateFlow, flowSeeds...) }
func FuzzCircuitBreakerRules(f *testing.F) {
	fuzzCodec(f, CircuitBreakerRules(), mutateCircuitBreaker, degradeSeeds...)
}
func FuzzSystemRules(f *testing.F) { fuzzCodec(f, SystemRules(), mutateSystem, systemSeeds...) }
func FuzzAuthorityRules(f *testing.F) {
	fuzzCodec(f, AuthorityRules(), mutateAuthority, authoritySeeds...)
}
func FuzzHotspotRules(f *testing.F) { fuzzCodec(f, HotspotRules(), mutateHotspot, paramFlowSeeds...) }

func FuzzRuleSet(f *testing.F) {
	seeds := []string{`{}`, `null`, `{"flow":null,"degrade":[],"system":[],"authority":[],"paramFlow":[]}`}
	for i := range 4 {
		seeds = append(seeds, `{"flow":`+flowSeeds[min(i+2, len(flowSeeds)-1)]+`,"degrade":`+degradeSeeds[i+1]+
			`,"system":`+systemSeeds[i]+`,"authority":`+authoritySeeds[i]+`,"paramFlow":`+paramFlowSeeds[i]+`}`)
	}
	fuzzCodec(f, RuleSet(), mutateRuleSet, seeds...)
}
