// Package registry is the instance registry (datasource.Registry) of every
// backend, written once: the record's format, the beat loop with its
// jitter and backoff, the goroutine's owner and the Stale computation. A
// backend supplies only a Store, three calls on its server, and its
// Source's Register, Instances and Close call a Registry's.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
)

// Store keeps the records of one document's instances on a backend's
// server. Each call gets a context that bounds it. The records are opaque
// bytes (a few hundred); the Registry encodes and decodes them.
type Store interface {
	// Put writes rec as the record named id, replacing any, and makes it
	// expire ttl after this Put unless Put again. A store whose server
	// has a minimum TTL may keep it longer; one that cannot expire a
	// record (a file) keeps it until Delete: Instances reports it Stale.
	Put(ctx context.Context, id string, rec []byte, ttl time.Duration) error
	// List returns every record that has not expired, in any order.
	List(ctx context.Context) ([][]byte, error)
	// Delete removes the record named id. One that does not exist is not
	// an error.
	Delete(ctx context.Context, id string) error
}

// Registry registers instances in a Store and lists them. It owns the
// beat goroutine of every registration it made; Close ends them all. It
// is safe for concurrent use.
type Registry struct {
	store Store
	name  string // the backend's package name, prefixed to errors

	mu     sync.Mutex
	closed bool
	regs   map[string]*registration // by ID
}

// New returns a Registry over store; name prefixes its errors ("etcd").
func New(name string, store Store) *Registry {
	return &Registry{store: store, name: name, regs: map[string]*registration{}}
}

// validID is what an Instance.ID may be: it becomes part of a key, a
// path or a node name.
var validID = regexp.MustCompile(`^[A-Za-z0-9_:-][A-Za-z0-9._:-]{0,127}$`)

// ValidID reports whether id may name a record (see datasource.Registry).
func ValidID(id string) bool { return validID.MatchString(id) }

// ErrDuplicate is returned by Register for an ID this Registry already
// keeps fresh: one process registers each instance once.
var ErrDuplicate = errors.New("instance already registered through this source")

// DefaultInterval is the Interval of an Instance that sets none (see
// datasource.Instance).
const DefaultInterval = 5 * time.Second

// Timeouts of the calls that no caller's context bounds: the Delete of
// Close, and each beat's Put (which is also bounded by the interval).
const (
	deleteTimeout = 5 * time.Second
	putTimeout    = 5 * time.Second
)

// Register writes inst's record and starts the goroutine that refreshes
// it; see datasource.Registry.
func (r *Registry) Register(ctx context.Context, inst datasource.Instance) (io.Closer, error) {
	if !ValidID(inst.ID) {
		return nil, fmt.Errorf("%s: register: instance ID %q: want 1 to 128 letters, digits, '.', '-', '_' or ':', not starting with '.'", r.name, inst.ID)
	}
	if inst.Interval <= 0 {
		inst.Interval = DefaultInterval
	}
	inst.Beat, inst.Stale = time.Time{}, false
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, datasource.ErrClosed
	case r.regs[inst.ID] != nil:
		r.mu.Unlock()
		return nil, fmt.Errorf("%s: register %s: %w", r.name, inst.ID, ErrDuplicate)
	}
	g := &registration{r: r, inst: inst, done: make(chan struct{})}
	g.ctx, g.stop = context.WithCancel(context.Background())
	r.regs[inst.ID] = g // reserved while the first Put runs
	r.mu.Unlock()

	if err := g.put(ctx); err != nil {
		g.stop()
		r.drop(g)
		return nil, fmt.Errorf("%s: register %s: %w", r.name, inst.ID, err)
	}
	r.mu.Lock()
	if r.closed { // Close ran during the first Put and did not see g start
		r.mu.Unlock()
		g.stop()
		r.drop(g)
		_ = g.remove()
		return nil, datasource.ErrClosed
	}
	go g.run()
	g.started = true
	r.mu.Unlock()
	return g, nil
}

func (r *Registry) drop(g *registration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.regs[g.inst.ID] == g {
		delete(r.regs, g.inst.ID)
	}
}

// Instances lists the records in the Store; see datasource.Registry.
// Records that do not decode (not written by a Registry) are left out.
func (r *Registry) Instances(ctx context.Context) ([]datasource.Instance, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, datasource.ErrClosed
	}
	recs, err := r.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: list instances: %w", r.name, err)
	}
	now := time.Now()
	out := make([]datasource.Instance, 0, len(recs))
	for _, rec := range recs {
		inst, ok := Decode(rec)
		if !ok {
			continue
		}
		inst.Stale = IsStale(inst, now)
		out = append(out, inst)
	}
	slices.SortFunc(out, func(a, b datasource.Instance) int { return strings.Compare(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b datasource.Instance) bool { return a.ID == b.ID }), nil
}

