package core

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// Figures is what the engine counted for a resource over some span: one
// second, one minute, or its whole life.
type Figures struct {
	Passed int64 // entries admitted
	// Blocked counts rejected entries, all kinds together; BlockedBy splits
	// them by the kind of rule that blocked (BlockedBy[BlockFlow], …;
	// index 0 is unused).
	Blocked   int64
	BlockedBy [BlockCircuitBreaker + 1]int64
	// ShadowBlocked counts, by kind as BlockedBy, the entries that shadow
	// rules would have blocked (see flow.Rule.Shadow): they were not
	// blocked by them, so each is also in Passed, or in Blocked when an
	// enforcing rule blocked it.
	ShadowBlocked [BlockCircuitBreaker + 1]int64
	Succeeded     int64 // entries completed, with or without an error
	Failed        int64 // entries completed with an error (Entry.SetError, Do)
	// RT is the sum of the completed entries' response times (each capped
	// by WithMaxRT, counted in whole ms); AvgRT divides it.
	RT time.Duration
	// MinRT is the smallest response time of a completed entry, 0 when
	// none completed.
	MinRT time.Duration
	// Concurrency is the number of entries in flight: now in Second, at
	// the end of the second in a History; 0 in Minute and Total.
	Concurrency int64
}

// AvgRT returns the mean response time of the completed entries, 0 when
// none completed.
func (f Figures) AvgRT() time.Duration {
	if f.Succeeded == 0 {
		return 0
	}
	return f.RT / time.Duration(f.Succeeded)
}

// ResourceStats is what the engine measures of one resource.
type ResourceStats struct {
	Resource string
	// Second covers the sliding second that ends now: the window flow
	// rules check. Its Concurrency is the entries in flight now.
	Second Figures
	// Minute covers the 60 whole seconds before the current one (the sum
	// of [Engine.History]).
	Minute Figures
	// Total covers everything counted since the engine was made (or the
	// resource first had an entry): counters that only grow, as
	// Prometheus wants.
	// It lags the clock by up to half a second (the current bucket), and
	// its MinRT and Concurrency are 0.
	Total Figures
}

// BreakerStats is the state of one circuit breaker.
type BreakerStats struct {
	Rule  circuitbreaker.Rule
	State circuitbreaker.State
	// Since is when the breaker entered State: its last transition, or
	// when its rule was loaded if it never moved.
	Since time.Time
	// Transitions counts the breaker's transitions since the engine was
	// created: Transitions[from][to], indexed by circuitbreaker.State.
	Transitions [circuitbreaker.HalfOpen + 1][circuitbreaker.HalfOpen + 1]int64
}

// SystemStats is what system rules see.
type SystemStats struct {
	// Load1 and CPUUsage (a ratio, 0 to 1) are the collector's last
	// readings; NaN when no system rule needs them (the collector runs
	// only then) or when they cannot be read.
	Load1, CPUUsage float64
	// Inbound is the engine-wide total of inbound entries (see [Inbound]):
	// the QPS, RT and concurrency that system rules check. Its blocks are
	// not split by kind (BlockedBy is zero): each resource's are.
	Inbound ResourceStats
}

// Stats is a snapshot of what an engine measures. It is a copy: the
// caller may keep and change it.
type Stats struct {
	Time time.Time
	// Resources lists every measured resource (see WithMaxResources),
	// sorted by name.
	Resources []ResourceStats
	// Breakers lists every circuit breaker in force, by resource then rule
	// order.
	Breakers []BreakerStats
	System   SystemStats
	// Rules describes the rules in force, per kind, in the order flow,
	// degrade, system, authority, paramFlow.
	Rules []RuleStats
	// Cluster is the health of the engine's token service
	// (WithTokenService) when the service reports one (a method
	// Health() cluster.Health, as cluster/redis's has); nil otherwise.
	Cluster *cluster.Health
}

