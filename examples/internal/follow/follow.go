package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/rule"
	"github.com/bulwark-go/bulwark/datasource"
)

// stamp is the time format of every printed line.
const stamp = "15:04:05.000"

// Rules prints every change of engine's flow rules to out until cancel is
// called:
//
//	15:04:05.000 rules changed: 2 in force
//	  ~ GET /orders: count 20 → 5, controlBehavior reject → warmUp, warmUpPeriodSec 0 → 10
//	  - GET /inventory: 2 thread
//	  + POST /orders: 5 QPS
//
// A rule that changed (the same resource, preferably the same origin, in
// the old and the new list) is printed field by field, old → new, with the
// fields' JSON names; other rules are printed whole, removed (-) or added
// (+).
func Rules(out io.Writer, engine *core.Engine) (cancel func()) {
	return engine.Flow().OnChange(func(ch core.RuleChange[flow.Rule]) {
		var b strings.Builder
		if len(ch.New) == 0 {
			fmt.Fprintf(&b, "%s rules changed: none in force, every call passes\n", ch.Time.Format(stamp))
		} else {
			fmt.Fprintf(&b, "%s rules changed: %d in force\n", ch.Time.Format(stamp), len(ch.New))
		}
		for _, l := range changeLines(ch.Removed, ch.Added) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		io.WriteString(out, b.String()) // one write: it does not interleave with a status line
	})
}

// changeLines pairs each removed rule with an added rule of the same
// resource (same origin first) and describes the pair field by field; the
// rules left over are described whole.
func changeLines(removed, added []flow.Rule) []string {
	used := make([]bool, len(added))
	var changed, gone []string
	pending := removed
	for _, same := range []func(a, b flow.Rule) bool{
		func(a, b flow.Rule) bool { return a.Resource == b.Resource && origin(a) == origin(b) },
		func(a, b flow.Rule) bool { return a.Resource == b.Resource },
	} {
		var rest []flow.Rule
		for _, r := range pending {
			i := -1
			for j, a := range added {
				if !used[j] && same(r, a) {
					i = j
					break
				}
			}
			if i < 0 {
				rest = append(rest, r)
				continue
			}
			used[i] = true
			changed = append(changed, "~ "+r.Resource+": "+strings.Join(fieldDiff("", reflect.ValueOf(r), reflect.ValueOf(added[i])), ", "))
		}
		pending = rest
	}
	for _, r := range pending {
		gone = append(gone, "- "+describe(r))
	}
	lines := append(changed, gone...)
	for i, a := range added {
		if !used[i] {
			lines = append(lines, "+ "+describe(a))
		}
	}
	return lines
}

func origin(r flow.Rule) string {
	if r.LimitApp == "" {
		return rule.LimitAppDefault
	}
	return r.LimitApp
}

// fieldDiff lists the fields of two structs of one type that differ, as
// "name old → new", named as in the JSON document (nested: "clusterConfig.flowId").
func fieldDiff(prefix string, a, b reflect.Value) []string {
	var out []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		name := prefix + jsonName(f.Name)
		x, y := a.Field(i), b.Field(i)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, fieldDiff(name+".", x, y)...)
		} else if !x.Equal(y) {
			out = append(out, fmt.Sprintf("%s %s → %s", name, show(x), show(y)))
		}
	}
	return out
}

// jsonName turns a Go field name into Java's JSON name: LimitApp →
// limitApp, FlowID → flowId.
func jsonName(goName string) string {
	s := strings.TrimSuffix(goName, "ID")
	if s != goName {
		s += "Id"
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

func show(v reflect.Value) string {
	if v.Kind() == reflect.String {
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface()) // enums print their names
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

// describe prints a rule the way an operator reads it.
func describe(r flow.Rule) string {
	s := fmt.Sprintf("%s: %v %s", r.Resource, r.Count, r.Grade)
	if origin(r) != rule.LimitAppDefault {
		s += " for " + r.LimitApp
	}
	if r.ControlBehavior != 0 {
		s += ", " + r.ControlBehavior.String()
	}
	return s
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
