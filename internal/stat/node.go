package stat

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bulwark-go/bulwark/internal/mono"
)

// Default window shapes, as Sentinel's.
const (
	SecondSampleCount = 2
	SecondIntervalMs  = 1000
	MinuteSampleCount = 60
	MinuteIntervalMs  = 60_000
)

// Node is the statistics of one resource, origin, chain or the inbound
// total: a second window, the current concurrency, and a minute window that
// exists only once someone asked for it.
//
// Writers call [Node.AddPass], [Node.Occupy], [Node.AddBlock] and
// [Node.AddCompletion]; readers call the rate methods. Everything is
// lock-free. The concurrency is the second window's passes less its
// completions (see [Window]), so it costs no memory of its own, no shared
// counter and no write of its own.
type Node struct {
	nodeFields
	// Every entry reads the fields: a line of their own, so that no write
	// to a neighbouring object makes other cores miss them.
	_ [cacheLine - unsafe.Sizeof(nodeFields{})%cacheLine]byte
}

type nodeFields struct {
	second     *Window
	minute     atomic.Pointer[Window]
	minuteOnce sync.Once
}

// NewNode returns a node with a second window of 2 × 500 ms split into
// stripes cache lines per bucket (1 for a resource nobody limits; about the
// number of cores for a hot one), accepting reservations from prioritized
// entries (see [Window.Borrow]).
//
// Its size is about 370 bytes with one stripe, 480 + 192 × stripes bytes
// with more (a striped window keeps its passes on lines of their own).
func NewNode(stripes int) *Node {
	w := NewWindow(SecondSampleCount, SecondIntervalMs, stripes)
	w.EnableBorrow()
	return &Node{nodeFields: nodeFields{second: w}}
}

// Second returns the node's second window.
func (n *Node) Second() *Window { return n.second }

// Minute returns the node's minute window (60 × 1 s), creating it on first
// call; from then on every write also lands in it. A node whose minute
// statistics nobody reads never pays for sixty buckets (about 4 KiB).
func (n *Node) Minute() *Window {
	if w := n.minute.Load(); w != nil {
		return w
	}
	n.minuteOnce.Do(func() { n.minute.Store(NewWindow(MinuteSampleCount, MinuteIntervalMs, 1)) })
	return n.minute.Load()
}

// AddPass records count admitted entries and raises the concurrency by one.
// A count of 0 only raises the concurrency (an entry whose pass was counted
// ahead, see [Node.Occupy]).
// p is the caller's [Proc] (see [Here]).
func (n *Node) AddPass(now mono.Time, count int64, p Proc) {
	ms := now.Millis()
	n.second.enter(ms, count, p)
	if m := n.minute.Load(); m != nil {
		m.add(ms, Pass, count, p)
	}
}

// Occupy records count prioritized entries admitted into the future bucket
// that starts at start: their passes are counted when that bucket begins.
// The entries' concurrency is raised by the caller, with AddPass(now, 0, p).
func (n *Node) Occupy(now, start mono.Time, count int64) {
	n.second.Borrow(start, count)
	n.second.Add(now, OccupiedPass, count)
	if m := n.minute.Load(); m != nil {
		m.Add(now, OccupiedPass, count)
	}
}

// AddBlock records count rejected entries.
func (n *Node) AddBlock(now mono.Time, count int64) {
	n.second.Add(now, Block, count)
	if m := n.minute.Load(); m != nil {
		m.Add(now, Block, count)
	}
}

// AddCompletion records count completed entries that took rt (counted in
// whole milliseconds, truncated) and whether they failed, and lowers the
// concurrency by one. p is the caller's [Proc] (see [Here]).
func (n *Node) AddCompletion(now mono.Time, count int64, rt time.Duration, failed bool, p Proc) {
	ms, rtMs := now.Millis(), rt.Milliseconds()
	n.second.complete(ms, count, rtMs, failed, true, p)
	if m := n.minute.Load(); m != nil {
		m.complete(ms, count, rtMs, failed, false, p)
	}
}

// Concurrency returns the number of admitted entries not yet completed.
func (n *Node) Concurrency() int64 { return n.second.gauge() }

func (n *Node) perSecond(now mono.Time, e Event) float64 {
	return float64(n.second.Sum(now, e)) * 1000 / float64(n.second.intervalMs)
}

// PassFits reports whether acquire more passes keep the passes of the
// second window ending at now within limit, a rate converted by [Limit]
// (Sentinel's passQps + acquire <= count), without reading other cores'
// counters while the window is far from full. See [Window.PassFits] for
// how exact it is; p is the caller's [Proc] (see [Here]).
func (n *Node) PassFits(now mono.Time, acquire, limit int64, p Proc) bool {
	return n.second.PassFits(now, acquire, limit, p)
}

// Limit converts a rate per second to the most passes a node's second
// window may hold within it: a rule's limit, converted once when it loads
// rather than at every check.
func Limit(perSecond float64) int64 {
	return countLimit(perSecond * SecondIntervalMs / 1000)
}

// countLimit returns the largest whole count within f: a count c is within
// f when float64(c) <= f.
func countLimit(f float64) int64 {
	switch {
	case f >= 1<<60 || math.IsInf(f, 1):
		return 1 << 60
	case f < 0 || math.IsNaN(f):
		return -1
	}
	return int64(math.Floor(f))
}

// PassQPS returns admitted entries per second over the second window.
func (n *Node) PassQPS(now mono.Time) float64 { return n.perSecond(now, Pass) }

// BlockQPS returns rejected entries per second over the second window.
func (n *Node) BlockQPS(now mono.Time) float64 { return n.perSecond(now, Block) }

// SuccessQPS returns completed entries per second over the second window.
func (n *Node) SuccessQPS(now mono.Time) float64 { return n.perSecond(now, Success) }

// ExceptionQPS returns failed entries per second over the second window.
func (n *Node) ExceptionQPS(now mono.Time) float64 { return n.perSecond(now, Exception) }

// AvgRT returns the mean response time in ms over the second window, 0 when
// nothing completed.
func (n *Node) AvgRT(now mono.Time) float64 {
	s := n.second.Sum(now, Success)
	if s == 0 {
		return 0
	}
	return float64(n.second.Sum(now, RT)) / float64(s)
}

// MinRT returns the smallest response time over the second window (whole
// milliseconds, as recorded), or def when nothing completed.
func (n *Node) MinRT(now mono.Time, def time.Duration) time.Duration {
	return n.second.MinRT(now, def)
}

// MaxSuccessQPS returns the highest per-bucket success count scaled to a
// second (Sentinel's maxSuccessQps, used by the BBR check).
func (n *Node) MaxSuccessQPS(now mono.Time) float64 {
	return float64(n.second.MaxBucket(now, Success)) * 1000 / float64(n.second.bucketMs)
}

// PreviousPassQPS returns the passes of the previous whole second, read from
// the minute window (Sentinel's previousPassQps). It creates the minute
// window on first call.
func (n *Node) PreviousPassQPS(now mono.Time) float64 {
	m := n.Minute()
	return float64(m.Previous(now, Pass)) * 1000 / float64(m.bucketMs)
}
