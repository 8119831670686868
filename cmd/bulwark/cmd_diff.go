package main

import (
	"context"
	"fmt"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "diff", args: "SOURCE FILE", summary: "compare a document with a file, rule by rule",
		help: `Compares the document at SOURCE with FILE (or "-", or another source), rule by
rule: rules are matched by resource, limitApp and the kind's other
identifying fields (flow: grade, strategy, refResource; degrade: grade;
paramFlow: paramIdx, grade; authority: resource; system rules by position),
and each difference is one line:

  ~ GET /orders: count 100 → 200
  + GET /items: count 5
  - GET /old: count 10

Exit code 0 when the rules are the same, 1 when they differ (or FILE is
invalid). Made for a CI review of a change before it is applied.`,
		run: runDiff,
	})
}

func runDiff(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["diff"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	pos, err := parse(e, c, fs, args, 2, 2)
	if err != nil {
		return err
	}
	next, missingNext, err := load(ctx, e, pos[1], &o)
	if err != nil {
		return err
	}
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	cur, err := ctr.Read(ctx)
	if err != nil {
		return err
	}
	k, err := pickKind(&o, next, pos[1])
	if missingNext {
		k, err = pickKind(&o, cur.Data, ctr.Name())
	}
	if err != nil {
		return err
	}
	to, err := k.Rules(next, missingNext)
	if err != nil {
		printFindings(e.stderr, rulechange.Findings(pos[1], err, nil), false)
		return failf(exitInvalid, "%s is not a valid %s document", pos[1], k.Name())
	}
	from, err := k.Rules(cur.Data, cur.Missing)
	if err != nil {
		printFindings(e.stderr, rulechange.Findings(ctr.Display(), err, nil), false)
		return failf(exitInvalid, "%s is not a valid %s document", ctr.Display(), k.Name())
	}
	changes := rulechange.Diff(from, to)
	if o.json {
		if changes == nil {
			changes = []rulechange.Change{}
		}
		writeJSON(e.stdout, struct {
			Source   string              `json:"source"`
			Revision string              `json:"revision"`
			File     string              `json:"file"`
			Kind     string              `json:"kind"`
			Changes  []rulechange.Change `json:"changes"`
		}{ctr.Display(), cur.Revision, pos[1], k.Name(), changes})
	} else {
		fmt.Fprintf(e.stdout, "--- %s\n+++ %s\n", rulechange.Header(ctr.Display(), cur), pos[1])
		printChanges(e, e.stdout, changes)
		fmt.Fprintln(e.stdout, rulechange.Summary(changes))
	}
	if len(changes) > 0 {
		return silent(exitInvalid)
	}
	return nil
}
