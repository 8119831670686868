// Command file changes one flow threshold in a Java Sentinel rules file
// through datasource.Writable, the way an ops tool would: it reads the
// document, changes the count of one resource's rules, and writes it back
// with compare-and-set, retrying if someone else saved the file in between,
// so no concurrent edit is lost. A Readable on the same file shows the new
// rules reaching a running engine.
//
//	go run ./examples/file -rules examples/quickstart/rules.json -resource "GET /orders" -count 50
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
)

func main() {
	rules := flag.String("rules", "flow-rules.json", "flow rules file (Java Sentinel JSON)")
	resource := flag.String("resource", "GET /orders", "resource whose threshold to change")
	count := flag.Float64("count", 50, "the new threshold")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout, *rules, *resource, *count); err != nil {
		fmt.Fprintln(os.Stderr, "file:", err)
		os.Exit(1)
	}
}

var (
	errNoRule  = errors.New("no rule for that resource")
	errMissing = errors.New("rules file does not exist")
)

func run(ctx context.Context, out io.Writer, path, resource string, count float64) error {
	engine := core.NewEngine()
	defer engine.Close()
	reader := datasource.NewReadable(file.New(path), converter.FlowRules())
	engine.Flow().Register(reader.Property())
	if err := reader.Start(ctx); err != nil {
		return err
	}
	defer reader.Close()
	if reader.Status().Missing { // a mistyped path: say so instead of "no rule"
		return fmt.Errorf("%w: %s", errMissing, path)
	}
	printRules(out, "before", engine.Flow().Rules())

	// The writer waits until the reader has applied what it wrote.
	writer := datasource.NewWritable(file.New(path), converter.FlowRules(), datasource.WaitApplied(reader, 5*time.Second))
	err := writer.Update(ctx, func(rules []flow.Rule) ([]flow.Rule, error) {
		found := false
		for i := range rules {
			if rules[i].Resource == resource {
				rules[i].Count = count
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: %q", errNoRule, resource)
		}
		return rules, nil
	})
	if err != nil {
		return err
	}
	printRules(out, "after", engine.Flow().Rules())
	return nil
}

func printRules(out io.Writer, when string, rules []flow.Rule) {
	fmt.Fprintf(out, "%s:\n", when)
	for _, r := range rules {
		fmt.Fprintf(out, "  %-15s %s %g\n", r.Resource, r.Grade, r.Count)
	}
}
