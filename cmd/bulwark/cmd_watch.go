package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "watch", args: "SOURCE", summary: "print every change of the document as a diff, until interrupted",
		help: `Follows the document (push from the config center, and a periodic read in
case a push is lost) and prints every change with its time and revision, as
a rule-by-rule diff; a document that does not decode is reported with its
problems. --json prints one JSON object a line. Runs until interrupted
(Ctrl-C), then exits 0; exits 4 if the center cannot be reached at start.`,
		run: runWatch,
	})
}

// watchEvent is one change as watch --json prints it.
type watchEvent struct {
	Time     time.Time           `json:"time"`
	Revision string              `json:"revision"`
	Missing  bool                `json:"missing,omitempty"`
	Kind     string              `json:"kind,omitempty"`
	Changes  []rulechange.Change `json:"changes"`
	Error    string              `json:"error,omitempty"`
}

func runWatch(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["watch"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	pos, err := parse(e, c, fs, args, 1, 1)
	if err != nil {
		return err
	}
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	w := &watcher{e: e, o: &o, c: ctr}
	if w.last, err = ctr.Read(ctx); err != nil {
		return err
	}
	if !o.json {
		fmt.Fprintf(e.stdout, "watching %s at revision %s (Ctrl-C to stop)\n", ctr.Display(), rulechange.RevisionOf(w.last))
	}
	w.run(ctx)
	return nil
}

type watcher struct {
	e    *env
	o    *options
	c    *rulechange.Center
	last datasource.Snapshot
}

// run follows the document until ctx ends: a Watch (restarted from the last
// read when it breaks, after a growing pause), hints and a periodic read
// leading to a read, and a diff printed for every new revision. A source
// that cannot watch is polled every second.
func (w *watcher) run(ctx context.Context) {
	hint := make(chan struct{}, 1)
	pause, poll := 100*time.Millisecond, false
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(ctx)
		var done chan error // nil while polling
		every := time.Second
		if !poll {
			every = w.c.Reconcile()
			done = make(chan error, 1)
			from := w.last
			go func() {
				done <- w.c.Document().Watch(wctx, from, func(datasource.Snapshot) {
					select {
					case hint <- struct{}{}:
					default:
					}
				})
			}()
		}
		err, ended := w.follow(ctx, hint, done, every)
		cancel()
		if done != nil && !ended {
			<-done
		}
		if !ended || ctx.Err() != nil {
			return
		}
		if errors.Is(err, datasource.ErrWatchUnsupported) {
			poll = true
			continue
		}
		fmt.Fprintf(w.e.stderr, "%s: watch broke (%v): reading again\n", now(), err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
		w.show(ctx)
	}
}

// follow reads the document after every hint and every tick until ctx ends
// or the Watch returns (ended, with its error).
func (w *watcher) follow(ctx context.Context, hint <-chan struct{}, done <-chan error, every time.Duration) (err error, ended bool) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, false
		case <-hint:
			w.show(ctx)
		case <-tick.C:
			w.show(ctx)
		case err := <-done:
			return err, true
		}
	}
}

// show reads the document and prints what changed since the last read.
func (w *watcher) show(ctx context.Context) {
	s, err := w.c.Read(ctx)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(w.e.stderr, "%s: %v\n", now(), err)
		}
		return
	}
	if s.Missing == w.last.Missing && s.Revision == w.last.Revision {
		return
	}
	prev := w.last
	w.last = s
	ev := watchEvent{Time: time.Now().UTC().Truncate(time.Millisecond), Revision: s.Revision, Missing: s.Missing, Changes: []rulechange.Change{}}
	k, err := pickKind(w.o, s.Data, w.c.Name())
	if s.Missing {
		k, err = pickKind(w.o, prev.Data, w.c.Name())
	}
	if err == nil {
		ev.Kind = k.Name()
		var to, from []rulechange.Rule
		if to, err = k.Rules(s.Data, s.Missing); err == nil {
			from, _ = k.Rules(prev.Data, prev.Missing) // an invalid previous document: everything is new
			ev.Changes = rulechange.Diff(from, to)
		}
	}
	if err != nil {
		ev.Error = err.Error()
	}
	if w.o.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintln(w.e.stdout, string(b))
		return
	}
	state := "revision " + s.Revision
	if s.Missing {
		state = "deleted"
	}
	fmt.Fprintf(w.e.stdout, "%s %s %s\n", ev.Time.Format(time.RFC3339Nano), w.c.Display(), state)
	if ev.Error != "" {
		fmt.Fprintf(w.e.stdout, "  invalid document (services keep their rules): %s\n", ev.Error)
		return
	}
	printChanges(w.e, w.e.stdout, ev.Changes)
	fmt.Fprintln(w.e.stdout, rulechange.Summary(ev.Changes))
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }
