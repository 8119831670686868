package follow

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
)

// stamp is the time format of every printed line.
const stamp = "15:04:05.000"

// Rules prints every change of engine's flow rules to out until cancel is
// called:
//
//	15:04:05.000 rules changed: 1 in force
//	  - GET /orders: 10 QPS
//	  + GET /orders: 20 QPS
//
// A rule whose threshold changed shows as removed (old form) and added
// (new form).
func Rules(out io.Writer, engine *core.Engine) (cancel func()) {
	return engine.Flow().OnChange(func(ch core.RuleChange[flow.Rule]) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s rules changed: %d in force\n", ch.Time.Format(stamp), len(ch.New))
		for _, r := range ch.Removed {
			fmt.Fprintf(&b, "  - %s\n", describe(r))
		}
		for _, r := range ch.Added {
			fmt.Fprintf(&b, "  + %s\n", describe(r))
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
// It returns nil when ctx ends, or the error of a failed write to out.
func Status(ctx context.Context, out io.Writer, ds interface{ Status() datasource.Status }, every time.Duration) error {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	last := ""
	for {
		if s := summary(ds.Status()); s != last {
			if _, err := fmt.Fprintf(out, "%s status: %s\n", time.Now().Format(stamp), s); err != nil {
				return err
			}
			last = s
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
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
	if r.LimitApp != "" && r.LimitApp != "default" {
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
