package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/stat"
)

// BlockKind is the kind of rule that blocked an entry. Its String is the
// name of the kind's section in a rule-set document (converter.RuleSet),
// the name a user writes: "flow", "degrade" (circuit breaker), "system",
// "authority", "paramFlow" (hot parameter). The engine's rule kinds
// ([RuleEvent], [ValidationError], [RuleStats]) have the same names.
type BlockKind int

// Block kinds, in checking order.
const (
	BlockAuthority BlockKind = iota + 1
	BlockSystem
	BlockHotspot
	BlockFlow
	BlockCircuitBreaker
)

func (k BlockKind) String() string {
	switch k {
	case BlockAuthority:
		return "authority"
	case BlockSystem:
		return "system"
	case BlockHotspot:
		return "paramFlow"
	case BlockFlow:
		return "flow"
	case BlockCircuitBreaker:
		return "degrade"
	}
	return fmt.Sprintf("BlockKind(%d)", int(k))
}

// ErrBlocked is matched by every [*BlockError]: errors.Is(err,
// core.ErrBlocked) tells a blocked entry from a failed call.
var ErrBlocked = errors.New("core: blocked")

// BlockError is returned by Enter and Do when a rule blocks an entry. The
// engine builds one per rule, when rules load or (flow rules) at the rule's
// first block, and returns it as is from then on, so the blocked path
// allocates nothing after that: treat it as read-only.
type BlockError struct {
	Kind     BlockKind
	Resource string
	// Rule is the rule that blocked, by value: a flow.Rule,
	// circuitbreaker.Rule, system.Rule, authority.Rule or hotspot.Rule.
	Rule any
	// Detail says more where the kind needs it (the system metric that
	// tripped, the breaker state).
	Detail string
}

func (b *BlockError) Error() string {
	msg := fmt.Sprintf("core: %s blocked by %s", b.Resource, describeRule(b.Kind, b.Rule))
	if b.Detail != "" {
		msg += " (" + b.Detail + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrBlocked) true.
func (b *BlockError) Is(target error) bool { return target == ErrBlocked }

// describeRule names a rule in a block message.
func describeRule(k BlockKind, rule any) string {
	switch r := rule.(type) {
	case flow.Rule:
		return describeFlow(r)
	case circuitbreaker.Rule:
		return describeBreaker(r)
	case system.Rule:
		return describeSystem(r)
	case authority.Rule:
		return describeAuthority(r)
	case hotspot.Rule:
		return describeHotspot(r)
	}
	return k.String() + " rule"
}

// EntryOption qualifies one entry. Options are small values, not closures,
// so passing them costs no allocation.
type EntryOption struct {
	kind entryOptKind
	s    string
	n    int
	args []any
	argv [inlineArgs]any // WithArgs with up to inlineArgs values
	argc int8
}

// inlineArgs is how many WithArgs values an EntryOption holds inline.
const inlineArgs = 3

type entryOptKind uint8

const (
	optInbound entryOptKind = iota + 1
	optOrigin
	optArgs
	optCount
	optPriority
)

// Inbound marks the entry as inbound traffic: system rules apply to it and
// it counts toward the inbound totals.
func Inbound() EntryOption { return EntryOption{kind: optInbound} }

// WithOrigin names the caller (Sentinel's origin), matched by flow rules'
// limitApp and by authority rules.
func WithOrigin(origin string) EntryOption { return EntryOption{kind: optOrigin, s: origin} }

// WithArgs passes the call's parameters, matched by hot-parameter rules
// through their paramIdx.
//
// Up to three values are copied into the option, so the variadic slice
// stays on the caller's stack; more are copied to the heap (one
// allocation). Boxing a value into an any may allocate, in the caller.
func WithArgs(args ...any) EntryOption {
	o := EntryOption{kind: optArgs}
	if len(args) <= inlineArgs {
		o.argc = int8(copy(o.argv[:], args))
	} else {
		o.args = slices.Clone(args)
	}
	return o
}

// WithCount sets how many tokens the entry takes (default 1). It must be at
// least 1.
func WithCount(n int) EntryOption { return EntryOption{kind: optCount, n: n} }

// WithPriority marks the entry prioritized: a QPS flow rule with the reject
// behavior lets it occupy a future window, waiting up to the occupy timeout,
// instead of rejecting it.
func WithPriority() EntryOption { return EntryOption{kind: optPriority} }

type contextNameKey struct{}

// WithContextName returns a context that names the call chain's entrance;
// entries under it are matched by chain-strategy flow rules whose
// refResource is name (Sentinel's ContextUtil.enter(name)).
func WithContextName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, contextNameKey{}, name)
}

