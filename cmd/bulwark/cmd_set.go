package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/rulechange"
)

func init() {
	register(&command{
		name: "set", args: "SOURCE RESOURCE FIELD=VALUE...", summary: "change fields of one rule (read-modify-write, retried on conflict)",
		help: `Changes fields of the rule of RESOURCE: reads the document, changes the
fields, checks the result, and writes it with compare-and-set; when another
writer got in between it reads again and starts over (up to 10 times), so no
one's edit is lost. Only the fields named change: the other rules keep their
exact text, this rule its dashboard fields (id, gmtCreate, …).

VALUE is JSON (200, true, "text") or else a string (grade=QPS works: enums
take their names). FIELD may be nested: clusterConfig.thresholdType=1.
When several rules have RESOURCE, narrow with --limit-app, --where FIELD=VALUE
(repeatable; a field the rule leaves out matches false, 0, "" and null) and
--section in a rule set, or change them all with --all. Turning on a shadow
rule that sits beside the enforcing rule of its resource:

  bulwark set etcd://127.0.0.1:2379/bulwark/order-service/prod/flow "GET /orders" count=200
  bulwark set SOURCE "GET /orders" shadow=false --where shadow=true`,
		run: runSet,
	})
}

const setAttempts = 10

func runSet(ctx context.Context, e *env, args []string) error {
	var o options
	c := commands["set"]
	fs := newFlags(c)
	connFlags(fs, &o)
	kindFlag(fs, &o)
	jsonFlag(fs, &o)
	changeFlags(fs, &o)
	var sel rulechange.Selector
	fs.StringVar(&sel.LimitApp, "limit-app", "", "only the rule with this limitApp")
	fs.StringVar(&sel.Section, "section", "", "in a rule set: only rules of this kind (flow, degrade, system, authority, paramFlow)")
	fs.BoolVar(&sel.All, "all", false, "change every rule that matches")
	var where []string
	fs.Func("where", "only rules whose FIELD has VALUE (FIELD=VALUE, repeatable)", func(s string) error {
		where = append(where, s)
		return nil
	})
	pos, err := parse(e, c, fs, args, 3, -1)
	if err != nil {
		return err
	}
	sel.Resource = pos[1]
	if sel.Where, err = rulechange.ParseAssignments(where); err != nil {
		return err
	}
	as, err := rulechange.ParseAssignments(pos[2:])
	if err != nil {
		return err
	}
	o.yes = true // set is its own confirmation
	ctr, err := openCenter(ctx, pos[0], &o)
	if err != nil {
		return err
	}
	defer ctr.Close()
	pause := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		p, err := rulechange.PlanSet(ctx, ctr, o.kind, sel, as, "after set "+strings.Join(pos[2:], " "), "set "+strings.Join(pos[1:], " "))
		if err != nil {
			printDecodeProblems(e, ctr.Display(), err)
			return err
		}
		err = carry(ctx, e, &o, p)
		if !errors.Is(err, datasource.ErrConflict) && codeOf(err) != exitConflict || attempt == setAttempts {
			return err
		}
		fmt.Fprintf(e.stderr, "%s changed meanwhile: reading it again (attempt %d of %d)\n", ctr.Display(), attempt+1, setAttempts)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause/2 + rand.N(pause/2)):
		}
		pause = min(2*pause, time.Second)
	}
}
