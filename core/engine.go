package core

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/flowcontrol"
	"github.com/bulwark-go/bulwark/internal/listeners"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// Clock is the engine's source of time. Only differences between readings
// matter: the engine measures from its creation, so a clock that jumps (a
// wall clock set back) never corrupts windows when Now carries a monotonic
// reading, as time.Now does.
//
// The engine also waits (the rate limiter paces entries; a prioritized
// entry waits for the next window): with a Clock that also has a method
//
//	Sleep(ctx context.Context, d time.Duration) error
//
// it waits through Sleep, otherwise on a real timer, so that a fake clock
// can advance itself instead of blocking a test. Sleep returns nil once d
// has passed on the clock, or ctx's cause if ctx ends first.
type Clock interface{ Now() time.Time }

// sleeper is a Clock that also does the engine's waiting (see Clock).
type sleeper interface {
	Clock
	Sleep(ctx context.Context, d time.Duration) error
}

// Option configures an [Engine]. An option given its zero value (nil, 0)
// keeps the engine's default, as if it were left out; each says so.
type Option func(*config)

type config struct {
	clock        Clock
	logger       *slog.Logger
	flow         flowcontrol.Config
	maxRT        time.Duration
	maxResources int
	stripes      int
	collector    system.Collector
	tokens       cluster.TokenService
	coarse       time.Duration // WithCoarseClock's resolution; 0: off
}