// Stats returns the engine's statistics: per resource the last second,
// the last minute and the totals, every breaker's state, and the system
// figures.
//
// Reading takes no lock that Enter or Exit take and writes nothing they
// read, so it never blocks or slows an entry. The figures count from the
// engine's making, whenever they are first read: a goroutine that
// [NewEngine] starts copies every completed half-second bucket into the
// per-second history and the totals before the windows reuse it, about
// every 200 ms, and [Engine.Close] stops it (after Close, reads still
// harvest, so figures stay whole while they are read at least every half
// second).
func (e *Engine) Stats() Stats {
	o := &e.obs
	o.mu.Lock()
	defer o.mu.Unlock()
	now := e.now()
	e.harvest(now)
	st := Stats{Time: e.wallTime(now)}
	names := make([]string, 0, len(o.series))
	for name, s := range o.series {
		if !s.gone {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	st.Resources = make([]ResourceStats, len(names))
	for i, name := range names {
		st.Resources[i] = o.series[name].stats(name, now)
	}
	st.Breakers = e.breakerStats()
	st.Rules = e.ruleStats()
	st.System = SystemStats{
		Load1:    math.Float64frombits(e.sys.load.Load()),
		CPUUsage: math.Float64frombits(e.sys.cpu.Load()),
		Inbound:  o.inbound.stats("", now),
	}
	st.Cluster = e.clusterHealth()
	return st
}

// History returns the resource's figures per second over the last 60 whole
// seconds, oldest first: always 60 entries, zero for seconds with nothing
// counted, nil for a resource
// that is not measured.
func (e *Engine) History(resource string) []Figures {
	o := &e.obs
	o.mu.Lock()
	defer o.mu.Unlock()
	now := e.now()
	if ms := now.Millis(); ms-ms%harvestBucketMs != o.harvested {
		e.harvest(now) // else nothing completed since the last harvest
	}
	s := o.series[resource]
	if s == nil || s.gone {
		return nil
	}
	return s.history(now.Millis())
}

// historySeconds is how many seconds of history each resource keeps.
const historySeconds = 60

// harvestBucketMs is the bucket length of the second windows harvested.
const harvestBucketMs = stat.SecondIntervalMs / stat.SecondSampleCount

// harvestEvery is how often the observer copies completed buckets: well
// within a bucket's length (500 ms), after which the window reuses it.
const harvestEvery = 200 * time.Millisecond

// observer keeps the history and totals of every measured resource,
// harvested from the windows before they slide past.
type observer struct {
	mu      sync.Mutex
	series  map[string]*series
	inbound series
	// harvested is the start of the bucket of the last harvest, ms.
	harvested int64
	// inboundRS wraps the engine's inbound node for harvest.
	inboundRS *resStats
	stop      chan struct{} // closed by Close (then nil)
	done      chan struct{}

	// breakers holds a *breakerTrack per breaker rule in force. Entries
	// update it on a transition without a lock, so that no reader can
	// make them wait.
	breakers sync.Map
}

type breakerTrack struct {
	since       atomic.Int64 // the last transition, in Unix nanoseconds of the engine's clock
	transitions [circuitbreaker.HalfOpen + 1][circuitbreaker.HalfOpen + 1]atomic.Int64
}

// second is one second of a resource's history, kept small (a resource
// keeps 60): counts saturate at 2³²-1 per second.
type second struct {
	sec                             int64 // which second (engine ms / 1000); -1 when unused
	pass, block, success, exception uint32
	rt, minRT                       uint32 // ms; minRT is MaxUint32 when nothing completed
	conc                            int32
}

// sat32 converts a count to a second's, saturating.
func sat32(n int64) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }

func (d *second) add(b stat.Bucket, conc int64) {
	d.pass = sat32(int64(d.pass) + b.Pass)
	d.block = sat32(int64(d.block) + b.Block)
	d.success = sat32(int64(d.success) + b.Success)
	d.exception = sat32(int64(d.exception) + b.Exception)
	d.rt = sat32(int64(d.rt) + b.RT)
	d.minRT = min(d.minRT, sat32(b.MinRT))
	d.conc = int32(min(max(conc, math.MinInt32), math.MaxInt32))
}

func (d *second) bucket() stat.Bucket {
	b := stat.Bucket{Pass: int64(d.pass), Block: int64(d.block), Success: int64(d.success),
		Exception: int64(d.exception), RT: int64(d.rt), MinRT: math.MaxInt64}
	if d.minRT != math.MaxUint32 {
		b.MinRT = int64(d.minRT)
	}
	return b
}

// kindCounts is one second's blocks by kind (index k-1 for kind k).
type kindCounts [stat.TallyKinds - 1]uint32

func (k *kindCounts) counts() stat.Counts {
	var c stat.Counts
	for i, n := range k {
		c[i+1] = int64(n)
	}
	return c
}

// series is the harvested history of one resource.
type series struct {
	rs      *resStats    // the statistics harvested last (pin replaces them)
	next    int64        // start of the first bucket not harvested yet, ms
	secs    []second     // a ring of historySeconds, allocated at the first count
	kinds   []kindCounts // blocks by kind, parallel to secs, from the first block
	shadows []kindCounts // shadow blocks by kind, parallel to secs, from the first
	total   stat.Bucket
	blocked stat.Counts
	shadow  stat.Counts // shadow blocks by kind
	gone    bool        // no longer in the registry
	// mins is the baseline, a ring of baselineMinutes folded from whole
	// seconds, allocated at the first (see suggest.go); folded is the
	// first second not folded yet.
	mins   []minuteRec
	folded int64
}

// pinned returns the statistics of a resource that has rules: its tally
// of blocks by kind is made now, so that blocking allocates nothing.
func pinned(stripes int) *resStats {
	s := &resStats{node: stat.NewNode(stripes)}
	s.tally.Store(stat.NewTally(stripes))
	return s
}

// addBlocked counts n entries blocked by a rule of kind k, by kind; the
// node counts them all together. A resource without rules gets its tally
// at its first block (by a system rule, whose block allocates anyway).
func (s *resStats) addBlocked(now mono.Time, k BlockKind, n int64) {
	s.tallyIn(&s.tally).Add(now, int(k), n)
}

// addShadow counts n entries a shadow rule of kind k would have blocked.
// The tally is made at the resource's first shadow block.
func (s *resStats) addShadow(now mono.Time, k BlockKind, n int64) {
	s.tallyIn(&s.shadow).Add(now, int(k), n)
}

// tallyIn returns the tally in p, making it if there is none yet.
func (s *resStats) tallyIn(p *atomic.Pointer[stat.Tally]) *stat.Tally {
	t := p.Load()
	if t == nil {
		p.CompareAndSwap(nil, stat.NewTally(s.node.Second().Stripes()))
		t = p.Load()
	}
	return t
}

// startObserver starts the goroutine that harvests the windows, so that
// the history and totals count from the engine's making. NewEngine calls
// it; [Engine.Close] stops it.
func (e *Engine) startObserver() {
	o := &e.obs
	o.series = make(map[string]*series)
	o.inboundRS = &resStats{node: e.inbound}
	o.stop, o.done = make(chan struct{}), make(chan struct{})
	go everyUntil(o.stop, o.done, harvestEvery, func() {
		o.mu.Lock()
		e.harvest(e.now())
		o.mu.Unlock()
	})
}

// stopObserver stops the harvesting goroutine and waits for it.
func (e *Engine) stopObserver() {
	o := &e.obs
	o.mu.Lock()
	stop, done := o.stop, o.done
	o.stop = nil
	o.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// harvest copies the completed buckets of every resource into its series.
// It runs under o.mu.
func (e *Engine) harvest(now mono.Time) {
	o := &e.obs
	ms := now.Millis()
	o.harvested = ms - ms%harvestBucketMs
	seen := 0
	e.nodes.m.Range(func(k, v any) bool {
		name, rs := k.(string), v.(*resStats)
		s := o.series[name]
		if s == nil {
			s = &series{}
			o.series[name] = s
		}
		s.gone = false
		s.harvest(rs, ms)
		seen++
		return true
	})
	if seen < len(o.series) {
		for name, s := range o.series {
			if _, ok := e.nodes.m.Load(name); !ok {
				s.gone = true
			}
		}
	}
	o.inbound.harvest(o.inboundRS, ms)
}

// harvest copies the buckets of rs that completed before ms.
func (s *series) harvest(rs *resStats, ms int64) {
	w := rs.node.Second()
	bms := w.BucketMs()
	cur := ms - ms%bms
	from := cur - bms // the oldest completed bucket still in the ring
	if s.rs != nil && s.rs.node == rs.node {
		from = max(from, s.next)
	}
	s.rs = rs
	tally, shadow := rs.tally.Load(), rs.shadow.Load()
	for start := from; start < cur; start += bms {
		b, ok := w.BucketAt(mono.FromMillis(start))
		if !ok {
			continue
		}
		c, sc := tallyAt(tally, start), tallyAt(shadow, start)
		conc := rs.node.Concurrency()
		if b.Pass == 0 && b.Block == 0 && b.Success == 0 && conc == 0 {
			continue
		}
		s.add(start, b, c, sc, conc)
	}
	s.next = max(s.next, cur)
	s.foldSeconds()
}

// tallyAt returns t's counts in the bucket that starts at start (ms);
// none when t is nil.
func tallyAt(t *stat.Tally, start int64) stat.Counts {
	if t == nil {
		return stat.Counts{}
	}
	c, _ := t.BucketAt(mono.FromMillis(start))
	return c
}

func (s *series) add(start int64, b stat.Bucket, c, sc stat.Counts, conc int64) {
	if s.secs == nil {
		s.secs = make([]second, historySeconds)
		for i := range s.secs {
			s.secs[i].sec = -1
		}
	}
	sec := start / 1000
	i := sec % historySeconds
	d := &s.secs[i]
	if d.sec != sec {
		*d = second{sec: sec, minRT: math.MaxUint32}
		if s.kinds != nil {
			s.kinds[i] = kindCounts{}
		}
		if s.shadows != nil {
			s.shadows[i] = kindCounts{}
		}
	}
	d.add(b, conc)
	addKinds(&s.kinds, i, c)
	addKinds(&s.shadows, i, sc)
	s.total.Add(b)
	s.blocked.Add(c)
	s.shadow.Add(sc)
}

// addKinds adds c to entry i of the ring *ring, made at the first count.
func addKinds(ring *[]kindCounts, i int64, c stat.Counts) {
	if c == (stat.Counts{}) {
		return
	}
	if *ring == nil {
		*ring = make([]kindCounts, historySeconds)
	}
	for k := 1; k < len(c); k++ {
		(*ring)[i][k-1] = sat32(int64((*ring)[i][k-1]) + c[k])
	}
}

// kindsAt returns the counts by kind of ring entry i.
func kindsAt(ring []kindCounts, i int64) stat.Counts {
	if ring == nil {
		return stat.Counts{}
	}
	return ring[i].counts()
}

// figures converts counters to Figures.
func figures(b stat.Bucket, c, sc stat.Counts, conc int64) Figures {
	f := Figures{
		Passed:      b.Pass,
		Blocked:     b.Block,
		Succeeded:   b.Success,
		Failed:      b.Exception,
		RT:          time.Duration(b.RT) * time.Millisecond,
		Concurrency: conc,
	}
	copy(f.BlockedBy[:], c[:])
	copy(f.ShadowBlocked[:], sc[:])
	if b.Success > 0 && b.MinRT != math.MaxInt64 {
		f.MinRT = time.Duration(b.MinRT) * time.Millisecond
	}
	return f
}

// stats returns the resource's figures at now.
func (s *series) stats(name string, now mono.Time) ResourceStats {
	r := ResourceStats{Resource: name}
	if rs := s.rs; rs != nil {
		r.Second = figures(rs.node.Second().Totals(now), tallyTotals(rs.tally.Load(), now),
			tallyTotals(rs.shadow.Load(), now), rs.node.Concurrency())
	}
	minute := stat.Bucket{MinRT: math.MaxInt64}
	var mc, msc stat.Counts
	s.eachSecond(now.Millis(), func(_ int, d *second) {
		minute.Add(d.bucket())
		mc.Add(kindsAt(s.kinds, d.sec%historySeconds))
		msc.Add(kindsAt(s.shadows, d.sec%historySeconds))
	})
	r.Minute = figures(minute, mc, msc, 0)
	r.Total = figures(s.total, s.blocked, s.shadow, 0)
	r.Total.MinRT = 0
	return r
}

// tallyTotals returns t's counts over the second that ends at now; none
// when t is nil.
func tallyTotals(t *stat.Tally, now mono.Time) stat.Counts {
	if t == nil {
		return stat.Counts{}
	}
	return t.Totals(now)
}

// eachSecond calls fn with the seconds of the last minute that have
// counts, and their position (0 the oldest, historySeconds-1 the last
// whole second).
func (s *series) eachSecond(ms int64, fn func(i int, d *second)) {
	if s.secs == nil {
		return
	}
	cur := ms / 1000
	for i := range historySeconds {
		sec := cur - historySeconds + int64(i)
		if sec < 0 {
			continue
		}
		if d := &s.secs[sec%historySeconds]; d.sec == sec {
			fn(i, d)
		}
	}
}

func (s *series) history(ms int64) []Figures {
	h := make([]Figures, historySeconds)
	s.eachSecond(ms, func(i int, d *second) {
		at := d.sec % historySeconds
		h[i] = figures(d.bucket(), kindsAt(s.kinds, at), kindsAt(s.shadows, at), int64(d.conc))
	})
	return h
}

// breakerChanged records a transition; the engine listens from its start.
func (o *observer) breakerChanged(c circuitbreaker.StateChange) {
	v, ok := o.breakers.Load(c.Rule)
	if !ok {
		v, _ = o.breakers.LoadOrStore(c.Rule, new(breakerTrack)) // a rule loaded before the listener
	}
	t := v.(*breakerTrack)
	t.since.Store(c.Time.UnixNano())
	if inState(c.From) && inState(c.To) {
		t.transitions[c.From][c.To].Add(1)
	}
}

// breakerLoaded notes when a breaker's rule came into force: a new,
// closed breaker.
func (o *observer) breakerLoaded(r circuitbreaker.Rule, at time.Time) {
	t := new(breakerTrack)
	t.since.Store(at.UnixNano())
	o.breakers.Store(r, t)
}

// breakerRemoved forgets a breaker whose rule is no longer in force.
func (o *observer) breakerRemoved(r circuitbreaker.Rule) { o.breakers.Delete(r) }

func inState(s circuitbreaker.State) bool {
	return s >= circuitbreaker.Closed && s <= circuitbreaker.HalfOpen
}

func (e *Engine) breakerStats() []BreakerStats {
	t := e.table.Load()
	names := make([]string, 0, len(t.breakers))
	for name := range t.breakers {
		names = append(names, name)
	}
	slices.Sort(names)
	o := &e.obs
	var out []BreakerStats
	for _, name := range names {
		for _, c := range t.breakers[name].checks {
			b := BreakerStats{Rule: c.b.Rule(), State: c.b.State()}
			if v, ok := o.breakers.Load(b.Rule); ok {
				tr := v.(*breakerTrack)
				b.Since = time.Unix(0, tr.since.Load())
				for f := range tr.transitions {
					for to := range tr.transitions[f] {
						b.Transitions[f][to] = tr.transitions[f][to].Load()
					}
				}
			}
			out = append(out, b)
		}
	}
	return out
}
