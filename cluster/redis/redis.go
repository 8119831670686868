package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/cluster"
	"github.com/bulwark-go/bulwark/core/flow"
)

// Defaults and fixed parameters of the protocol.
const (
	// defaultTimeout is how long an entry waits for Redis at most.
	defaultTimeout = 5 * time.Millisecond
	// errorShare is the share of a window's budget that the leases of all
	// instances together may hold at once: the bound on how far below the
	// budget the admitted entries can fall (see the package doc).
	errorShare = 0.05
	// announceEvery is how often an instance renews its announcements;
	// announceTTL how long one lasts, so that a dead instance stops
	// counting within announceTTL.
	announceEvery = time.Second
	announceTTL   = 3 * time.Second
	// backoffMin and backoffMax bound how long entries fall back without
	// asking Redis after a failure; the backoff doubles per failure.
	backoffMin = 50 * time.Millisecond
	backoffMax = 500 * time.Millisecond
	// occupyMs is how far ahead a prioritized entry may take a token of the
	// next window (Sentinel's default occupy timeout).
	occupyMs = 500
	// poisoned is stored in a replaced lease's tokens, so that entries still
	// holding it fail over to the new one.
	poisoned = math.MinInt64 / 2
)

// Option configures a [TokenService].
type Option func(*options)

type options struct {
	timeout time.Duration
	logger  *slog.Logger
	prefix  string
}

// WithTimeout bounds how long an entry waits for Redis when its instance
// holds no tokens (default 5 ms). Past it the entry gets
// cluster.Fail, and the rule's fallback applies. d <= 0 keeps the default.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithLogger sets the logger for Redis failing and recovering. The service
// is silent by default, and with a nil l.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithKeyPrefix sets the prefix of the service's keys (default
// "bulwark:cluster"): every instance sharing a flow must use the same one.
// An empty p keeps the default.
func WithKeyPrefix(p string) Option {
	return func(o *options) {
		if p != "" {
			o.prefix = p
		}
	}
}

// TokenService is a cluster.TokenService on Redis. Create it with [New]
// and Close it when the engine using it is done. It is safe for concurrent
// use.
type TokenService struct {
	client  goredis.UniversalClient
	timeout time.Duration
	log     *slog.Logger
	prefix  string
	id      string
	epoch   time.Time

	// failUntil is when entries may ask Redis again after a failure (ns
	// since epoch; 0: Redis is healthy).
	failUntil atomic.Int64
	fetches   atomic.Uint64
	fallbacks atomic.Uint64

	mu       sync.Mutex
	failures int
	lastErr  error
	since    time.Time
	flows    map[int64]int // live budgets per flow id
	leaving  []int64       // flows whose announcement to withdraw

	closed atomic.Bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

// New returns a token service over client, which the service never closes:
// a *goredis.Client, a *goredis.ClusterClient (each flow's keys share a
// hash slot) or a failover client. It starts one goroutine, which
// announces this instance on its flows; Close stops it.
func New(client goredis.UniversalClient, opts ...Option) *TokenService {
	o := options{timeout: defaultTimeout, prefix: "bulwark:cluster"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &TokenService{
		client:  client,
		timeout: o.timeout,
		log:     o.logger,
		prefix:  o.prefix,
		id:      instanceID(),
		epoch:   time.Now(),
		flows:   map[int64]int{},
		stop:    make(chan struct{}),
	}
	s.wg.Add(1)
	go s.announce()
	return s
}

func instanceID() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Health returns the state of Redis as the service sees it: whether it is
// failing, since when and why, and how often the service asked it and
// fell back. An engine using the service reports it in its statistics
// (core.Stats.Cluster).
func (s *TokenService) Health() cluster.Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := cluster.Health{Healthy: s.failures == 0, Since: s.since, Failures: s.failures,
		Requests: s.fetches.Load(), Fallbacks: s.fallbacks.Load()}
	if !h.Healthy {
		h.Err = s.lastErr
	}
	return h
}

// Close withdraws this instance's announcements (best effort) and stops the
// service's goroutines, waiting for requests to Redis in flight: on a
// frozen Redis that is up to the client's ReadTimeout (go-redis waits for
// an answer that long whatever the context says, unless the client has
// ContextTimeoutEnabled). Budgets answer cluster.Fail from then on. Close
// is idempotent.
func (s *TokenService) Close() error {
	s.mu.Lock()
	was := s.closed.Swap(true)
	s.mu.Unlock()
	if was {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	return nil
}

// track counts a goroutine about to start in the service's WaitGroup,
// unless the service is closed (Close may be waiting already).
func (s *TokenService) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return false
	}
	s.wg.Add(1)
	return true
}

// now is the service's monotonic time, in ns since it was made.
func (s *TokenService) now() int64 { return int64(time.Since(s.epoch)) }

