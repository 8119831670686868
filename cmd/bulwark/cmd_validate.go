package main

import (
	"context"
	"fmt"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "validate", args: "FILE|SOURCE|- ...", summary: "check rule documents: every problem, with its line and column",
		help: `Checks each document as bulwark (and Java Sentinel) reads it and prints every
problem as FILE:LINE:COL: [INDEX] "RESOURCE": FIELD: PROBLEM, and warnings for
fields of older Sentinel releases that are ignored; then it checks the rules
against each other as a service's engine does (a shadow cluster rule may not
share an enforcing cluster rule's flowId). Dashboard documents
(id, app, gmtCreate, …), comments and a BOM are fine. "-" reads standard
input; a source URL reads the document in the config center.

Exit code 0 when every document is valid, 1 when one is not.`,
		run: runValidate,
	})
}

func runValidate(ctx context.Context, e *env, args []string) error {
	var o options
	fs := newFlags(commands["validate"])
	kindFlag(fs, &o)
	var format string
	fs.StringVar(&format, "format", "text", "output: text, or json (an array of findings, for CI annotations)")
	fs.DurationVar(&o.timeout, "timeout", defaultTimeout, "for a source URL: give up after this long (exit 4)")
	names, err := parse(e, commands["validate"], fs, args, 1, -1)
	if err != nil {
		return err
	}
	if format != "text" && format != "json" {
		return failf(exitUsage, "--format: want text or json, not %q", format)
	}
	invalid := false
	var all []rulechange.Finding
	for _, name := range names {
		data, missing, err := load(ctx, e, name, &o)
		if err != nil {
			return err
		}
		if missing {
			invalid = true
			f := rulechange.Finding{File: name, Severity: "error", Message: "the document does not exist", Text: name + ": the document does not exist"}
			all = append(all, f)
			if format == "text" {
				printFindings(e.stdout, []rulechange.Finding{f}, false)
			}
			continue
		}
		k, err := pickKind(&o, data, name)
		if err != nil {
			return err
		}
		canon, fs, derr := k.Check(name, data)
		all = append(all, fs...)
		if format == "text" {
			printFindings(e.stdout, fs, false)
		}
		if derr != nil {
			invalid = true
			continue
		}
		if format == "text" {
			rules, _ := k.Rules(canon, false)
			fmt.Fprintf(e.stdout, "%s: valid, %s\n", name, count(len(rules), k.Name()+" rule"))
		}
	}
	if format == "json" {
		printFindings(e.stdout, all, true)
	}
	if invalid {
		return silent(exitInvalid)
	}
	return nil
}

// load reads a document from a file, standard input or a source URL.
func load(ctx context.Context, e *env, name string, o *options) (data []byte, missing bool, err error) {
	if !rulechange.IsURL(name) {
		data, err := readInput(e, name)
		return data, false, err
	}
	c, err := openCenter(ctx, name, o)
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	snap, err := c.Read(ctx)
	if err != nil {
		return nil, false, err
	}
	return snap.Data, snap.Missing, nil
}

// count says "1 flow rule", "2 flow rules".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
