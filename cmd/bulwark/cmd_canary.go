package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
)

func init() {
	register(&command{
		name: "promote", args: "SOURCE GROUP", summary: "write a canary group's overlay as the document, then remove the overlay",
		help: `Reads the overlay of canary GROUP beside the document at SOURCE (written by
bulwark apply --canary GROUP), validates it, shows the rule-by-rule diff
from the document to the overlay, asks for confirmation (--yes skips it) and
writes the overlay's document as the document, with compare-and-set against
the document's revision read: when someone changed the document in between,
nothing is written and the exit code is 3. Then it removes the overlay,
compare-and-set against the overlay's revision read, and every instance
follows the document. Recorded in the document's history as "promote GROUP".

Exit codes: 0 promoted, 1 the overlay is invalid, 2 no overlay or not
confirmed, 3 conflict (the document, or the overlay after the document was
written), 4 unreachable.`,
		run: runPromote,
	})
	register(&command{
		name: "abort", args: "SOURCE GROUP", summary: "remove a canary group's overlay: its instances return to the document",
		help: `Shows what removing the overlay of canary GROUP beside the document at SOURCE
changes for the instances of GROUP (the diff from the overlay back to the
document), asks for confirmation (--yes skips it) and removes the overlay,
compare-and-set against its revision read: when someone changed the overlay
in between, nothing is removed and the exit code is 3. The document is not
touched. Recorded in the document's history as "abort GROUP", with the
overlay's document. No overlay: nothing to do, exit code 0.

Exit codes: 0 removed (or nothing to remove), 2 not confirmed, 3 conflict,
4 unreachable.`,
		run: runAbort,
	})
	register(&command{
		name: "status", args: "SOURCE [--groups GROUP,...]", summary: "list the canary overlays of a document",
		help: `Lists the canary overlays beside the document at SOURCE (each written by
bulwark apply --canary GROUP, at the document's key, path or dataId followed
by ".overlay.GROUP"): for each group, the overlay's revision and how its
rules differ from the document's; "no overlays" when there is none. The
overlays are found by listing the center: the file's directory, an etcd
prefix range, a Redis SCAN (every master of a cluster), the ZooKeeper
parent's children, a Nacos config search.

A Nacos-protocol server without config search (PolarisMesh) cannot list
them: then the groups come from the document's history (every apply
--canary and abort records its group), each read to see whether its
overlay still exists, and a note on stderr says so: an overlay that another
tool wrote, or whose records left the history, is not shown there. Name
the groups with --groups to look for them.

With --groups GROUP,... only those groups are shown, each with its overlay
or "no overlay", without listing the center.

Exit codes: 0 ok, 2 usage, 4 unreachable.`,
		run: runStatus,
	})
}

// overlayCmd is where promote and abort start: their flags parsed, SOURCE
// and the overlay of GROUP beside it open, and the overlay read. close
// closes both centers.
type overlayCmd struct {
	o       options
	group   string
	ctr, ov *center
	over    datasource.Snapshot
	close   func()
}

// openOverlayCmd parses the arguments of the command name (SOURCE GROUP),
// opens both centers and reads the overlay.
func openOverlayCmd(ctx context.Context, e *env, name string, args []string) (*overlayCmd, error) {
	oc := &overlayCmd{}
	c := commands[name]
	fs := newFlags(c)
	connFlags(fs, &oc.o)
	kindFlag(fs, &oc.o)
	jsonFlag(fs, &oc.o)
	changeFlags(fs, &oc.o)
	pos, err := parse(e, c, fs, args, 2, 2)
	if err != nil {
		return nil, err
	}
	oc.group = pos[1]
	if oc.ctr, err = openCenter(ctx, pos[0], &oc.o); err != nil {
		return nil, err
	}
	if oc.ov, err = oc.ctr.overlayOf(oc.group); err != nil {
		oc.ctr.Close()
		return nil, err
	}
	oc.close = func() { oc.ov.closeOverlay(); oc.ctr.Close() }
	if oc.over, err = oc.ov.read(ctx); err != nil {
		oc.close()
		return nil, err
	}
	return oc, nil
}

func runPromote(ctx context.Context, e *env, args []string) error {
	oc, err := openOverlayCmd(ctx, e, "promote", args)
	if err != nil {
		return err
	}
	defer oc.close()
	o, group, ctr, ov, over := oc.o, oc.group, oc.ctr, oc.ov, oc.over
	if over.Missing {
		return failf(exitUsage, "canary group %s has no overlay at %s: nothing to promote", group, ctr.display)
	}
	k, err := pickKind(&o, over.Data, ctr.name)
	if err != nil {
		return err
	}
	if err := mustBeValid(e, k, ov.display, over.Data); err != nil {
		return err
	}
	cur, err := ctr.read(ctx)
	if err != nil {
		return err
	}
	p := &proposal{c: ctr, k: k, cur: cur, next: over.Data, name: header(ov.display, over), command: "promote " + group}
	if err := p.carry(ctx, e, &o); err != nil {
		return err
	}
	if o.dryRun {
		return nil
	}
	if err := ov.remove(ctx, over.Revision); err != nil {
		return fmt.Errorf("%s holds the overlay's rules, but the overlay was not removed (run bulwark abort %s %s): %w", ctr.display, ctr.display, group, err)
	}
	if !o.json {
		fmt.Fprintf(e.stdout, "removed: %s; every instance follows %s\n", ov.display, ctr.display)
	}
	return nil
}

