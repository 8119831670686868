package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/bulwark-go/bulwark/internal/rulechange"
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

// overlayArgs parses the arguments of the command name (SOURCE GROUP) and
// opens SOURCE.
func overlayArgs(ctx context.Context, e *env, name string, args []string, o *options) (*rulechange.Center, string, error) {
	c := commands[name]
	fs := newFlags(c)
	connFlags(fs, o)
	kindFlag(fs, o)
	jsonFlag(fs, o)
	changeFlags(fs, o)
	pos, err := parse(e, c, fs, args, 2, 2)
	if err != nil {
		return nil, "", err
	}
	ctr, err := openCenter(ctx, pos[0], o)
	return ctr, pos[1], err
}

func runPromote(ctx context.Context, e *env, args []string) error {
	var o options
	ctr, group, err := overlayArgs(ctx, e, "promote", args, &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	p, err := rulechange.PlanPromote(ctx, ctr, group, o.kind)
	if err != nil {
		printDecodeProblems(e, ctr.Display()+" (overlay "+group+")", err)
		return err
	}
	defer p.Close()
	if err := carry(ctx, e, &o, p); err != nil || o.dryRun {
		return err
	}
	if !o.json {
		fmt.Fprintf(e.stdout, "removed: %s (overlay %s); every instance follows %s\n", ctr.Display(), group, ctr.Display())
	}
	return nil
}

func runAbort(ctx context.Context, e *env, args []string) error {
	var o options
	ctr, group, err := overlayArgs(ctx, e, "abort", args, &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	p, err := rulechange.PlanAbort(ctx, ctr, group, o.kind)
	if err != nil {
		return err
	}
	defer p.Close()
	if p.Empty() {
		if o.json {
			writeJSON(e.stdout, outcome{Source: p.Center.Display(), Changes: []rulechange.Change{}})
		} else {
			fmt.Fprintf(e.stdout, "canary group %s has no overlay at %s: nothing to remove\n", group, ctr.Display())
		}
		return nil
	}
	if err := carry(ctx, e, &o, p); err != nil || o.dryRun {
		return err
	}
	if !o.json {
		fmt.Fprintf(e.stdout, "the instances of %s follow %s\n", group, ctr.Display())
	}
	return nil
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
	base, err := ctr.Read(ctx)
	if err != nil {
		return err
	}
	names := named
	if len(named) == 0 {
		var note string
		if names, note, err = ctr.OverlayGroups(ctx); err != nil {
			return err
		}
		for line := range strings.Lines(note) {
			fmt.Fprintf(e.stderr, "bulwark status: note: %s", strings.TrimSuffix(line, "\n")+"\n")
		}
	}
	out := []rulechange.OverlayStatus{}
	for _, g := range names {
		st, err := ctr.Status(ctx, base, g, o.kind)
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
		fmt.Fprintf(e.stdout, "no overlays beside %s\n", ctr.Display())
	}
	for _, st := range out {
		switch {
		case !st.Exists:
			fmt.Fprintf(e.stdout, "%s: no overlay\n", st.Group)
		case st.Problem != "":
			fmt.Fprintf(e.stdout, "%s: overlay revision %s: %s\n", st.Group, st.Revision, st.Problem)
		default:
			fmt.Fprintf(e.stdout, "%s: overlay revision %s: %s\n", st.Group, st.Revision, rulechange.Summary(st.Changes))
			printChanges(e, e.stdout, st.Changes)
		}
	}
	return nil
}
