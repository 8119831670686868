package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
	"github.com/bulwark-go/bulwark/datasource"
)

// stamp is the time format of every printed line.
const stamp = "15:04:05.000"

// Rules prints every change of engine's rules, of every kind, to out
// until cancel is called, from the engine's rule events (core.RuleEvent),
// one block per kind, named as the rule-set document names it:
//
//	15:04:05.000 flow rules changed: 2 in force
//	  ~ GET /orders: count 20 → 5, controlBehavior reject → warmUp, warmUpPeriodSec 0 → 10
//	  - GET /inventory: grade=thread count=2
//	  + POST /orders: count=5
//	15:04:05.000 paramFlow rules changed: 1 in force
//	  + GET /orders/{id}: count=2 durationInSec=1
//
// A rule that changed (the same resource in the old and the new list, the
// closest one when there are several) is printed field by field, old →
// new, with the fields' JSON names and enums by name; other rules are
// printed removed (-) or added (+), by the fields that differ from Java's
// defaults. Rejected documents are not printed here: [Status] prints them
// with their reason.
func Rules(out io.Writer, engine *core.Engine) (cancel func()) {
	return engine.OnRuleEvent(func(ev core.RuleEvent) {
		if ev.Rejected {
			return // rejections are reported from the datasource's Status
		}
		var b strings.Builder
		switch {
		case ev.Rules > 0:
			fmt.Fprintf(&b, "%s %s rules changed: %d in force\n", ev.Time.Format(stamp), ev.Kind, ev.Rules)
		case rulesOf(engine).count() == 0:
			fmt.Fprintf(&b, "%s %s rules changed: none in force, every call passes\n", ev.Time.Format(stamp), ev.Kind)
		default:
			fmt.Fprintf(&b, "%s %s rules changed: none in force\n", ev.Time.Format(stamp), ev.Kind)
		}
		for _, group := range []struct {
			mark  string
			lines []string
		}{{"~", ev.Changed}, {"-", ev.Removed}, {"+", ev.Added}} {
			for _, l := range group.lines {
				fmt.Fprintf(&b, "  %s %s\n", group.mark, l)
			}
		}
		io.WriteString(out, b.String()) // one write: it does not interleave with a status line
	})
}

// inForce is the rules of every kind an engine holds.
type inForce struct {
	flow      []flow.Rule
	degrade   []circuitbreaker.Rule
	system    []system.Rule
	authority []authority.Rule
	paramFlow []hotspot.Rule
}

func rulesOf(e *core.Engine) inForce {
	return inForce{e.Flow().Rules(), e.CircuitBreaker().Rules(), e.System().Rules(), e.Authority().Rules(), e.Hotspot().Rules()}
}

func (r inForce) count() int {
	return len(r.flow) + len(r.degrade) + len(r.system) + len(r.authority) + len(r.paramFlow)
}

// same says whether a and b hold the same rules.
func same(a, b inForce) bool {
	return a.count() == b.count() && reflect.DeepEqual(a, b)
}

// rules is n rules, with the unit: "1 rule", "3 rules".
func rules(n int) string {
	if n == 1 {
		return "1 rule"
	}
	return fmt.Sprintf("%d rules", n)
}

// Baseline is what Status reports changes from: ds's Status and the
// engine's rules, read right after Start, when the caller says how Start
// went. A change that lands between that report and Status's first
// reading is then reported too, not taken as the state to start from.
type Baseline struct {
	status datasource.Status
	rules  inForce
}

// BaselineOf reads ds's Status and engine's rules now.
func BaselineOf(engine *core.Engine, ds interface{ Status() datasource.Status }) Baseline {
	return Baseline{ds.Status(), rulesOf(engine)}
}

// Missing reports whether the document was missing at the baseline: what
// the caller warns of after Start.
func (b Baseline) Missing() bool { return b.status.Missing }

