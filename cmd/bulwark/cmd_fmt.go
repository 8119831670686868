package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "fmt", args: "FILE|- ...", summary: "rewrite documents in canonical client format",
		help: `Prints each document in the canonical client format: Java Sentinel's field
names in Java's order, enums as numbers, every field, one rule per line,
the dashboard's entity fields and wrappers removed, comments dropped. The
rules are the same (fmt refuses an invalid document, exit 1). -w rewrites
the files in place; --check only reports the files that are not canonical
(exit 1), for CI.

--from sentinel-golang converts sentinel-golang's rule documents (JSON lists of
flow, isolation, circuit breaker, system or hotspot rules) to Sentinel's: a
list of one kind, or a rule set when the rules are of several kinds. What has
no equivalent (memory-adaptive flow control, a breaker's probeNum, a
hotspot's paramKey, …) is reported on standard error, one note a line.`,
		run: runFmt,
	})
}

func runFmt(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["fmt"]
	fs := newFlags(c)
	kindFlag(fs, &o)
	var write, check bool
	fs.BoolVar(&write, "w", false, "write the result to the file instead of standard output")
	fs.BoolVar(&check, "check", false, "write nothing; list the files that are not canonical and exit 1 if any")
	var from string
	fs.StringVar(&from, "from", "", "convert from another format: sentinel-golang")
	names, err := parse(e, c, fs, args, 1, -1)
	if err != nil {
		return err
	}
	if from != "" && from != "sentinel-golang" {
		return failf(exitUsage, "--from: the only format is sentinel-golang, not %q", from)
	}
	code := exitOK
	for _, name := range names {
		if name == "-" && write {
			return failf(exitUsage, "-w cannot write standard input")
		}
		data, err := readInput(e, name)
		if err != nil {
			return err
		}
		if from != "" {
			var notes []string
			data, notes, err = fromSentinelGo(data)
			if err != nil {
				fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
				code = exitInvalid
				continue
			}
			for _, n := range notes {
				fmt.Fprintf(e.stderr, "%s: note: %s\n", name, n)
			}
		}
		k, err := pickKind(&o, data, name)
		if err != nil {
			return err
		}
		canon, warns, err := k.Canonical(data)
		printFindings(e.stderr, rulechange.Findings(name, err, warns), false)
		if err != nil {
			code = exitInvalid
			continue
		}
		switch {
		case check:
			if !bytes.Equal(canon, data) {
				fmt.Fprintln(e.stdout, name)
				code = exitInvalid
			}
		case write:
			if bytes.Equal(canon, data) {
				continue
			}
			st, err := os.Stat(name)
			if err != nil {
				return err
			}
			if err := os.WriteFile(name, canon, st.Mode().Perm()); err != nil {
				return err
			}
		default:
			_, _ = e.stdout.Write(canon)
		}
	}
	if code != exitOK {
		return silent(code)
	}
	return nil
}