func (s *TokenService) noteFailure(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	s.lastErr = err
	d := min(backoffMin<<min(s.failures-1, 10), backoffMax)
	s.failUntil.Store(s.now() + int64(d))
	if s.failures == 1 {
		s.since = time.Now()
		s.log.Warn("cluster: redis failing; cluster rules fall back", "err", err)
	}
}

func (s *TokenService) noteSuccess() {
	if s.failUntil.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures > 0 {
		s.since = time.Now()
		s.log.Info("cluster: redis answers again; cluster rules checked", "failures", s.failures)
	}
	s.failures = 0
	s.lastErr = nil
	s.failUntil.Store(0)
}

// Budget returns the budget of a cluster-mode rule: see the package doc.
func (s *TokenService) Budget(r flow.Rule) cluster.Budget {
	r = r.WithDefaults()
	c := r.ClusterConfig
	tag := s.prefix + ":{" + strconv.FormatInt(c.FlowID, 10) + "}"
	b := &budget{
		s:        s,
		flowID:   c.FlowID,
		keys:     []string{tag + ":tokens", tag + ":instances"},
		count:    r.Count,
		global:   c.ThresholdType == 1,
		windowMs: int64(c.WindowIntervalMs),
	}
	b.batch.Store(1) // until Redis tells how many instances share the flow
	s.mu.Lock()
	s.flows[c.FlowID]++
	s.mu.Unlock()
	return b
}

func (s *TokenService) release(flowID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flows[flowID]--; s.flows[flowID] <= 0 {
		delete(s.flows, flowID)
		s.leaving = append(s.leaving, flowID)
	}
}

func (s *TokenService) instancesKey(flowID int64) string {
	return s.prefix + ":{" + strconv.FormatInt(flowID, 10) + "}:instances"
}

// announce renews this instance's announcement on each of its flows every
// announceEvery, withdraws it from flows it left, and from all at Close.
func (s *TokenService) announce() {
	defer s.wg.Done()
	t := time.NewTicker(announceEvery)
	defer t.Stop()
	ttl := announceTTL.Milliseconds()
	for {
		s.mu.Lock()
		ids := make([]int64, 0, len(s.flows))
		for id := range s.flows {
			ids = append(ids, id)
		}
		leaving := s.leaving
		s.leaving = nil
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), announceEvery)
		for _, id := range leaving {
			_ = s.client.ZRem(ctx, s.instancesKey(id), s.id).Err()
		}
		for _, id := range ids {
			err := announceScript.Run(ctx, s.client, []string{s.instancesKey(id)}, s.id, ttl).Err()
			if err != nil {
				s.noteFailure(fmt.Errorf("cluster/redis: announcing flow %d: %w", id, err))
				break
			}
			s.noteSuccess()
		}
		cancel()
		select {
		case <-t.C:
		case <-s.stop:
			s.mu.Lock()
			ids = ids[:0]
			for id := range s.flows {
				ids = append(ids, id)
			}
			s.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			for _, id := range ids {
				_ = s.client.ZRem(ctx, s.instancesKey(id), s.id).Err()
			}
			cancel()
			return
		}
	}
}

// budget is one rule's view of its flow's budget: a lease of tokens taken
// from Redis, spent locally until it runs out or its window ends.
type budget struct {
	s        *TokenService
	flowID   int64
	keys     []string
	count    float64
	global   bool
	windowMs int64

	lease atomic.Pointer[lease]
	batch atomic.Int64 // tokens asked per lease

	mu       sync.Mutex
	flight   *flight // the lease request in progress, if any
	released atomic.Bool
}

type lease struct {
	tokens atomic.Int64
	end    int64 // ns since the service's epoch: the lease is void from then
	left   int64 // tokens the window had left in Redis after this lease
}

type flight struct {
	done     chan struct{}
	start    int64
	err      error
	wait     time.Duration // a prioritized initiator's wait for the next window
	timedOut atomic.Bool   // a waiter gave up on it (counted once as a failure)
}

var errTimeout = errors.New("cluster/redis: no answer within the timeout")

// RequestToken spends the entry's tokens from the lease, or asks Redis for
// a new lease (waiting at most the service's timeout).
func (b *budget) RequestToken(_ context.Context, acquire int64, prioritized bool) cluster.Result {
	now := b.s.now()
	if l := b.lease.Load(); l != nil && now < l.end {
		if left := l.tokens.Add(-acquire); left >= 0 {
			if left == 0 && l.left > 0 {
				b.prefetch(now)
			}
			return cluster.Result{}
		}
		l.tokens.Add(acquire)
		if l.left < acquire && !prioritized {
			return cluster.Result{Status: cluster.Blocked}
		}
	}
	return b.slow(acquire, prioritized, now)
}

