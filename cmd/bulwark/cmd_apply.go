package main

import (
	"context"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "apply", args: "SOURCE FILE", summary: "validate, review and write a document with compare-and-set",
		help: `Validates FILE (or "-"), shows the rule-by-rule diff against the document
at SOURCE, asks for confirmation (--yes skips it) and writes FILE as it is,
with compare-and-set against the revision it read: when someone changed the
document in between, nothing is written and the exit code is 3. --dry-run
stops after the diff. The change is recorded in the history beside the
document (bulwark history SOURCE).

With --canary GROUP, FILE is written to the overlay of GROUP beside the
document (its key, path or dataId followed by ".overlay.GROUP"), which the instances started with
datasource.WithOverlay(GROUP) follow while it exists; the document itself
is left alone. The diff is against the overlay, or against the document
when the group has no overlay yet; the compare-and-set is on the overlay's
revision; the change is recorded in the document's history as
"apply --canary GROUP". Then bulwark promote or bulwark abort.

Exit codes: 0 written (or nothing to change), 1 FILE invalid, 2 not
confirmed, 3 conflict, 4 unreachable.`,
		run: runApply,
	})
}

func runApply(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["apply"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	changeFlags(fs, &o)
	var group string
	fs.StringVar(&group, "canary", "", "write the overlay of this canary group instead of the document (see bulwark promote, abort, status)")
	pos, err := parse(e, c, fs, args, 2, 2)
	if err != nil {
		return err
	}
	if pos[1] == "-" && !o.yes && !o.dryRun {
		return failf(exitUsage, "FILE is standard input, so the confirmation cannot be read from it: pass --yes (or --dry-run)")
	}
	next, err := readInput(e, pos[1])
	if err != nil {
		return err
	}
	k, err := pickKind(&o, next, pos[1])
	if err != nil {
		return err
	}
	if err := mustBeValid(e, k, pos[1], next); err != nil {
		return err
	}
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	p, err := rulechange.PlanApply(ctx, ctr, k, next, pos[1], group)
	if err != nil {
		return err
	}
	defer p.Close()
	return carry(ctx, e, &o, p)
}
