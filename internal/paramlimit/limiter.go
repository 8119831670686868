// Package paramlimit holds the hot-parameter limiters that enforce
// hotspot rules: Java's ParamFlowChecker, with per-value state in a bounded
// CLOCK cache. The engine (package core) builds one per rule with
// [NewLimiter]. What a limiter does per value is documented in package
// core/hotspot.
package paramlimit

import (
	"math"
	"reflect"
	"time"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/paramvalue"
)

// Capacity bounds: Java's ParameterMetric BASE_PARAM_MAX_CAPACITY and
// TOTAL_MAX_CAPACITY.
const (
	BaseCapacity = 4000
	MaxCapacity  = 200_000
)

// Capacity returns how many distinct values a rule keeps state for:
// min(4000 × DurationInSec, 200,000), Java's capacity. Past it, the value
// least recently used (approximately, see the package documentation) is
// forgotten, and comes back with a full budget.
func Capacity(r hotspot.Rule) int {
	d := max(r.DurationInSec, 1)
	if d >= MaxCapacity/BaseCapacity {
		return MaxCapacity
	}
	return int(d) * BaseCapacity
}

// Decision is a [Limiter]'s answer for one entry.
type Decision struct {
	// Blocked is true when the entry must be rejected.
	Blocked bool
	// Wait is how long a paced entry (RateLimiter) must wait before it
	// runs.
	Wait time.Duration
}

// Limiter enforces one [hotspot.Rule]: Java's ParamFlowChecker for one rule, with
// per-value state in a bounded cache. It is safe for concurrent use; a
// value already seen is checked without locks. Create one with
// [NewLimiter].
//
// Time is passed in as a [mono.Time]: token buckets count in whole
// milliseconds, as Java's do, and pacing in nanoseconds.
type Limiter struct {
	rule     hotspot.Rule
	count    int64 // Java's (long) count
	items    items
	durMs    int64
	maxQueue time.Duration
	cache    *cache
}

// NewLimiter returns the limiter of a valid rule.
func NewLimiter(r hotspot.Rule) *Limiter {
	l := &Limiter{
		rule:     r,
		count:    int64(r.Count),
		durMs:    max(r.DurationInSec, 1) * 1000,
		maxQueue: time.Duration(r.MaxQueueingTimeMs) * time.Millisecond,
		cache:    newCache(Capacity(r)),
	}
	l.items = compileItems(r.ParamFlowItemList)
	return l
}

// Rule returns the limiter's rule.
func (l *Limiter) Rule() hotspot.Rule { return l.rule }

// Len returns the number of values the limiter keeps state for.
func (l *Limiter) Len() int { return l.cache.len() }

// Value returns the argument the rule looks at: args[ParamIdx], counting
// from the end when ParamIdx is negative. ok is false when there is no
// such argument or it is nil.
func (l *Limiter) Value(args []any) (v any, ok bool) {
	i := l.rule.ParamIdx
	if i < 0 {
		i += len(args)
	}
	if i < 0 || i >= len(args) || args[i] == nil {
		return nil, false
	}
	return args[i], true
}

// Threshold returns the threshold of value v: its item's count when an
// item of ParamFlowItemList matches it, else the rule's Count (truncated to
// an integer, as Java does).
func (l *Limiter) Threshold(v any) int64 {
	if c, ok := l.items.lookup(v); ok {
		return c
	}
	return l.count
}

// Check decides whether an entry of acquire tokens with arguments args may
// pass at now. A missing or nil argument passes. A slice or array
// argument is checked element by element, and passes only if every element
// does (Java's Collection and array arguments). A value that cannot be a
// map key (a map, a func, a struct holding one) passes.
//
// GradeThread rules only compare the value's entries in flight with its
// threshold here; the caller reports admitted and completed entries with
// [Limiter.Entered] and [Limiter.Exited].
func (l *Limiter) Check(args []any, now mono.Time, acquire int64) Decision {
	v, ok := l.Value(args)
	if !ok {
		return Decision{}
	}
	var d Decision
	each(v, func(x any) bool {
		r := l.checkOne(x, now, acquire)
		d.Blocked = r.Blocked
		d.Wait = max(d.Wait, r.Wait)
		return !r.Blocked
	})
	return d
}