// Entry is an admitted call into a resource. Call Exit when the call ends,
// exactly once per Enter (further calls do nothing). An Entry belongs to
// the goroutine that entered; SetError and Exit must not race each other.
type Entry struct {
	e           *Engine
	ctx         context.Context
	res         *resource
	stats       *resStats
	originNode  *stat.Node
	chainNode   *stat.Node
	origin      string
	contextName string
	args        []any
	count       int64
	start       mono.Time
	proc        stat.Proc // where Enter ran: its checks and counts take one stripe
	probes      uint64    // bit i: this entry is the half-open probe of breaker i
	err         error
	inbound     bool
	prioritized bool
	occupied    bool
	waited      bool
	exited      bool
}

// Enter asks to enter resource. It returns an *Entry to Exit when the call
// ends, or an error: a *BlockError when a rule blocked it
// (errors.Is(err, ErrBlocked)), an error naming the problem for a bad
// call (a nil ctx, an empty resource, a count below 1), or the context's
// error when ctx ended while the entry was waiting for its turn.
//
// Enter is small enough to be inlined, so when the caller does not let the
// Entry escape it lives on the caller's stack and entering allocates
// nothing.
func (e *Engine) Enter(ctx context.Context, resource string, opts ...EntryOption) (*Entry, error) {
	return e.enter(ctx, new(Entry), resource, opts)
}

// Do runs fn inside an entry of resource: it returns Enter's error without
// calling fn when the entry is not admitted, and fn's error otherwise, which
// it also records for error-based circuit breakers. A panic in fn is
// recorded as an error and continues unwinding.
func (e *Engine) Do(ctx context.Context, resource string, fn func(context.Context) error, opts ...EntryOption) error {
	if fn == nil {
		return fmt.Errorf("%w: nil fn", errInvalidArgument)
	}
	var en Entry
	if _, err := e.enter(ctx, &en, resource, opts); err != nil {
		return err
	}
	completed := false
	defer func() {
		if !completed {
			en.err = errPanicked
			en.Exit()
		}
	}()
	err := fn(en.ctx)
	completed = true
	en.err = err
	en.Exit()
	return err
}

var errPanicked = errors.New("core: panic in Do")

// SetError records that the call failed; error-based circuit breakers and
// the exception statistics count it when the entry exits. A nil err clears
// an earlier one.
func (en *Entry) SetError(err error) {
	if en != nil {
		en.err = err
	}
}

// enter admits en into resource and returns it, or returns nil and why not.
// Its steps: read the options, point the entry at the statistics it counts
// in, run the rules (when any apply; a block is counted), count the pass,
// and keep the arguments for thread-grade hot-parameter rules. The steps an
// entry without options and with plain rules takes are written inline: a
// call each would cost that hot path a few percent.
func (e *Engine) enter(ctx context.Context, en *Entry, resource string, opts []EntryOption) (*Entry, error) {
	if ctx == nil || resource == "" {
		return nil, badCall(ctx, resource)
	}
	en.e, en.ctx, en.count = e, ctx, 1
	var args []any
	if len(opts) > 0 {
		var err error
		if args, err = en.applyOptions(opts); err != nil {
			return nil, err
		}
	}
	now := e.now()
	en.proc = stat.Here()
	t := e.table.Load()
	r := t.res[resource]
	if r == nil {
		en.stats = e.nodes.get(resource)
	} else {
		en.res, en.stats = r, r.stats
		if fs := r.flow; fs != nil && (fs.needOrigin || fs.chains != nil) {
			e.callerStats(en, fs)
		}
	}
	if r != nil || (en.inbound && t.system != nil) {
		if err := e.check(t, r, en, args, resource, now); err != nil {
			e.recordBlock(en, now, err)
			return nil, err
		}
		if en.waited {
			now = e.now() // the entry passes when its wait ends
			en.proc = stat.Here()
		}
	}
	e.recordPass(en, now)
	if r != nil && r.hotspot != nil {
		en.holdArgs(r.hotspot, args)
	}
	return en, nil
}

// applyOptions sets en's fields from opts and returns the WithArgs values.
//
// The arguments stay out of *en (see [Entry.holdArgs]): a store through en
// would make every caller's variadic args escape to the heap.
func (en *Entry) applyOptions(opts []EntryOption) (args []any, err error) {
	for i := range opts {
		o := &opts[i]
		switch o.kind {
		case optInbound:
			en.inbound = true
		case optOrigin:
			en.origin = o.s
		case optArgs:
			if o.args != nil {
				args = o.args
			} else {
				args = o.argv[:o.argc]
			}
		case optCount:
			if o.n < 1 {
				return nil, badCount(o.n)
			}
			en.count = int64(o.n)
		case optPriority:
			en.prioritized = true
		}
	}
	return args, nil
}

