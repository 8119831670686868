package flowcontrol

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// Decision is a controller's answer for one entry.
type Decision struct {
	// Blocked is true when the entry must be rejected.
	Blocked bool
	// Wait is how long the entry must wait before it runs (pacing, or a
	// prioritized entry that occupied the next window).
	Wait time.Duration
	// Occupied is true when the entry was admitted into a future window:
	// its pass is already counted there, so the caller must not count it
	// again now (Sentinel's PriorityWaitException).
	Occupied bool
}

// Controller decides whether entries may pass a rule: Sentinel's
// TrafficShapingController. now is the engine's time; node holds the
// statistics the rule is checked against; p is the entry's stat.Proc.
// Controllers keep state (warm-up tokens, the pacing timeline) and are safe
// for concurrent use without locks.
type Controller interface {
	Check(node *stat.Node, now mono.Time, acquire int64, prioritized bool, p stat.Proc) Decision
}

// Config holds the engine-wide settings controllers need.
type Config struct {
	// ColdFactor is the warm-up cold factor: the allowed rate starts at
	// Count/ColdFactor. Values below 2 mean Sentinel's default, 3.
	ColdFactor int
	// OccupyTimeout bounds how far ahead a prioritized entry may occupy a
	// future window. Zero means Sentinel's default, 500 ms.
	OccupyTimeout time.Duration
}

// Defaults of Config.
const (
	DefaultColdFactor    = 3
	DefaultOccupyTimeout = 500 * time.Millisecond
)

func (c Config) withDefaults() Config {
	if c.ColdFactor < 2 {
		c.ColdFactor = DefaultColdFactor
	}
	if c.OccupyTimeout <= 0 {
		c.OccupyTimeout = DefaultOccupyTimeout
	}
	return c
}

// NewController returns the controller for a valid rule: thread rules and
// QPS rules with the Reject behavior get the window-counting controller,
// the other behaviors theirs.
func NewController(r flow.Rule, cfg Config) Controller {
	return NewSlab(cfg, 1).Controller(r)
}

// Stateful reports whether r's controller keeps state between entries
// (warm-up tokens, a pacing timeline), which an unchanged rule keeps
// across a swap. The window-counting controller keeps none: the window is
// the resource's.
func Stateful(r flow.Rule) bool {
	return r.Grade == flow.GradeQPS && r.ControlBehavior != flow.Reject
}

// Slab makes the controllers of one swap. The window-counting ones, most
// rules', come from one allocation per swap rather than one each; as they
// keep no state, a later swap makes its own rather than keep them, so
// that no swap's slab outlives the tables that use it.
type Slab struct {
	cfg     Config
	rejects []rejectController
	n       int // how many rules the swap has, the slab's size
}

// NewSlab returns a slab for a swap of n rules.
func NewSlab(cfg Config, n int) *Slab {
	return &Slab{cfg: cfg.withDefaults(), n: max(n, 1)}
}

// Controller returns the controller for a valid rule, as NewController.
func (s *Slab) Controller(r flow.Rule) Controller {
	cfg := s.cfg
	if Stateful(r) {
		switch r.ControlBehavior {
		case flow.WarmUp:
			return &warmUpController{tokens: newWarmTokens(r.Count, r.WarmUpPeriodSec, cfg.ColdFactor)}
		case flow.RateLimiter:
			return &rateLimiterController{count: r.Count, pacer: newPacer(r.MaxQueueingTimeMs)}
		case flow.WarmUpRateLimiter:
			return &warmUpRateLimiterController{
				tokens: newWarmTokens(r.Count, r.WarmUpPeriodSec, cfg.ColdFactor),
				pacer:  newPacer(r.MaxQueueingTimeMs),
			}
		}
	}
	if s.rejects == nil {
		s.rejects = make([]rejectController, 0, s.n)
	}
	s.rejects = append(s.rejects, rejectController{grade: r.Grade, count: r.Count, limit: stat.Limit(r.Count),
		occupyTimeoutMs: cfg.OccupyTimeout.Milliseconds()})
	return &s.rejects[len(s.rejects)-1]
}