// Status checks ds's Status every so often and prints it in one line
// whenever it changed, until ctx ends:
//
//	15:04:05.000 status: revision 42, watching
//	15:04:07.120 status: revision 42, watching, error (1 failure): decode revision 43: ...
//
// and says what a change of the Status since base means for the rules of
// engine:
//
//	15:04:07.120 document rejected: the 2 rules in force stay
//	15:04:09.500 document valid again, rules unchanged (2 in force)
//	15:04:12.000 warning: the document was deleted: no rules in force, every call passes
//
// The first Status is printed whatever it is; base (from BaselineOf right
// after Start) is what the caller already reported on, so nothing is said
// of it twice. Status returns nil when ctx ends, or the error of a failed
// write to out.
func Status(ctx context.Context, out io.Writer, engine *core.Engine, ds interface{ Status() datasource.Status }, base Baseline, every time.Duration) error {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	var (
		last       string
		prev       = base.status
		first      = true
		beforeFail = base.rules // the rules in force when the current run of failures began
	)
	for {
		st := ds.Status()
		var lines []string
		if s := summary(st); s != last || first {
			lines = append(lines, "status: "+s)
			last = s
		}
		lines = append(lines, events(prev, st, rulesOf(engine), beforeFail)...)
		if st.Err != nil && prev.Err == nil {
			beforeFail = rulesOf(engine)
		}
		prev, first = st, false
		for _, l := range lines {
			if _, err := fmt.Fprintf(out, "%s %s\n", time.Now().Format(stamp), l); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// events says what the change from prev to st means for the rules in
// force (now) and the rules in force before the failures began
// (beforeFail).
func events(prev, st datasource.Status, now, beforeFail inForce) []string {
	var lines []string
	n := now.count()
	stay, kept := "no rules in force, every call passes", "no rules in force, every call passes"
	switch {
	case n == 1:
		stay, kept = "the 1 rule in force stays", "its 1 rule is kept"
	case n > 1:
		stay, kept = fmt.Sprintf("the %d rules in force stay", n), fmt.Sprintf("its %d rules are kept", n)
	}
	wasKind, kind := errKind(prev.Err), errKind(st.Err)
	switch {
	case kind == partial && (wasKind != partial || prev.Err.Error() != st.Err.Error()):
		lines = append(lines, fmt.Sprintf("warning: document applied in part: %s in force, the invalid ones skipped", rules(n)))
	case kind == rejected && (wasKind != rejected || prev.Err.Error() != st.Err.Error()):
		lines = append(lines, "document rejected: "+stay)
	case kind == unreachable && wasKind != unreachable:
		lines = append(lines, "source unreachable: "+stay)
	case kind == ok && wasKind != ok:
		what := "document valid again"
		if wasKind == unreachable {
			what = "source answers again"
		}
		if same(now, beforeFail) {
			what += fmt.Sprintf(", rules unchanged (%d in force)", n)
		}
		lines = append(lines, what)
	}
	if st.Missing && !prev.Missing {
		if prev.Revision != "" {
			lines = append(lines, "warning: the document was deleted: "+kept)
		} else {
			lines = append(lines, "warning: the document does not exist: "+stay)
		}
	}
	return lines
}

// Kinds of Status.Err.
const (
	ok          = iota // no error
	unreachable        // the source could not be read
	rejected           // a document that does not decode or validate; nothing applied
	partial            // a lenient manager applied the valid rules
)

func errKind(err error) int {
	var verr *core.ValidationError
	var derr *converter.DecodeError
	switch {
	case err == nil:
		return ok
	case errors.As(err, &verr) && verr.Applied:
		return partial
	case errors.As(err, &verr), errors.As(err, &derr),
		errors.Is(err, converter.ErrSyntax), errors.Is(err, converter.ErrInvalid),
		errors.Is(err, datasource.ErrTooLarge):
		return rejected
	}
	return unreachable
}

// EnvOr returns the environment variable key, or def when it is empty.
func EnvOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// summary sums a Status up in one line, without times, so that it changes
// only when something happens. Long revisions (hashes) are cut to 12
// characters.
func summary(st datasource.Status) string {
	var parts []string
	switch {
	case st.Missing:
		parts = append(parts, "document missing")
	case st.Revision != "":
		parts = append(parts, "revision "+st.Revision[:min(12, len(st.Revision))])
	default:
		parts = append(parts, "nothing applied")
	}
	if st.FromCache {
		parts = append(parts, "from cache")
	}
	if st.Watching {
		parts = append(parts, "watching")
	} else if st.WatchErr != nil {
		parts = append(parts, "not watching: "+withoutName(st.Name, st.WatchErr))
	}
	if st.Err != nil {
		parts = append(parts, fmt.Sprintf("error (%s): %s", failures(st.Failures), withoutName(st.Name, st.Err)))
	}
	return strings.Join(parts, ", ")
}

// failures is n failures, with the unit.
func failures(n int) string {
	if n == 1 {
		return "1 failure"
	}
	return fmt.Sprintf("%d failures", n)
}

// withoutName drops the "datasource: <name>: " prefix of a datasource
// error: the example prints what it follows already.
func withoutName(name string, err error) string {
	return strings.TrimPrefix(err.Error(), "datasource: "+name+": ")
}
