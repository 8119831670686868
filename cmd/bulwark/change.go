package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

// outcome is what apply, edit, set, rollback, promote and abort print with
// --json.
type outcome struct {
	Source   string              `json:"source"`
	From     string              `json:"from"`
	To       string              `json:"to,omitempty"`
	Changes  []rulechange.Change `json:"changes"`
	Applied  bool                `json:"applied"`
	History  int                 `json:"history,omitempty"` // the entry recorded
	Conflict bool                `json:"conflict,omitempty"`
}

// review prints the plan's diff (unless --json).
func review(e *env, o *options, p *rulechange.Plan) {
	if o.json {
		return
	}
	w := e.stdout
	fmt.Fprintf(w, "--- %s\n+++ %s\n", rulechange.Header(p.BaseName, p.Base), p.NextName)
	if p.Replaced != nil {
		fmt.Fprintf(w, "the current document does not decode as %s rules (%v); it is replaced whole\n", p.Kind.Name(), p.Replaced)
	}
	printChanges(e, w, p.Changes)
	fmt.Fprintln(w, rulechange.Summary(p.Changes))
}

// carry shows the plan, asks (unless --yes), carries it out (a write with
// compare-and-set against the revision read, recorded in the history) and
// says what it did. verb is what a write does: "write" or "remove". A
// document changed in between is exit code 3 and nothing is written.
func carry(ctx context.Context, e *env, o *options, p *rulechange.Plan) error {
	review(e, o, p)
	out := outcome{Source: p.Center.Display(), From: p.Current.Revision, Changes: p.Changes}
	if out.Changes == nil {
		out.Changes = []rulechange.Change{}
	}
	remove := p.NextMissing
	nothing := "nothing written"
	if remove {
		nothing = "nothing removed"
	}
	if p.Empty() {
		if o.json {
			writeJSON(e.stdout, out)
		} else if !remove && !bytes.Equal(p.Current.Data, p.Next) {
			fmt.Fprintln(e.stdout, "the rules are the same (only the text differs): nothing written")
		}
		return nil
	}
	if o.dryRun {
		if o.json {
			writeJSON(e.stdout, out)
		} else {
			fmt.Fprintf(e.stdout, "dry run: %s\n", nothing)
		}
		return nil
	}
	question := fmt.Sprintf("write this to %s?", p.Center.Display())
	if remove {
		question = fmt.Sprintf("remove %s?", p.Center.Display())
	}
	if !o.yes && !confirm(ctx, e, question) {
		return failf(exitUsage, "not confirmed: %s (--yes skips the question)", nothing)
	}
	res, err := p.Carry(ctx, o.author, o.historyBytes)
	if errors.Is(err, datasource.ErrConflict) && res.Seq == 0 && res.Revision == "" {
		if o.json {
			out.Conflict = true
			writeJSON(e.stdout, out)
		}
		return failf(exitConflict, "%s changed since it was read at revision %s: %s; run it again to review", p.Center.Display(), rulechange.RevisionOf(p.Current), nothing)
	}
	if res.HistoryErr != nil {
		defer fmt.Fprintf(e.stderr, "bulwark %s: warning: %v\n", p.Command, res.HistoryErr)
	}
	if err != nil && res.Revision == "" {
		return err
	}
	out.Applied, out.To, out.History = true, res.Revision, res.Seq
	switch {
	case o.json:
		writeJSON(e.stdout, out)
	case remove:
		fmt.Fprintf(e.stdout, "removed: %s (revision %s)\n", p.Center.Display(), p.Current.Revision)
	default:
		fmt.Fprintf(e.stdout, "written: %s revision %s → %s\n", p.Center.Display(), rulechange.RevisionOf(p.Current), res.Revision)
	}
	return err
}

// printChanges writes changes one line each (rulechange.Change.Line),
// coloured by what happened to the rule.
func printChanges(e *env, w io.Writer, changes []rulechange.Change) {
	for _, c := range changes {
		color := "33"
		switch c.Op {
		case "added":
			color = "32"
		case "removed":
			color = "31"
		}
		fmt.Fprintln(w, e.paint(color, c.Line()))
	}
}