// rejectController counts passes (or concurrency) in the window and
// rejects above the threshold; a prioritized QPS entry may instead occupy a
// later bucket within the occupy timeout.
type rejectController struct {
	grade           flow.Grade
	count           float64
	limit           int64 // count as a second window's passes (stat.Limit)
	occupyTimeoutMs int64
}

func (c *rejectController) Check(n *stat.Node, now mono.Time, acquire int64, prioritized bool, p stat.Proc) Decision {
	if c.grade == flow.GradeThread {
		if float64(n.Concurrency()+acquire) <= c.count {
			return Decision{}
		}
	} else if n.PassFits(now, acquire, c.limit, p) {
		return Decision{}
	}
	if prioritized && c.grade == flow.GradeQPS {
		ms := now.Millis()
		if wait := c.tryOccupyNext(n.Second(), now, acquire); wait < c.occupyTimeoutMs {
			at := ms + wait
			n.Occupy(now, mono.FromMillis(at-at%n.Second().BucketMs()), acquire)
			return Decision{Wait: time.Duration(wait) * time.Millisecond, Occupied: true}
		}
	}
	return Decision{Blocked: true}
}

// tryOccupyNext returns how long (ms) a prioritized entry must wait until a
// bucket it may be charged to starts, or the occupy timeout when none within
// it has room: walking forward bucket by bucket, the oldest bucket's passes
// leave the window as each new bucket begins. It counts in the window's
// milliseconds.
func (c *rejectController) tryOccupyNext(w *stat.Window, now mono.Time, acquire int64) int64 {
	ms := now.Millis()
	interval, bucket := w.IntervalMs(), w.BucketMs()
	maxCount := c.count * float64(interval) / 1000
	borrowed := w.Borrowed(now)
	if float64(borrowed) >= maxCount {
		return c.occupyTimeoutMs
	}
	earliest := ms - ms%bucket + bucket - interval
	pass := w.Sum(now, stat.Pass)
	for idx := int64(0); earliest < ms; idx++ {
		wait := idx*bucket + bucket - ms%bucket
		if wait >= c.occupyTimeoutMs {
			break
		}
		leaving := w.BucketSum(mono.FromMillis(earliest), stat.Pass)
		if float64(pass+borrowed+acquire-leaving) <= maxCount {
			return wait
		}
		earliest += bucket
		pass -= leaving
	}
	return c.occupyTimeoutMs
}

// warmTokens is the token bucket of Guava's SmoothWarmingUp as Sentinel
// adapted it: tokens accumulate while traffic is below Count/coldFactor, and
// above warningToken the allowed rate falls linearly towards
// Count/coldFactor at maxToken.
type warmTokens struct {
	count        float64
	coldFactor   int64
	warningToken int64
	maxToken     int64
	slope        float64
	stored       atomic.Int64
	lastFilled   atomic.Int64 // ms, a whole second
}

func newWarmTokens(count float64, warmUpSec int, coldFactor int) *warmTokens {
	t := &warmTokens{count: count, coldFactor: int64(coldFactor)}
	t.warningToken = int64(float64(warmUpSec)*count) / int64(coldFactor-1)
	t.maxToken = t.warningToken + int64(2*float64(warmUpSec)*count/(1.0+float64(coldFactor)))
	if t.maxToken > t.warningToken && count > 0 {
		t.slope = float64(coldFactor-1) / count / float64(t.maxToken-t.warningToken)
	}
	// A new rule starts cold, as Java's does (its lastFilledTime starts at
	// the epoch). Java divides by zero when maxToken == warningToken (tiny
	// count × period) and then blocks everything; here slope stays 0 and
	// the rule runs at Count.
	t.stored.Store(t.maxToken)
	t.lastFilled.Store(-1000)
	return t
}