func runAbort(ctx context.Context, e *env, args []string) error {
	oc, err := openOverlayCmd(ctx, e, "abort", args)
	if err != nil {
		return err
	}
	defer oc.close()
	o, group, ctr, ov, over := oc.o, oc.group, oc.ctr, oc.ov, oc.over
	out := outcome{Source: ov.display, From: over.Revision, Changes: []change{}}
	if over.Missing {
		if o.json {
			writeJSON(e.stdout, out)
		} else {
			fmt.Fprintf(e.stdout, "canary group %s has no overlay at %s: nothing to remove\n", group, ctr.display)
		}
		return nil
	}
	base, err := ctr.read(ctx)
	if err != nil {
		return err
	}
	k, err := pickKind(&o, over.Data, ctr.name)
	if err != nil {
		return err
	}
	// What the instances of group go back to: the proposal is the base
	// in place of the overlay, and the overlay gone.
	p := &proposal{c: ov, k: k, cur: over, next: base.Data, nextMissing: base.Missing, name: header(ctr.display, base)}
	changes, _, err := p.review(e, &o, e.stdout)
	if err != nil {
		return err
	}
	if changes != nil {
		out.Changes = changes
	}
	if o.dryRun {
		if o.json {
			writeJSON(e.stdout, out)
		} else {
			fmt.Fprintln(e.stdout, "dry run: nothing removed")
		}
		return nil
	}
	if !o.yes && !confirm(ctx, e, fmt.Sprintf("remove %s?", ov.display)) {
		return failf(exitUsage, "not confirmed: nothing removed (--yes skips the question)")
	}
	if err := ov.remove(ctx, over.Revision); err != nil {
		if ee, ok := err.(*exitError); ok && ee.code == exitConflict {
			if o.json {
				out.Conflict = true
				writeJSON(e.stdout, out)
			}
			return failf(exitConflict, "%s changed since it was read at revision %s: nothing removed; run it again to review", ov.display, over.Revision)
		}
		return err
	}
	out.Applied = true
	previous := string(over.Data)
	seq, herr := record(ctx, ctr, entry{Time: time.Now().UTC().Truncate(time.Second), Author: o.author, Command: "abort " + group,
		From: over.Revision, Kind: k.name, Diff: diffLines(changes), Previous: &previous, Overlay: group}, o.historyBytes)
	out.History = seq
	if o.json {
		writeJSON(e.stdout, out)
	} else {
		fmt.Fprintf(e.stdout, "removed: %s (revision %s); its instances follow %s\n", ov.display, over.Revision, ctr.display)
	}
	if herr != nil {
		fmt.Fprintf(e.stderr, "bulwark abort: warning: removed, but not recorded in the history (%s): %v\n", ctr.histName, herr)
	}
	return nil
}

// overlayStatus is one group of bulwark status --json.
type overlayStatus struct {
	Group    string   `json:"group"`
	Exists   bool     `json:"exists"`
	Revision string   `json:"revision,omitempty"`
	Changes  []change `json:"changes,omitempty"` // from the document to the overlay
	Problem  string   `json:"problem,omitempty"` // the overlay does not decode
}

func runStatus(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["status"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	var groups string
	fs.StringVar(&groups, "groups", "", "show only these canary groups, comma-separated, each with its overlay or none (the center is not listed)")
	pos, err := parse(e, c, fs, args, 1, 1)
	if err != nil {
		return err
	}
	var named []string
	for g := range strings.SplitSeq(groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			named = append(named, g)
		}
	}
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	base, err := ctr.read(ctx)
	if err != nil {
		return err
	}
	names := named
	if len(named) == 0 {
		var note string
		if names, note, err = ctr.overlayGroups(ctx); err != nil {
			return err
		}
		for line := range strings.Lines(note) {
			fmt.Fprintf(e.stderr, "bulwark status: note: %s", strings.TrimSuffix(line, "\n")+"\n")
		}
	}
	out := []overlayStatus{}
	for _, g := range names {
		st, err := statusOf(ctx, ctr, base, g, &o)
		if err != nil {
			return err
		}
		if st.Exists || len(named) > 0 { // a listed overlay may be gone by now
			out = append(out, st)
		}
	}
	if o.json {
		writeJSON(e.stdout, out)
		return nil
	}
	if len(out) == 0 {
		fmt.Fprintf(e.stdout, "no overlays beside %s\n", ctr.display)
	}
	for _, st := range out {
		switch {
		case !st.Exists:
			fmt.Fprintf(e.stdout, "%s: no overlay\n", st.Group)
		case st.Problem != "":
			fmt.Fprintf(e.stdout, "%s: overlay revision %s: %s\n", st.Group, st.Revision, st.Problem)
		default:
			fmt.Fprintf(e.stdout, "%s: overlay revision %s: %s\n", st.Group, st.Revision, summary(st.Changes))
			printChanges(e, e.stdout, st.Changes)
		}
	}
	return nil
}

// statusOf reads the overlay of group and diffs it against base.
func statusOf(ctx context.Context, ctr *center, base datasource.Snapshot, group string, o *options) (overlayStatus, error) {
	st := overlayStatus{Group: group}
	ov, err := ctr.overlayOf(group)
	if err != nil {
		return st, err
	}
	defer ov.closeOverlay()
	over, err := ov.read(ctx)
	if err != nil || over.Missing {
		return st, err
	}
	st.Exists, st.Revision = true, over.Revision
	k, err := pickKind(o, over.Data, ctr.name)
	if err != nil {
		return st, err
	}
	to, err := rulesOf(k, over.Data, false)
	if err != nil {
		st.Problem = fmt.Sprintf("not valid %s rules: %v", k.name, err)
		return st, nil
	}
	from, err := rulesOf(k, base.Data, base.Missing)
	if err != nil {
		from = nil
	}
	st.Changes = diffRules(from, to)
	return st, nil
}