// WithClock makes the engine read time from c instead of the time package.
// Tests use it (or testing/synctest) to drive windows, warm-up and pacing.
// A nil c means the time package, as without the option.
func WithClock(c Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithLogger sets the logger for rule changes and rejected documents. The
// engine is silent by default, and with a nil l.
func WithLogger(l *slog.Logger) Option { return func(cfg *config) { cfg.logger = l } }

// WithColdFactor sets the warm-up cold factor (Sentinel's
// csp.sentinel.flow.cold.factor): warm-up rules start at count/n. Values
// below 2 (0 included) keep the default, 3, as Sentinel does.
func WithColdFactor(n int) Option { return func(cfg *config) { cfg.flow.ColdFactor = n } }

// WithOccupyTimeout bounds how long a prioritized entry may wait for a
// future window (default 500 ms). d <= 0 keeps the default.
func WithOccupyTimeout(d time.Duration) Option {
	return func(cfg *config) { cfg.flow.OccupyTimeout = d }
}

// WithMaxRT caps each recorded response time (Sentinel's
// csp.sentinel.statistic.max.rt, default 4900 ms), so one stuck call does
// not dominate averages. Response times are counted in whole milliseconds:
// d <= 0 keeps the default (a cap of zero would record every call as
// instant), and a d below 1 ms caps at 1 ms.
func WithMaxRT(d time.Duration) Option {
	return func(cfg *config) {
		if d > 0 {
			cfg.maxRT = max(d, time.Millisecond)
		}
	}
}

// WithMaxResources bounds how many resources without rules get statistics
// (default 10,000). Resources past the bound still pass every check, they
// are just not measured; a resource that has rules, or that a rule refers
// to, is always measured and checked, whatever the bound. n <= 0 keeps the
// default.
func WithMaxResources(n int) Option {
	return func(cfg *config) {
		if n > 0 {
			cfg.maxResources = n
		}
	}
}

// Engine admits or rejects entries into resources according to its rules.
// Create one with [NewEngine] or use the process-wide [Default]. An Engine
// is safe for concurrent use.
type Engine struct {
	clock Clock
	epoch time.Time
	// runtimeClock: without WithClock and outside a testing/synctest
	// bubble, the engine's time is the runtime's clock since runtimeEpoch
	// (see startClock).
	runtimeClock bool
	runtimeEpoch int64
	coarse       atomic.Pointer[coarseClock] // nil without WithCoarseClock, or once closed; see clock.go
	log          *slog.Logger
	flowCfg      flowcontrol.Config
	maxRT        time.Duration // recorded response times are capped at it

	table   atomic.Pointer[table]
	mu      sync.Mutex // serialises rule changes; readers never take it
	nodes   registry
	inbound *stat.Node

	flow      *RuleManager[flow.Rule]
	breakers  *RuleManager[circuitbreaker.Rule]
	system    *RuleManager[system.Rule]
	authority *RuleManager[authority.Rule]
	hotspot   *RuleManager[hotspot.Rule]

	breakerLn listeners.Set[func(circuitbreaker.StateChange)]
	shadowLn  listeners.Set[func(*BlockError)] // see shadow.go
	sys       sysState                         // the system collector; see systemcheck.go
	obs       observer                         // history and totals; see stats.go
	events    ruleLog                          // rule events; see events.go

	tokens cluster.TokenService // cluster flow rules; see clustercheck.go

	closed atomic.Bool
}

// NewEngine returns an engine with no rules. It starts one goroutine, which
// keeps the statistics' history and totals from now on (see
// [Engine.Stats]); [Engine.Close] stops it.
func NewEngine(opts ...Option) *Engine {
	cfg := config{
		maxRT:        4900 * time.Millisecond,
		maxResources: 10_000,
		stripes:      runtime.GOMAXPROCS(0),
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e := &Engine{
		clock:   cfg.clock,
		log:     cfg.logger,
		flowCfg: cfg.flow,
		maxRT:   cfg.maxRT,
		tokens:  cfg.tokens,
		nodes:   registry{max: int64(cfg.maxResources), stripes: min(cfg.stripes, 16)},
	}
	e.startClock()
	e.inbound = stat.NewNode(e.nodes.stripes)
	e.table.Store(&table{})
	e.flow = newRuleManager(e, flowKind)
	e.breakers = newRuleManager(e, breakerKind)
	e.system = newRuleManager(e, systemKind)
	e.authority = newRuleManager(e, authorityKind)
	e.hotspot = newRuleManager(e, hotspotKind)
	e.sys.collector = cfg.collector
	e.sys.load.Store(math.Float64bits(math.NaN()))
	e.sys.cpu.Store(math.Float64bits(math.NaN()))
	e.OnBreakerStateChange(e.obs.breakerChanged)
	e.startObserver()
	if cfg.coarse > 0 {
		e.startCoarse(cfg.coarse)
	}
	return e
}

var (
	defaultOnce   sync.Once
	defaultEngine *Engine
)

// Default returns the process-wide engine, created on first use with no
// options. Its statistics goroutine (see [NewEngine]) runs from then on,
// for the life of the process unless it is closed.
func Default() *Engine {
	defaultOnce.Do(func() { defaultEngine = NewEngine() })
	return defaultEngine
}

// Flow returns the manager of the engine's flow rules.
func (e *Engine) Flow() *RuleManager[flow.Rule] { return e.flow }

// CircuitBreaker returns the manager of the engine's circuit-breaking
// (degrade) rules.
func (e *Engine) CircuitBreaker() *RuleManager[circuitbreaker.Rule] { return e.breakers }

// System returns the manager of the engine's system rules. They apply to
// inbound entries (see [Inbound]) of every resource.
func (e *Engine) System() *RuleManager[system.Rule] { return e.system }

// Authority returns the manager of the engine's origin authority rules.
func (e *Engine) Authority() *RuleManager[authority.Rule] { return e.authority }

// Hotspot returns the manager of the engine's hot-parameter rules.
func (e *Engine) Hotspot() *RuleManager[hotspot.Rule] { return e.hotspot }

// Close stops what the engine runs in the background (the statistics'
// harvest, the system collector, the coarse clock) and waits for it. Entries keep working with
// the rules in force, reading the clock themselves, but load and CPU checks
// are disabled from then on; Close is idempotent.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed.Store(true)
	e.stopCollector()
	e.stopObserver()
	e.stopCoarse()
	return nil
}

// wallTime converts engine time to a time.Time: now.Sub(0) is how long
// after the epoch it is.
func (e *Engine) wallTime(now mono.Time) time.Time { return e.epoch.Add(now.Sub(0)) }

// sleep waits d or until ctx is done, through the Clock when it is a
// sleeper.
func (e *Engine) sleep(ctx context.Context, d time.Duration) error {
	if s, ok := e.clock.(sleeper); ok {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// errInvalidArgument is wrapped by the errors of Enter and Do for a bad
// call: a nil context, an empty resource name, a count below 1, a nil fn.
// A programming error, which callers do not branch on: the message names
// it.
var errInvalidArgument = errors.New("core: invalid argument")

// registry holds the statistics of every measured resource.
type registry struct {
	m   sync.Map // string → *resStats
	n   atomic.Int64
	max int64
	// stripes is what nodes with rules are split into: one stripe per P
	// (GOMAXPROCS when the engine was made), at most 16, so that cores
	// entering one hot resource write cache lines of their own.
	stripes int
}

// resStats is everything measured about one resource; it outlives rule
// changes, so windows continue across them.
type resStats struct {
	node    *stat.Node
	origins sync.Map // origin name → *stat.Node
	nOrigin atomic.Int64
	other   atomic.Pointer[stat.Node] // shared by origins past maxOrigins
	// tally counts blocks by kind, from the first block.
	tally atomic.Pointer[stat.Tally]
	// shadow counts the entries shadow rules would have blocked, by kind,
	// from the first one.
	shadow atomic.Pointer[stat.Tally]
}

// maxOrigins bounds the origins measured per resource; callers past it
// share one node, which can only make limits stricter, never looser.
const maxOrigins = 1000

// get returns the statistics of a resource without rules, creating them
// within the bound, or nil past it.
func (r *registry) get(resource string) *resStats {
	if s, ok := r.m.Load(resource); ok {
		return s.(*resStats)
	}
	if r.n.Load() >= r.max {
		return nil
	}
	s, loaded := r.m.LoadOrStore(resource, &resStats{node: stat.NewNode(1)})
	if !loaded {
		r.n.Add(1)
	}
	return s.(*resStats)
}

// pin returns the statistics of a resource that rules use, whatever the
// bound, striped for concurrent writers. A resource measured before it had
// rules gets a striped node now; its previous second of statistics is
// carried by entries already in flight and then dropped.
func (r *registry) pin(resource string) *resStats {
	if v, ok := r.m.Load(resource); ok {
		s := v.(*resStats)
		if s.node.Second().Stripes() >= r.stripes {
			if s.tally.Load() == nil {
				s.tally.CompareAndSwap(nil, stat.NewTally(r.stripes)) // see pinned
			}
			return s
		}
		ns := pinned(r.stripes)
		if r.m.CompareAndSwap(resource, s, ns) {
			return ns
		}
		return r.pin(resource)
	}
	if _, loaded := r.m.LoadOrStore(resource, pinned(r.stripes)); !loaded {
		r.n.Add(1)
	}
	return r.pin(resource)
}

// pinFrom is pin for a resource of a table built from prev: a resource
// that has rules in prev has its statistics there, pinned already, and
// the registry is not searched.
func (r *registry) pinFrom(prev *table, resource string) *resStats {
	if res := prev.res[resource]; res != nil {
		return res.stats
	}
	return r.pin(resource)
}

// origin returns the node of one caller of the resource.
func (s *resStats) origin(name string, stripes int) *stat.Node {
	if n, ok := s.origins.Load(name); ok {
		return n.(*stat.Node)
	}
	if s.nOrigin.Load() >= maxOrigins {
		if n := s.other.Load(); n != nil {
			return n
		}
		s.other.CompareAndSwap(nil, stat.NewNode(stripes))
		return s.other.Load()
	}
	n, loaded := s.origins.LoadOrStore(name, stat.NewNode(stripes))
	if !loaded {
		s.nOrigin.Add(1)
	}
	return n.(*stat.Node)
}
