package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "fmt", args: "FILE|- ...", summary: "rewrite documents in canonical client format",
		help: `Prints each document in the canonical client format: one rule per line,
each with the fields that differ from Java Sentinel's defaults (and those a
rule must have), in Java's field order, enums as numbers; the dashboard's
entity fields and wrappers removed, comments dropped; a rule set without
the kinds that have no rules. The rules are the same (fmt refuses an
invalid document, exit 1), and Java reads the document as it is. -w
rewrites the files in place; --check writes nothing and shows, for each file
that is not canonical, the lines that fmt changes (exit 1), for CI.

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
		canon, warns, err := k.Format(data)
		printFindings(e.stderr, rulechange.Findings(name, err, warns), false)
		if err != nil {
			code = exitInvalid
			continue
		}
		switch {
		case check:
			if !bytes.Equal(canon, data) {
				fmt.Fprintf(e.stdout, "%s: not canonical; bulwark fmt -w rewrites it:\n", name)
				for _, l := range lineDiff(string(data), string(canon)) {
					fmt.Fprintln(e.stdout, e.paint(map[byte]string{'-': "31", '+': "32"}[l[0]], l))
				}
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

// lineDiff lists the lines of a that b lacks ("-line N: text") and those
// of b that a lacks ("+line N: text"), in order (a longest common
// subsequence of lines stays). Documents are small: O(len(a)·len(b)).
func lineDiff(a, b string) []string {
	x, y := strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	// lcs[i][j] is the length of a longest common subsequence of x[i:], y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case j == len(y) || (i < len(x) && lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, fmt.Sprintf("-%d: %s", i+1, x[i]))
			i++
		default:
			out = append(out, fmt.Sprintf("+%d: %s", j+1, y[j]))
			j++
		}
	}
	return out
}
