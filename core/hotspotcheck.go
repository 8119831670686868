package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/internal/mono"
	"github.com/bulwark-go/bulwark/internal/paramlimit"
)

var hotspotKind = kind[hotspot.Rule]{
	name:     "paramFlow",
	validate: hotspot.Rule.Validate,
	equal:    hotspotEqual,
	resource: func(r hotspot.Rule) string { return r.Resource },
	rules:    func(t *table) []hotspot.Rule { return t.hotspotRules },
	install:  installHotspot,
}

func hotspotEqual(a, b hotspot.Rule) bool {
	items := slices.Equal(a.ParamFlowItemList, b.ParamFlowItemList)
	a.ParamFlowItemList, b.ParamFlowItemList = nil, nil
	return items && a.Resource == b.Resource && a.LimitApp == b.LimitApp && a.Grade == b.Grade &&
		a.ParamIdx == b.ParamIdx && a.Count == b.Count && a.ControlBehavior == b.ControlBehavior &&
		a.MaxQueueingTimeMs == b.MaxQueueingTimeMs && a.BurstCount == b.BurstCount &&
		a.DurationInSec == b.DurationInSec && a.ClusterMode == b.ClusterMode && a.ClusterConfig == b.ClusterConfig &&
		a.Shadow == b.Shadow
}

// hotspotSet is the compiled hot-parameter rules of one resource.
type hotspotSet struct {
	stats  *resStats
	checks []*hotspotCheck
	// threads: some rule counts entries in flight per value, so passes and
	// exits must be reported.
	threads bool
}

type hotspotCheck struct {
	l      *paramlimit.Limiter
	block  *BlockError
	shadow bool
}

func installHotspot(e *Engine, next, prev *table, rules []hotspot.Rule) {
	next.hotspotRules = rules
	next.hotspot = make(map[string]*hotspotSet)
	keep := kept[*hotspotCheck]{}
	for _, r := range rules {
		hs := next.hotspot[r.Resource]
		if hs == nil {
			hs = &hotspotSet{stats: e.nodes.pinFrom(prev, r.Resource)}
			next.hotspot[r.Resource] = hs
		}
		hc := &hotspotCheck{shadow: r.Shadow}
		var old []*hotspotCheck
		if s := prev.hotspot[r.Resource]; s != nil {
			old = s.checks
		}
		if c, ok := keep.take(old, func(c *hotspotCheck) bool { return hotspotEqual(c.l.Rule(), r) }); ok {
			hc.l = c.l
		} else {
			hc.l = paramlimit.NewLimiter(r)
		}
		hc.block = &BlockError{Kind: BlockHotspot, Resource: r.Resource, Rule: r}
		if r.Grade == flow.GradeThread {
			hs.threads = true
		}
		hs.checks = append(hs.checks, hc)
	}
}

// checkHotspot runs the resource's hot-parameter rules; an entry without
// arguments passes them all. A paced entry waits here, honouring ctx.
func (e *Engine) checkHotspot(hs *hotspotSet, en *Entry, args []any, now mono.Time) error {
	if len(args) == 0 {
		return nil
	}
	for _, hc := range hs.checks {
		d := hc.l.Check(args, now, en.count)
		if hc.shadow {
			if d.Blocked {
				e.shadowBlocked(en, now, hc.block)
			}
			continue
		}
		if d.Blocked {
			return hc.block
		}
		if d.Wait > 0 {
			en.waited = true
			if err := e.sleep(en.ctx, d.Wait); err != nil {
				return fmt.Errorf("core: %s: waiting for paramFlow rule: %w", hc.l.Rule().Resource, err)
			}
		}
	}
	return nil
}

// hotspotThreads reports an admitted (d = 1) or completed (d = -1) entry to
// the resource's thread-grade rules. Enter keeps the arguments in the
// Entry (a copy: one allocation) only for such rules.
func (hs *hotspotSet) hotspotThreads(en *Entry, d int) {
	if !hs.threads || len(en.args) == 0 {
		return
	}
	for _, hc := range hs.checks {
		if d > 0 {
			hc.l.Entered(en.args)
		} else {
			hc.l.Exited(en.args)
		}
	}
}

func describeHotspot(r hotspot.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "paramFlow rule paramIdx=%d %s %g", r.ParamIdx, r.Grade, r.Count)
	if r.Grade == flow.GradeQPS {
		fmt.Fprintf(&b, "/%ds", r.DurationInSec)
		if r.ControlBehavior != flow.Reject {
			fmt.Fprintf(&b, " %s", r.ControlBehavior)
		} else if r.BurstCount > 0 {
			fmt.Fprintf(&b, " burst=%d", r.BurstCount)
		}
	}
	if n := len(r.ParamFlowItemList); n > 0 {
		fmt.Fprintf(&b, " items=%d", n)
	}
	return b.String()
}