// sync refills tokens once per second from the previous second's passes.
func (t *warmTokens) sync(ms int64, previousQPS int64) {
	current := ms - ms%1000
	last := t.lastFilled.Load()
	if current <= last {
		return
	}
	old := t.stored.Load()
	if t.stored.CompareAndSwap(old, t.coolDown(old, current, last, previousQPS)) {
		if t.stored.Add(-previousQPS) < 0 {
			t.stored.Store(0)
		}
		t.lastFilled.Store(current)
	}
}

func (t *warmTokens) coolDown(old, current, last, passQPS int64) int64 {
	v := old
	refill := int64(float64(current-last) * t.count / 1000)
	if old < t.warningToken {
		v = old + refill
	} else if old > t.warningToken && passQPS < int64(t.count)/t.coldFactor {
		v = old + refill
	}
	return min(v, t.maxToken)
}

// rate returns the allowed QPS for the current token level.
func (t *warmTokens) rate() float64 {
	rest := t.stored.Load()
	if rest >= t.warningToken {
		above := float64(rest - t.warningToken)
		return math.Nextafter(1.0/(above*t.slope+1.0/t.count), math.Inf(1))
	}
	return t.count
}

type warmUpController struct{ tokens *warmTokens }

func (c *warmUpController) Check(n *stat.Node, now mono.Time, acquire int64, _ bool, p stat.Proc) Decision {
	if c.tokens.count <= 0 {
		return Decision{Blocked: true}
	}
	c.tokens.sync(now.Millis(), int64(n.PreviousPassQPS(now)))
	if n.PassFits(now, acquire, stat.Limit(c.tokens.rate()), p) {
		return Decision{}
	}
	return Decision{Blocked: true}
}

// pacer spaces entries cost apart on a shared timeline and lets one wait at
// most maxQueue for its turn: Sentinel's ThrottlingController. It always
// works in nanoseconds (Java switches to them only above 1000 QPS), so
// every rate is exact.
type pacer struct {
	maxQueue time.Duration
	latest   atomic.Int64 // a mono.Time: the last turn given
}

func newPacer(maxQueueingTimeMs int) *pacer {
	p := &pacer{maxQueue: time.Duration(maxQueueingTimeMs) * time.Millisecond}
	p.latest.Store(math.MinInt64 / 2)
	return p
}

// take gives an entry of the given cost its turn: now when the timeline is
// idle, else cost after the last turn given, if that is within maxQueue.
// A turn is taken with one compare-and-swap, never added and handed back
// (as Java's addAndGet does), so concurrent entries never share a turn.
func (p *pacer) take(now mono.Time, cost time.Duration) Decision {
	for {
		latest := mono.Time(p.latest.Load())
		turn := max(latest.Add(cost), now)
		wait := turn.Sub(now)
		if wait > p.maxQueue {
			return Decision{Blocked: true}
		}
		if p.latest.CompareAndSwap(int64(latest), int64(turn)) {
			return Decision{Wait: wait}
		}
	}
}

// spacing returns how far apart entries of acquire tokens are paced at
// perSecond.
func spacing(acquire int64, perSecond float64) time.Duration {
	return time.Duration(math.Round(float64(acquire) * float64(time.Second) / perSecond))
}

type rateLimiterController struct {
	count float64
	pacer *pacer
}

func (c *rateLimiterController) Check(_ *stat.Node, now mono.Time, acquire int64, _ bool, _ stat.Proc) Decision {
	if acquire <= 0 {
		return Decision{}
	}
	if c.count <= 0 {
		return Decision{Blocked: true}
	}
	return c.pacer.take(now, spacing(acquire, c.count))
}

type warmUpRateLimiterController struct {
	tokens *warmTokens
	pacer  *pacer
}

func (c *warmUpRateLimiterController) Check(n *stat.Node, now mono.Time, acquire int64, _ bool, _ stat.Proc) Decision {
	if c.tokens.count <= 0 {
		return Decision{Blocked: true}
	}
	c.tokens.sync(now.Millis(), int64(n.PreviousPassQPS(now)))
	return c.pacer.take(now, spacing(acquire, c.tokens.rate()))
}
