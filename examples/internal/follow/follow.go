package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
)

// stamp is the time format of every printed line.
const stamp = "15:04:05.000"

// Rules prints every change of engine's flow rules to out until cancel is
// called, from the engine's rule events (core.RuleEvent):
//
//	15:04:05.000 rules changed: 2 in force
//	  ~ GET /orders: count 20 → 5, controlBehavior reject → warmUp, warmUpPeriodSec 0 → 10
//	  - GET /inventory: grade=thread count=2
//	  + POST /orders: count=5
//
// A rule that changed (the same resource in the old and the new list, the
// closest one when there are several) is printed field by field, old →
// new, with the fields' JSON names; other rules are printed removed (-) or
// added (+), by the fields that differ from Java's defaults.
func Rules(out io.Writer, engine *core.Engine) (cancel func()) {
	return engine.OnRuleEvent(func(ev core.RuleEvent) {
		if ev.Kind != "flow" || ev.Rejected {
			return // rejections are reported from the datasource's Status
		}
		var b strings.Builder
		if ev.Rules == 0 {
			fmt.Fprintf(&b, "%s rules changed: none in force, every call passes\n", ev.Time.Format(stamp))
		} else {
			fmt.Fprintf(&b, "%s rules changed: %d in force\n", ev.Time.Format(stamp), ev.Rules)
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

// Status checks ds's Status every so often and prints it in one line
// whenever it changed, until ctx ends:
//
//	15:04:05.000 status: revision 42, watching
//	15:04:07.120 status: revision 42, watching, error (1 failures): decode revision 43: ...
//
// and says what a change of the Status means for the rules of engine:
//
//	15:04:07.120 document rejected: the 2 rules in force stay
//	15:04:09.500 document valid again, rules unchanged (2 in force)
//	15:04:12.000 warning: the document was deleted: no rules in force, every call passes
//
// The first Status seen is printed without such a line: the caller reports
// how Start went. Status returns nil when ctx ends, or the error of a
// failed write to out.
func Status(ctx context.Context, out io.Writer, engine *core.Engine, ds interface{ Status() datasource.Status }, every time.Duration) error {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	var (
		last       string
		prev       datasource.Status
		first      = true
		beforeFail []flow.Rule // the rules in force when the current run of failures began
	)
	for {
		st := ds.Status()
		var lines []string
		if s := summary(st); s != last || first {
			lines = append(lines, "status: "+s)
			last = s
		}
		if !first {
			lines = append(lines, events(prev, st, engine.Flow().Rules(), beforeFail)...)
		}
		if st.Err != nil && (prev.Err == nil || first) {
			beforeFail = engine.Flow().Rules()
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
func events(prev, st datasource.Status, now, beforeFail []flow.Rule) []string {
	var lines []string
	inForce, kept := "no rules in force, every call passes", "no rules in force, every call passes"
	if len(now) > 0 {
		inForce = fmt.Sprintf("the %d rules in force stay", len(now))
		kept = fmt.Sprintf("its %d rules are kept", len(now))
	}
	wasKind, kind := errKind(prev.Err), errKind(st.Err)
	switch {
	case kind == partial && (wasKind != partial || prev.Err.Error() != st.Err.Error()):
		lines = append(lines, fmt.Sprintf("warning: document applied in part: %d rules in force, the invalid ones skipped", len(now)))
	case kind == rejected && (wasKind != rejected || prev.Err.Error() != st.Err.Error()):
		lines = append(lines, "document rejected: "+inForce)
	case kind == unreachable && wasKind != unreachable:
		lines = append(lines, "source unreachable: "+inForce)
	case kind == ok && wasKind != ok:
		what := "document valid again"
		if wasKind == unreachable {
			what = "source answers again"
		}
		if slices.Equal(now, beforeFail) {
			what += fmt.Sprintf(", rules unchanged (%d in force)", len(now))
		}
		lines = append(lines, what)
	}
	if st.Missing && !prev.Missing {
		if prev.Revision != "" {
			lines = append(lines, "warning: the document was deleted: "+kept)
		} else {
			lines = append(lines, "warning: the document does not exist: "+inForce)
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
		parts = append(parts, fmt.Sprintf("error (%d failures): %s", st.Failures, withoutName(st.Name, st.Err)))
	}
	return strings.Join(parts, ", ")
}

// withoutName drops the "datasource: <name>: " prefix of a datasource
// error: the example prints what it follows already.
func withoutName(name string, err error) string {
	return strings.TrimPrefix(err.Error(), "datasource: "+name+": ")
}
