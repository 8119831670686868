package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	corerule "github.com/bulwark-go/bulwark/core/rule"
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
	var all []finding
	for _, name := range names {
		data, missing, err := load(ctx, e, name, &o)
		if err != nil {
			return err
		}
		if missing {
			invalid = true
			f := finding{File: name, Severity: "error", Message: "the document does not exist", Text: name + ": the document does not exist"}
			all = append(all, f)
			if format == "text" {
				printFindings(e.stdout, []finding{f}, false)
			}
			continue
		}
		k, err := pickKind(&o, data, name)
		if err != nil {
			return err
		}
		canon, fs, derr := check(name, k, data)
		all = append(all, fs...)
		if format == "text" {
			printFindings(e.stdout, fs, false)
		}
		if derr != nil {
			invalid = true
			continue
		}
		if format == "text" {
			rules, _ := parseRules(k, canon)
			fmt.Fprintf(e.stdout, "%s: valid, %s\n", name, count(len(rules), k.name+" rule"))
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
	if !isURL(name) {
		data, err := readInput(e, name)
		return data, false, err
	}
	c, err := openCenter(ctx, name, o)
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	snap, err := c.read(ctx)
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

// check reads data as a service would: decoded strictly, then loaded into
// an engine of its own (anyCodec.inEngine). It returns the canonical
// document, every problem and warning as findings, and err when data is
// not valid.
func check(name string, k *kind, data []byte) (canon []byte, fs []finding, err error) {
	canon, warns, err := k.codec.canonical(data)
	fs = findings(name, err, warns)
	if err == nil {
		if err = k.codec.inEngine(canon); err != nil {
			fs = append(fs, engineFindings(name, k, canon, err)...)
		}
	}
	return canon, fs, err
}

// setKeys names the engine's rule kinds as a rule set's keys.
var setKeys = map[string]string{"flow": "flow", "circuitbreaker": "degrade", "system": "system", "authority": "authority", "hotspot": "paramFlow"}

// engineFindings lists as findings what an engine refused of the valid
// document canon (anyCodec.inEngine's err): rules that may not stand
// beside others of their list.
func engineFindings(name string, k *kind, canon []byte, err error) []finding {
	rules, _ := parseRules(k, canon)
	var out []finding
	for _, ve := range validationErrors(err) {
		section := ""
		if k.name == "ruleset" {
			section = setKeys[ve.Kind]
		}
		for _, re := range ve.Rules {
			res := ""
			if i := slices.IndexFunc(rules, func(r rule) bool { return r.section == section && r.index == re.Index }); i >= 0 {
				res = rules[i].resource()
			}
			for _, fe := range corerule.Fields(re.Err) {
				path := fmt.Sprintf("%s[%d]", section, re.Index)
				if fe.Field != "" {
					path += "." + fe.Field
				}
				p := converter.Problem{Path: path, Rule: re.Index, Resource: res, Message: fe.Err.Error(), Err: converter.ErrInvalid}
				out = append(out, findingOf(name, p, "error"))
			}
		}
	}
	if out == nil {
		out = []finding{{File: name, Severity: "error", Message: err.Error(), Text: name + ": " + err.Error()}}
	}
	return out
}

// validationErrors returns the *core.ValidationError of each kind in err
// (LoadRuleSet joins them).
func validationErrors(err error) []*core.ValidationError {
	if ve, ok := err.(*core.ValidationError); ok {
		return []*core.ValidationError{ve}
	}
	var all []*core.ValidationError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			all = append(all, validationErrors(e)...)
		}
	}
	return all
}