// Entered records that an entry with args was admitted (GradeThread rules;
// others ignore it).
func (l *Limiter) Entered(args []any) { l.threads(args, 1) }

// Exited records that an entry with args completed (GradeThread rules;
// others ignore it).
func (l *Limiter) Exited(args []any) { l.threads(args, -1) }

func (l *Limiter) threads(args []any, d int64) {
	if l.rule.Grade != flow.GradeThread {
		return
	}
	v, ok := l.Value(args)
	if !ok {
		return
	}
	each(v, func(x any) bool {
		if s := l.cache.get(x); s != nil {
			if d > 0 {
				s.threads.Add(d)
			} else {
				for n := s.threads.Load(); n > 0 && !s.threads.CompareAndSwap(n, n-1); n = s.threads.Load() {
				}
			}
		}
		return true
	})
}

func (l *Limiter) checkOne(v any, now mono.Time, acquire int64) Decision {
	threshold := l.Threshold(v)
	if l.rule.Grade == flow.GradeThread {
		s := l.cache.getOrCreate(v, func(*valueState) {})
		return Decision{Blocked: s.threads.Load()+1 > threshold}
	}
	if threshold == 0 {
		return Decision{Blocked: true}
	}
	if l.rule.ControlBehavior == flow.RateLimiter {
		return l.pace(v, threshold, now, acquire)
	}
	return Decision{Blocked: !l.take(v, threshold, now.Millis(), acquire)}
}

// take is Java's passDefaultLocalCheck: a bucket of threshold + BurstCount
// tokens per value, refilled in proportion to the time passed, but only once
// a whole DurationInSec has passed since the last refill.
func (l *Limiter) take(v any, threshold, nowMs, acquire int64) bool {
	maxCount := threshold + int64(l.rule.BurstCount)
	if acquire > maxCount {
		return false
	}
	s := l.cache.getOrCreate(v, func(s *valueState) {
		s.last.Store(nowMs)
		s.tokens.Store(maxCount)
	})
	for {
		last := s.last.Load()
		rest := s.tokens.Load()
		passed := nowMs - last
		if passed > l.durMs {
			add := passed * threshold / l.durMs
			next := rest + add - acquire
			if add+rest > maxCount {
				next = maxCount - acquire
			}
			if next < 0 {
				return false
			}
			if s.tokens.CompareAndSwap(rest, next) {
				s.last.Store(nowMs)
				return true
			}
			continue
		}
		if rest < acquire {
			return false
		}
		if s.tokens.CompareAndSwap(rest, rest-acquire) {
			return true
		}
	}
}

// pace spaces a value's entries evenly: each takes
// acquire × DurationInSec / threshold seconds of the value's timeline, and
// an entry waits for its turn unless that is more than MaxQueueingTimeMs
// away. (Java's passThrottleLocalCheck records the current time instead of
// the entry's turn and never waits, so queued entries run at once, in a
// burst; here they are paced.)
func (l *Limiter) pace(v any, threshold int64, now mono.Time, acquire int64) Decision {
	cost := time.Duration(math.Round(float64(acquire) * float64(l.durMs) * float64(time.Millisecond) / float64(threshold)))
	s := l.cache.getOrCreate(v, func(s *valueState) { s.last.Store(int64(now.Add(-cost))) })
	for {
		last := mono.Time(s.last.Load())
		expected := last.Add(cost)
		if expected <= now {
			if s.last.CompareAndSwap(int64(last), int64(now)) {
				return Decision{}
			}
			continue
		}
		wait := expected.Sub(now)
		if wait > l.maxQueue {
			return Decision{Blocked: true}
		}
		if s.last.CompareAndSwap(int64(last), int64(expected)) {
			return Decision{Wait: wait}
		}
	}
}

