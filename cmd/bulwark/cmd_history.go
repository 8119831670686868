package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "history", args: "SOURCE", summary: "list the recorded changes: who, when, from which revision to which, the diff",
		help: `Lists the changes made to the document with apply, edit, set and rollback,
oldest first: number, time, author (--author, default user@host), command,
revisions, and the rule diff. The history is kept beside the document in the
same config center (key + ".history"; Redis: key + ":history"), shared by
everyone who changes the document with this tool, the last 100 changes.
--json prints it whole, previous documents included.`,
		run: runHistory,
	})
	register(&command{
		name: "rollback", args: "SOURCE [N]", summary: "write back the document a recorded change replaced",
		help: `Writes back the document that change N of the history replaced (default: the
last change), after showing the diff against the current document and asking
(--yes skips it), with compare-and-set: when someone changed the document in
between, nothing is written and the exit code is 3. The rollback is recorded
in the history too. A change that created the document rolls back to an
empty rule list.`,
		run: runRollback,
	})
}

func runHistory(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["history"]
	fs := newFlags(c)
	connFlags(fs, &o)
	jsonFlag(fs, &o)
	var last int
	fs.IntVar(&last, "n", 0, "show only the last n changes (0: all)")
	pos, err := parse(e, c, fs, args, 1, 1)
	if err != nil {
		return err
	}
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	entries, err := ctr.History(ctx)
	if err != nil {
		return err
	}
	if last > 0 && len(entries) > last {
		entries = entries[len(entries)-last:]
	}
	if o.json {
		if entries == nil {
			entries = []rulechange.Entry{}
		}
		writeJSON(e.stdout, entries)
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintf(e.stdout, "no recorded changes of %s (%s)\n", ctr.Display(), ctr.HistoryName())
		return nil
	}
	for _, en := range entries {
		from := en.From
		if en.Previous == nil {
			from = "none"
		}
		to := en.To
		if to == "" {
			to = "removed"
		}
		fmt.Fprintf(e.stdout, "%s %s  %s  %s  revision %s → %s\n", e.paint("1", fmt.Sprintf("#%d", en.Seq)),
			en.Time.Format("2006-01-02 15:04:05Z07:00"), en.Author, en.Command, from, to)
		for _, l := range en.Diff {
			fmt.Fprintf(e.stdout, "    %s\n", l)
		}
	}
	return nil
}

func runRollback(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["rollback"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	changeFlags(fs, &o)
	pos, err := parse(e, c, fs, args, 1, 2)
	if err != nil {
		return err
	}
	seq := 0
	if len(pos) == 2 {
		seq, err = strconv.Atoi(strings.TrimPrefix(pos[1], "#"))
		if err != nil || seq <= 0 {
			return failf(exitUsage, "N must be a change number from bulwark history, not %q", pos[1])
		}
	}
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	p, err := rulechange.PlanRollback(ctx, ctr, o.kind, seq)
	if err != nil {
		return err
	}
	return carry(ctx, e, &o, p)
}
