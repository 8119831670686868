package datasource_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/file"
)

// waitFor polls cond for up to five seconds.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

func printRules(rules []flow.Rule) {
	for _, r := range rules {
		fmt.Printf("  %s: %v/s\n", r.Resource, r.Count)
	}
}

// Rules in a Java-format JSON file follow its edits: an atomic save is
// applied, a bad edit is rejected while the old rules keep working.
func ExampleNewReadable() {
	dir, _ := os.MkdirTemp("", "bulwark-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "flow-rules.json")
	_ = os.WriteFile(path, []byte(`[{"resource": "GET /orders", "grade": 1, "count": 100}]`), 0o644)

	engine := core.NewEngine()
	defer engine.Close()
	ds := datasource.NewReadable(file.New(path), converter.FlowRules())
	engine.Flow().Register(ds.Property())
	if err := ds.Start(context.Background()); err != nil {
		fmt.Println("no rules:", err)
		return
	}
	defer ds.Close()
	fmt.Println("started:")
	printRules(engine.Flow().Rules())

	// An editor saves: a temporary file renamed over the document.
	_ = os.WriteFile(path+".tmp", []byte(`[{"resource": "GET /orders", "count": 50}]`), 0o644)
	_ = os.Rename(path+".tmp", path)
	waitFor(func() bool { r := engine.Flow().Rules(); return len(r) == 1 && r[0].Count == 50 })
	fmt.Println("after the edit:")
	printRules(engine.Flow().Rules())

	// A typo: the document is rejected and the running rules stay.
	_ = os.WriteFile(path, []byte(`[{"resource": "GET /orders", "count": 50,}]`), 0o644)
	waitFor(func() bool { return ds.Status().Err != nil })
	fmt.Println("after the typo: rejected =", ds.Status().Err != nil, "failures =", ds.Status().Failures)
	printRules(engine.Flow().Rules())

	// Output:
	// started:
	//   GET /orders: 100/s
	// after the edit:
	//   GET /orders: 50/s
	// after the typo: rejected = true failures = 1
	//   GET /orders: 50/s
}

// A tool changes one threshold without losing a concurrent edit, and waits
// until the running rules have it.
func ExampleWritable_Update() {
	dir, _ := os.MkdirTemp("", "bulwark-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "flow-rules.json")
	_ = os.WriteFile(path, []byte(`[{"resource": "GET /orders", "count": 100}, {"resource": "POST /orders", "count": 10}]`), 0o644)

	engine := core.NewEngine()
	defer engine.Close()
	src := file.New(path)
	ds := datasource.NewReadable(src, converter.FlowRules())
	engine.Flow().Register(ds.Property())
	if err := ds.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	defer ds.Close()

	w := datasource.NewWritable(src, converter.FlowRules(), datasource.WaitApplied(ds, 5*time.Second))
	err := w.Update(context.Background(), func(rules []flow.Rule) ([]flow.Rule, error) {
		for i := range rules {
			if rules[i].Resource == "POST /orders" {
				rules[i].Count = 20
			}
		}
		return rules, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	printRules(engine.Flow().Rules())

	// Output:
	//   GET /orders: 100/s
	//   POST /orders: 20/s
}

// A document that does not decode is reported with its revision and
// content; a repair written at that revision replaces it, while a write
// based on an older read would be a conflict.
func ExampleDecodeError() {
	dir, _ := os.MkdirTemp("", "bulwark-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "flow-rules.json")
	_ = os.WriteFile(path, []byte(`[{"resource": "GET /orders", "count": 100,}]`), 0o644)

	ctx := context.Background()
	w := datasource.NewWritable(file.New(path), converter.FlowRules())
	_, _, err := w.Read(ctx)
	var de *datasource.DecodeError
	if !errors.As(err, &de) {
		fmt.Println("unexpected:", err)
		return
	}
	fmt.Printf("does not decode: %s\n", de.Data)
	repair := []flow.Rule{{Resource: "GET /orders", Count: 100}}
	if err := w.Write(ctx, repair, de.Revision); err != nil {
		fmt.Println(err)
		return
	}
	rules, _, err := w.Read(ctx)
	fmt.Println("repaired:", len(rules), "rule,", err)

	// Output:
	// does not decode: [{"resource": "GET /orders", "count": 100,}]
	// repaired: 1 rule, <nil>
}
