package main

import (
	"context"
	"fmt"
)

func init() {
	register(&command{
		name: "get", args: "SOURCE", summary: "print the document and its revision",
		help: `Prints the document as stored (to standard output, so that
"bulwark get SOURCE > rules.json" keeps it byte for byte) and its revision
(to standard error). --json prints both as one object for scripts.
A document that does not exist prints nothing and says so.`,
		run: runGet,
	})
}

func runGet(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["get"]
	fs := newFlags(c)
	connFlags(fs, &o)
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
	snap, err := ctr.Read(ctx)
	if err != nil {
		return err
	}
	if o.json {
		writeJSON(e.stdout, struct {
			Source   string `json:"source"`
			Revision string `json:"revision"`
			Missing  bool   `json:"missing"`
			Document string `json:"document"`
		}{ctr.Display(), snap.Revision, snap.Missing, string(snap.Data)})
		return nil
	}
	if snap.Missing {
		fmt.Fprintf(e.stderr, "%s does not exist\n", ctr.Display())
		return nil
	}
	_, _ = e.stdout.Write(snap.Data)
	fmt.Fprintf(e.stderr, "revision %s\n", snap.Revision)
	return nil
}
