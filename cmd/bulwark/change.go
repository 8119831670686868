package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
)

// proposal is a new document for a center, reviewed before it is written.
type proposal struct {
	c       *center
	k       *kind
	cur     datasource.Snapshot // what was read; the write is compare-and-set on its revision
	next    []byte              // the new document
	name    string              // where next comes from, for the diff header
	command string              // recorded in the history: "apply", "edit", "set", "rollback 3"
	// against, when set, is what the diff is against instead of cur (the
	// base, for the first apply --canary of a group); the write is still
	// compare-and-set on cur's revision.
	against *datasource.Snapshot
	overlay string // the canary group whose overlay c.doc is, for the history
	// nextMissing: the proposal is that the document be gone (abort shows
	// the base an overlay's instances return to, which may not exist).
	nextMissing bool
}

// outcome is what apply, edit, set and rollback print with --json.
type outcome struct {
	Source   string   `json:"source"`
	From     string   `json:"from"`
	To       string   `json:"to,omitempty"`
	Changes  []change `json:"changes"`
	Applied  bool     `json:"applied"`
	History  int      `json:"history,omitempty"` // the entry recorded
	Conflict bool     `json:"conflict,omitempty"`
}

// review diffs the proposal against the document read and prints the diff.
// replaced says the current document does not decode as k and is replaced
// whole.
func (p *proposal) review(e *env, o *options, w io.Writer) (changes []change, replaced bool, err error) {
	to, err := rulesOf(p.k, p.next, p.nextMissing)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", p.name, err)
	}
	base, baseName := p.cur, p.c.display
	if p.against != nil {
		base, baseName = *p.against, p.c.baseDisplay
	}
	from, ferr := rulesOf(p.k, base.Data, base.Missing)
	if ferr != nil {
		replaced = true
		from = nil
	}
	changes = diffRules(from, to)
	if o.json {
		return changes, replaced, nil
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", header(baseName, base), p.name)
	if replaced {
		fmt.Fprintf(w, "the current document does not decode as %s rules (%v); it is replaced whole\n", p.k.name, ferr)
	}
	printChanges(e, w, changes)
	fmt.Fprintln(w, summary(changes))
	return changes, replaced, nil
}

// carry reviews the proposal, asks (unless --yes), writes it with
// compare-and-set against the revision read, and records it in the history.
// A document changed in between is exit code 3 and nothing is written.
func (p *proposal) carry(ctx context.Context, e *env, o *options) error {
	changes, replaced, err := p.review(e, o, e.stdout)
	if err != nil {
		return err
	}
	out := outcome{Source: p.c.display, From: p.cur.Revision, Changes: changes}
	if out.Changes == nil {
		out.Changes = []change{}
	}
	if len(changes) == 0 && !replaced && !p.cur.Missing {
		if o.json {
			writeJSON(e.stdout, out)
		}
		if !o.json && !bytes.Equal(p.cur.Data, p.next) {
			fmt.Fprintln(e.stdout, "the rules are the same (only the text differs): nothing written")
		}
		return nil
	}
	if o.dryRun {
		if o.json {
			writeJSON(e.stdout, out)
		} else {
			fmt.Fprintln(e.stdout, "dry run: nothing written")
		}
		return nil
	}
	if !o.yes && !confirm(ctx, e, fmt.Sprintf("write this to %s?", p.c.display)) {
		return failf(exitUsage, "not confirmed: nothing written (--yes skips the question)")
	}
	snap, err := p.c.write(ctx, p.c.doc, p.next, p.cur.Revision, p.c.display)
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitConflict {
		if o.json {
			out.Conflict = true
			writeJSON(e.stdout, out)
		}
		return failf(exitConflict, "%s changed since it was read at revision %s: nothing written; run it again to review the new diff", p.c.display, revisionOf(p.cur))
	}
	if err != nil {
		return err
	}
	out.Applied, out.To = true, snap.Revision
	var previous *string
	if !p.cur.Missing {
		s := string(p.cur.Data)
		previous = &s
	}
	seq, herr := record(ctx, p.c, entry{Time: time.Now().UTC().Truncate(time.Second), Author: o.author, Command: p.command,
		From: p.cur.Revision, To: snap.Revision, Kind: p.k.name, Diff: diffLines(changes), Previous: previous, Overlay: p.overlay}, o.historyBytes)
	out.History = seq
	if o.json {
		writeJSON(e.stdout, out)
	} else {
		fmt.Fprintf(e.stdout, "written: %s revision %s → %s\n", p.c.display, revisionOf(p.cur), snap.Revision)
	}
	if herr != nil {
		fmt.Fprintf(e.stderr, "bulwark %s: warning: written, but not recorded in the history (%s): %v\n", p.command, p.c.histName, herr)
	}
	return nil
}