// callerStats points en at the statistics of its caller that the flow
// rules of fs read: its origin's, and its call chain's (the context named
// by WithContextName).
func (e *Engine) callerStats(en *Entry, fs *flowSet) {
	if en.origin != "" && fs.needOrigin {
		en.originNode = fs.stats.origin(en.origin, e.nodes.stripes)
	}
	if fs.chains != nil {
		if name, ok := en.ctx.Value(contextNameKey{}).(string); ok {
			en.contextName = name
			en.chainNode = fs.chains[name]
		}
	}
}

// holdArgs keeps a copy of the arguments in en when a thread-grade
// hot-parameter rule counts the entry per value until it exits, and
// counts it in.
func (en *Entry) holdArgs(hs *hotspotSet, args []any) {
	if !hs.threads || len(args) == 0 {
		return
	}
	en.args = slices.Clone(args)
	hs.hotspotThreads(en, 1)
}

func badCall(ctx context.Context, resource string) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", errInvalidArgument)
	}
	return fmt.Errorf("%w: empty resource name", errInvalidArgument)
}

func badCount(n int) error { return fmt.Errorf("%w: count %d < 1", errInvalidArgument, n) }

// check runs the rule kinds in Sentinel's order: authority, system
// (inbound entries only), hot parameters, flow, circuit breakers. r is nil
// when only system rules apply.
func (e *Engine) check(t *table, r *resource, en *Entry, args []any, resource string, now mono.Time) error {
	if r != nil && r.authority != nil {
		if err := e.checkAuthority(r.authority, en, now); err != nil {
			return err
		}
	}
	if en.inbound && t.system != nil {
		if err := e.checkSystem(t.system, en, resource, now); err != nil {
			return err
		}
	}
	if r == nil {
		return nil
	}
	if r.hotspot != nil {
		if err := e.checkHotspot(r.hotspot, en, args, now); err != nil {
			return err
		}
	}
	if r.flow != nil {
		if err := e.checkFlow(r.flow, en, now); err != nil {
			return err
		}
	}
	if r.breakers != nil {
		// Breakers go last: a half-open probe must be an entry that every
		// other check admitted.
		if err := e.checkBreakers(r.breakers, en, now); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) recordPass(en *Entry, now mono.Time) {
	en.start = now
	if en.alone() && en.stats != nil && !en.occupied {
		en.stats.node.AddPass(now, en.count, en.proc)
		return
	}
	for _, n := range [...]*stat.Node{en.node(), en.originNode, en.chainNode, en.inboundNode()} {
		if n == nil {
			continue
		}
		if en.occupied {
			n.AddPass(now, 0, en.proc) // counted ahead, in the window it occupied
		} else {
			n.AddPass(now, en.count, en.proc)
		}
	}
}

func (e *Engine) recordBlock(en *Entry, now mono.Time, err error) {
	be, ok := err.(*BlockError)
	if !ok {
		return // the wait was cancelled: neither a pass nor a block
	}
	if en.stats != nil {
		en.stats.addBlocked(now, be.Kind, en.count)
	}
	for _, n := range [...]*stat.Node{en.node(), en.originNode, en.chainNode, en.inboundNode()} {
		if n != nil {
			n.AddBlock(now, en.count)
		}
	}
}

// alone reports whether the entry counts in its resource's statistics
// only: no origin's, chain's or the inbound total's, as most entries.
func (en *Entry) alone() bool {
	return en.originNode == nil && en.chainNode == nil && !en.inbound
}

func (en *Entry) node() *stat.Node {
	if en.stats == nil {
		return nil
	}
	return en.stats.node
}

func (en *Entry) inboundNode() *stat.Node {
	if en.inbound {
		return en.e.inbound
	}
	return nil
}

// Exit ends the entry: it records the response time and whether the call
// failed. Calling it again does nothing.
func (en *Entry) Exit() {
	if en == nil || en.exited {
		return
	}
	en.exited = true
	now := en.e.now()
	rawRT := now.Sub(en.start)
	rt := min(rawRT, en.e.maxRT)
	failed := en.err != nil
	p := stat.Here() // the goroutine may run on another P than at Enter
	if en.alone() && en.stats != nil {
		en.stats.node.AddCompletion(now, en.count, rt, failed, p)
	} else {
		for _, n := range [...]*stat.Node{en.node(), en.originNode, en.chainNode, en.inboundNode()} {
			if n != nil {
				n.AddCompletion(now, en.count, rt, failed, p)
			}
		}
	}
	if r := en.res; r != nil {
		if r.breakers != nil {
			en.exitBreakers(r.breakers, now, rawRT, failed)
		}
		if r.hotspot != nil {
			r.hotspot.hotspotThreads(en, -1)
		}
	}
}