// each calls fn with v, or with each element of a slice or array v, until
// fn returns false. Values that cannot be map keys (and nil elements) are
// skipped. The common cases take no reflection: a scalar argument, and
// slices of any, string, int and int64.
func each(v any, fn func(any) bool) {
	switch x := v.(type) {
	case string, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8, float64, float32, bool:
		fn(v)
	case []any:
		eachAny(x, fn)
	case []string:
		eachOf(x, fn)
	case []int:
		eachOf(x, fn)
	case []int64:
		eachOf(x, fn)
	default:
		eachReflect(v, fn)
	}
}

// eachOf calls fn with each element of xs until fn returns false.
func eachOf[T comparable](xs []T, fn func(any) bool) {
	for _, x := range xs {
		if !fn(x) {
			return
		}
	}
}

// eachAny calls fn with each non-nil element of xs that can be a map key,
// until fn returns false.
func eachAny(xs []any, fn func(any) bool) {
	for _, x := range xs {
		if x != nil && !ifKey(x, fn) {
			return
		}
	}
}

// eachReflect is each for the types the type switch does not name: any
// other slice or array is walked by reflection (skipping nil interface
// elements), and any other value is a single value.
func eachReflect(v any, fn func(any) bool) {
	rv := reflect.ValueOf(v)
	if k := rv.Kind(); k != reflect.Slice && k != reflect.Array {
		ifKey(v, fn)
		return
	}
	for i := range rv.Len() {
		e := rv.Index(i)
		if !e.CanInterface() || (e.Kind() == reflect.Interface && e.IsNil()) {
			continue
		}
		if !ifKey(e.Interface(), fn) {
			return
		}
	}
}

// ifKey calls fn with v when v can be a map key and returns its answer;
// it returns true (go on) for a value it skips.
func ifKey(v any, fn func(any) bool) bool {
	if !reflect.ValueOf(v).Comparable() {
		return true
	}
	return fn(v)
}

// items holds a rule's per-value thresholds by Go value class.
type items struct {
	n      int
	ints   map[int64]int64
	floats map[float64]int64
	bools  map[bool]int64
	chars  map[rune]int64
	strs   map[string]int64
}

func compileItems(list []hotspot.ParamFlowItem) items {
	it := items{
		ints: map[int64]int64{}, floats: map[float64]int64{}, bools: map[bool]int64{},
		chars: map[rune]int64{}, strs: map[string]int64{},
	}
	for _, i := range list {
		v, err := paramvalue.Parse(i.Object, i.ClassType)
		if err != nil {
			continue // Validate rejects the rule
		}
		c := int64(i.Count)
		switch x := v.(type) {
		case int64:
			it.ints[x] = c
		case float64:
			it.floats[x] = c
		case bool:
			it.bools[x] = c
		case rune:
			it.chars[x] = c
		case string:
			it.strs[x] = c
		}
		it.n++
	}
	return it
}

// lookup returns the threshold of the item matching v. Go integers of any
// width and signedness match the integer class types (int, long, short,
// byte) by value; a rune (int32) also matches a char item; floats match
// double and float items; bools boolean; strings String.
func (it *items) lookup(v any) (int64, bool) {
	if it.n == 0 {
		return 0, false
	}
	var c int64
	var ok bool
	switch x := v.(type) {
	case string:
		c, ok = it.strs[x]
	case int:
		c, ok = it.ints[int64(x)]
	case int64:
		c, ok = it.ints[x]
	case int32:
		if c, ok = it.ints[int64(x)]; !ok {
			c, ok = it.chars[x]
		}
	case int16:
		c, ok = it.ints[int64(x)]
	case int8:
		c, ok = it.ints[int64(x)]
	case uint:
		if uint64(x) <= math.MaxInt64 {
			c, ok = it.ints[int64(x)]
		}
	case uint64:
		if x <= math.MaxInt64 {
			c, ok = it.ints[int64(x)]
		}
	case uint32:
		c, ok = it.ints[int64(x)]
	case uint16:
		c, ok = it.ints[int64(x)]
	case uint8:
		c, ok = it.ints[int64(x)]
	case float64:
		c, ok = it.floats[x]
	case float32:
		c, ok = it.floats[float64(x)]
	case bool:
		c, ok = it.bools[x]
	}
	return c, ok
}