// IsStale reports whether inst's last beat is older than
// datasource.MissedBeats intervals at now.
func IsStale(inst datasource.Instance, now time.Time) bool {
	return now.Sub(inst.Beat) > datasource.MissedBeats*inst.Interval
}

// TTL is how long a record written at one beat of interval lives.
func TTL(interval time.Duration) time.Duration { return datasource.MissedBeats * interval }

// Close stops every registration (their records are removed) and makes
// later calls return datasource.ErrClosed. It returns the first error of
// the removals. It is idempotent; a backend's Source calls it from its own
// Close before it closes what the Store uses.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	var started []*registration
	for _, g := range r.regs {
		if g.started {
			started = append(started, g)
		}
	}
	r.mu.Unlock()
	var errs []error
	for _, g := range started {
		errs = append(errs, g.Close())
	}
	return errors.Join(errs...)
}

// registration is one instance kept fresh: the io.Closer Register returns.
type registration struct {
	r       *Registry
	inst    datasource.Instance
	started bool // run was started; guarded by r.mu

	ctx  context.Context // cancelled by Close or Abandon: ends run and its Put
	stop context.CancelFunc
	done chan struct{} // closed when run returns
	once sync.Once
	err  error
}

// put writes the record with a beat of now.
func (g *registration) put(ctx context.Context) error {
	inst := g.inst
	inst.Beat = time.Now()
	return g.r.store.Put(ctx, inst.ID, Encode(inst), TTL(inst.Interval))
}

// run refreshes the record every interval, a little early (jittered
// within its last fifth, so that instances started together spread out
// and no beat is later than the interval); a failed beat is retried
// sooner, with a backoff from a twentieth of the interval up to half of it.
func (g *registration) run() {
	defer close(g.done)
	interval := g.inst.Interval
	failures := 0
	for {
		d := interval - rand.N(interval/5+1)
		if failures > 0 {
			d = backoff(failures, interval/20, interval/2)
		}
		t := time.NewTimer(d)
		select {
		case <-g.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(g.ctx, min(putTimeout, interval))
		err := g.put(ctx)
		cancel()
		if err != nil {
			failures++
		} else {
			failures = 0
		}
	}
}

// backoff is the delay before retry n (n >= 1): lo doubled n-1 times,
// capped at hi, then jittered within its upper half.
func backoff(n int, lo, hi time.Duration) time.Duration {
	d := max(lo, 1)
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	return d/2 + rand.N(d-d/2+1)
}

// Close stops the beats, waits for the goroutine and removes the record.
func (g *registration) Close() error {
	g.once.Do(func() {
		g.halt()
		g.r.drop(g)
		g.err = g.remove()
	})
	return g.err
}

func (g *registration) halt() {
	g.stop()
	<-g.done
}

func (g *registration) remove() error {
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	if err := g.r.store.Delete(ctx, g.inst.ID); err != nil {
		return fmt.Errorf("%s: unregister %s: %w", g.r.name, g.inst.ID, err)
	}
	return nil
}

// Abandon stops the beats of a registration that Register returned as a
// crashed process would: the record is left to expire (or go stale). Its
// Close then does nothing. For tests (datasourcetest).
func Abandon(c io.Closer) {
	g, ok := c.(*registration)
	if !ok {
		panic(fmt.Sprintf("registry.Abandon: %T is not a registration", c))
	}
	g.once.Do(func() {
		g.halt()
		g.r.drop(g)
	})
}

// record is an Instance as stored: JSON, the interval in milliseconds and
// the beat in RFC 3339 with nanoseconds.
type record struct {
	ID       string    `json:"id"`
	App      string    `json:"app,omitempty"`
	Version  string    `json:"version,omitempty"`
	Addr     string    `json:"addr,omitempty"`
	AdminURL string    `json:"adminURL,omitempty"`
	Interval int64     `json:"intervalMs"`
	Beat     time.Time `json:"beat"`
}

// Encode is inst's record.
func Encode(inst datasource.Instance) []byte {
	b, _ := json.Marshal(record{
		ID: inst.ID, App: inst.App, Version: inst.Version, Addr: inst.Addr, AdminURL: inst.AdminURL,
		Interval: inst.Interval.Milliseconds(), Beat: inst.Beat.UTC(),
	})
	return b
}

// Decode reads a record; ok is false for bytes that are not one.
func Decode(b []byte) (datasource.Instance, bool) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil || !ValidID(r.ID) || r.Interval <= 0 {
		return datasource.Instance{}, false
	}
	return datasource.Instance{
		ID: r.ID, App: r.App, Version: r.Version, Addr: r.Addr, AdminURL: r.AdminURL,
		Interval: time.Duration(r.Interval) * time.Millisecond, Beat: r.Beat,
	}, true
}

// Prefix is how the names of the records of the document name begin, on
// every backend that names records (a key, a path): name followed by
// ".instances/" and then the ID. A ZooKeeper node's records are the
// children of the node name+".instances".
func Prefix(name string) string { return name + ".instances/" }