// prefetch asks for the next lease, without waiting for it, when an entry
// took the last token of one and Redis has more: the next entry then
// usually finds tokens instead of waiting a round trip. The instance still
// holds at most one batch, so the error bound is unchanged.
func (b *budget) prefetch(now int64) {
	s := b.s
	if fu := s.failUntil.Load(); fu != 0 && now < fu {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.flight != nil || !s.track() {
		return
	}
	f := &flight{done: make(chan struct{}), start: now}
	b.flight = f
	go b.fetch(f, b.batch.Load(), 1, false)
}

func (b *budget) fail() cluster.Result {
	b.s.fallbacks.Add(1)
	return cluster.Result{Status: cluster.Fail}
}

func (b *budget) slow(acquire int64, prioritized bool, now int64) cluster.Result {
	s := b.s
	if s.closed.Load() {
		return b.fail()
	}
	deadline := now + int64(s.timeout)
	var mine *flight
	for {
		if fu := s.failUntil.Load(); fu != 0 && now < fu {
			return b.fail()
		}
		b.mu.Lock()
		l := b.lease.Load()
		var have int64
		if l != nil && now < l.end {
			if l.tokens.Add(-acquire) >= 0 {
				b.mu.Unlock()
				return cluster.Result{}
			}
			have = max(l.tokens.Add(acquire), 0)
			if l.left < acquire && !(prioritized && mine == nil) {
				b.mu.Unlock()
				if mine != nil && mine.wait > 0 {
					return cluster.Result{Status: cluster.ShouldWait, Wait: mine.wait}
				}
				return cluster.Result{Status: cluster.Blocked}
			}
		}
		f := b.flight
		if f == nil {
			// No lease request in progress (or ours was spent by others
			// before we took from it): ask, within the same deadline.
			if !s.track() {
				b.mu.Unlock()
				return b.fail()
			}
			f = &flight{done: make(chan struct{}), start: now}
			b.flight = f
			mine = f
			go b.fetch(f, max(b.batch.Load(), acquire)-have, max(acquire-have, 1), prioritized)
		} else if now-f.start > int64(s.timeout) {
			// A request is hanging on a slow or frozen Redis: fall back
			// rather than wait behind it.
			b.mu.Unlock()
			return b.fail()
		}
		b.mu.Unlock()
		t := time.NewTimer(time.Duration(deadline - now))
		select {
		case <-f.done:
			t.Stop()
		case <-t.C:
			if !f.timedOut.Swap(true) {
				s.noteFailure(errTimeout)
			}
			return b.fail()
		}
		if f.err != nil {
			return b.fail()
		}
		if f == mine && f.wait > 0 {
			return cluster.Result{Status: cluster.ShouldWait, Wait: f.wait}
		}
		now = s.now()
		if now >= deadline {
			return b.fail()
		}
	}
}

// fetch asks Redis for a lease of want tokens (need at least), installs
// it and ends the flight.
func (b *budget) fetch(f *flight, want, need int64, prioritized bool) {
	s := b.s
	defer s.wg.Done()
	defer func() {
		b.mu.Lock()
		b.flight = nil
		b.mu.Unlock()
		close(f.done)
	}()
	s.fetches.Add(1)
	prio := 0
	if prioritized {
		prio = 1
	}
	threshold := 0
	if b.global {
		threshold = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(s.timeout, time.Second))
	defer cancel()
	start := s.now()
	v, err := leaseScript.Run(ctx, s.client, b.keys,
		max(want, 1), need, b.count, threshold, b.windowMs, s.id, announceTTL.Milliseconds(), prio, occupyMs).Int64Slice()
	if err == nil && len(v) != 5 {
		err = fmt.Errorf("cluster/redis: lease script returned %d values, want 5", len(v))
	}
	if err != nil {
		f.err = fmt.Errorf("cluster/redis: leasing tokens of flow %d: %w", b.flowID, err)
		s.noteFailure(f.err)
		return
	}
	s.noteSuccess()
	grant, leftMs, n, rest, wait := v[0], v[1], v[2], v[3], v[4]
	b.batch.Store(batchSize(b.count, b.windowMs, b.global, n))
	// The window ends leftMs after Redis read its clock, which was after
	// start; Redis's ms are truncated, hence the 1 ms less.
	end := start + (leftMs-1)*int64(time.Millisecond)
	nl := &lease{end: end, left: rest}
	nl.tokens.Store(grant)
	if old := b.lease.Swap(nl); old != nil {
		left := old.tokens.Swap(poisoned)
		if left > 0 && old.end > start && old.end > end-b.windowMs*int64(time.Millisecond)/2 {
			nl.tokens.Add(left) // the same window: keep what was not spent
		}
	}
	f.wait = time.Duration(wait) * time.Millisecond
}

// batchSize is how many tokens an instance leases at once: errorShare of
// the window's budget split over the n live instances, at least 1.
func batchSize(count float64, windowMs int64, global bool, n int64) int64 {
	n = max(n, 1)
	budget := count * float64(windowMs) / 1000
	if !global {
		budget *= float64(n)
	}
	return max(int64(errorShare*budget/float64(n)), 1)
}

// Release stops announcing this instance on the flow once no rule of it
// is left.
func (b *budget) Release() {
	if !b.released.Swap(true) {
		b.s.release(b.flowID)
	}
}
