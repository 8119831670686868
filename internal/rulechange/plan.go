package rulechange

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
)

// A Plan is one change to a document, made by Plan* and reviewed (its
// Changes) before Carry carries it out: written with compare-and-set on
// the revision read, and recorded in the document's history.
type Plan struct {
	// Center is where the change is written: the document, or an
	// overlay's center (apply to a canary group, abort).
	Center *Center
	Kind   *Kind
	// Current is what was read; the write is compare-and-set on its
	// revision.
	Current datasource.Snapshot
	// Next is the new document; NextMissing: the change removes it
	// (abort: the overlay goes, its instances return to the document).
	Next        []byte
	NextMissing bool
	// Base is what the diff is against, and BaseName names it: Current
	// and Center's display, except for the first apply to a canary group
	// (the document the group's instances follow until then).
	Base     datasource.Snapshot
	BaseName string
	// NextName says where Next comes from, for a diff's header.
	NextName string
	// Command is recorded in the history: "apply", "set …", "rollback 3",
	// "promote GROUP", "abort GROUP".
	Command string
	// Changes are the rules added, removed or changed from Base to Next.
	Changes []Change
	// Replaced is why Base does not decode as Kind (it is replaced whole);
	// nil when it does.
	Replaced error

	overlay  string  // the canary group whose overlay the change writes or removes
	promoted *Center // promote: the overlay removed once the document is written
	promRev  string
}

// Result is what Carry did.
type Result struct {
	// Revision is the document's new revision ("" when removed).
	Revision string
	// Seq is the number of the history entry recorded, 0 when none was.
	Seq int
	// HistoryErr says why the change was made but not recorded.
	HistoryErr error
}

// Close closes the overlay's center the plan opened, if any (apply to a
// canary group, promote, abort); the document's center is the caller's.
func (p *Plan) Close() error {
	if p.promoted != nil {
		return p.promoted.Close()
	}
	if p.Center.base != nil {
		return p.Center.Close()
	}
	return nil
}

// Empty says that the plan changes nothing: Carry would write nothing.
func (p *Plan) Empty() bool {
	if p.NextMissing || p.isAbort() {
		return p.Current.Missing
	}
	return len(p.Changes) == 0 && p.Replaced == nil && !p.Current.Missing
}

func (p *Plan) isAbort() bool { return p.overlay != "" && p.NextMissing }

// review computes Changes and Replaced.
func (p *Plan) review() error {
	to, err := p.Kind.Rules(p.Next, p.NextMissing)
	if err != nil {
		return class(ErrInvalid, fmt.Errorf("%s: %w", p.NextName, err))
	}
	from, ferr := p.Kind.Rules(p.Base.Data, p.Base.Missing)
	if ferr != nil {
		p.Replaced, from = ferr, nil
	}
	p.Changes = Diff(from, to)
	return nil
}

// Carry writes Next with compare-and-set on Current's revision (abort:
// removes the overlay, compare-and-set on its revision) and records the
// change, by author, in the history of at most historyBytes (0: the
// default). A document changed since it was read is datasource.ErrConflict
// and nothing is written. Promote then removes the overlay.
func (p *Plan) Carry(ctx context.Context, author string, historyBytes int) (Result, error) {
	var res Result
	en := Entry{Time: time.Now().UTC().Truncate(time.Second), Author: author, Command: p.Command,
		From: p.Current.Revision, Kind: p.Kind.name, Diff: Lines(p.Changes), Overlay: p.overlay}
	if !p.Current.Missing {
		s := string(p.Current.Data)
		en.Previous = &s
	}
	history := p.Center
	if p.isAbort() {
		if err := p.Center.remove(ctx, p.Current.Revision); err != nil {
			return res, p.conflict(err, "nothing removed")
		}
	} else {
		snap, err := p.Center.write(ctx, p.Center.doc, p.Next, p.Current.Revision, p.Center.display)
		if err != nil {
			return res, p.conflict(err, "nothing written")
		}
		res.Revision, en.To = snap.Revision, snap.Revision
	}
	res.Seq, res.HistoryErr = history.record(ctx, en, historyBytes)
	if res.HistoryErr != nil {
		res.HistoryErr = fmt.Errorf("not recorded in the history (%s): %w", history.HistoryName(), res.HistoryErr)
	}
	if p.promoted != nil {
		if err := p.promoted.remove(ctx, p.promRev); err != nil {
			return res, fmt.Errorf("%s holds the overlay's rules, but the overlay was not removed (abort group %s): %w", p.Center.display, p.promoted.group, err)
		}
	}
	return res, nil
}

func (p *Plan) conflict(err error, nothing string) error {
	if errors.Is(err, datasource.ErrConflict) {
		return fmt.Errorf("%s changed since it was read at revision %s: %s: %w", p.Center.display, RevisionOf(p.Current), nothing, err)
	}
	return err
}

// plan reads c and returns the plan of writing next there.
func plan(ctx context.Context, c *Center, k *Kind, next []byte, nextName, command string) (*Plan, error) {
	cur, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	p := &Plan{Center: c, Kind: k, Current: cur, Next: next, Base: cur, BaseName: c.display, NextName: nextName, Command: command}
	return p, nil
}

// PlanApply plans writing next (a document of kind k, from nextName) to c;
// with a group, to the overlay of that canary group, whose first overlay
// is diffed against the document. next must be valid (Check); an invalid
// one is ErrInvalid. Close the plan after Carry.
func PlanApply(ctx context.Context, c *Center, k *Kind, next []byte, nextName, group string) (*Plan, error) {
	if _, _, err := k.Check(nextName, next); err != nil {
		return nil, fmt.Errorf("%s is not a valid %s document: %w", nextName, k.name, err)
	}
	target := c
	if group != "" {
		var err error
		if target, err = c.Overlay(group); err != nil {
			return nil, err
		}
	}
	p, err := plan(ctx, target, k, next, nextName, "apply")
	if err != nil {
		closeOverlay(target, c)
		return nil, err
	}
	if group != "" {
		p.Command, p.overlay = "apply --canary "+group, group
		if p.Current.Missing { // a new overlay: its changes are those from the base
			if p.Base, err = c.Read(ctx); err != nil {
				closeOverlay(target, c)
				return nil, err
			}
			p.BaseName = c.display
		}
	}
	if err := p.review(); err != nil {
		closeOverlay(target, c)
		return nil, err
	}
	return p, nil
}

func closeOverlay(target, c *Center) {
	if target != c {
		_ = target.Close()
	}
}

// PlanRollback plans writing back the document that change seq of the
// history replaced (seq 0: the last change); a change that created the
// document rolls back to an empty rule list. kind is the rule kind, ""
// for the one recorded.
func PlanRollback(ctx context.Context, c *Center, kind string, seq int) (*Plan, error) {
	es, err := c.History(ctx)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, classf(ErrInvalid, "no recorded changes of %s: nothing to roll back", c.display)
	}
	en := es[len(es)-1]
	if seq > 0 {
		found := false
		for _, x := range es {
			if x.Seq == seq {
				en, found = x, true
			}
		}
		if !found {
			return nil, classf(ErrArgument, "no change #%d in the history of %s (it keeps #%d to #%d)", seq, c.display, es[0].Seq, es[len(es)-1].Seq)
		}
	}
	if en.Overlay != "" {
		return nil, classf(ErrArgument, "change #%d (%s) was to the overlay of canary group %s, not to %s: apply to the group again, or abort it", en.Seq, en.Command, en.Overlay, c.display)
	}
	if kind == "" {
		kind = en.Kind
	}
	k, err := KindNamed(kind)
	if err != nil {
		return nil, err
	}
	next := k.Empty()
	if en.Previous != nil {
		next = []byte(*en.Previous)
	}
	p, err := plan(ctx, c, k, next, fmt.Sprintf("the document before change #%d (%s by %s)", en.Seq, en.Command, en.Author), fmt.Sprintf("rollback %d", en.Seq))
	if err != nil {
		return nil, err
	}
	return p, p.review()
}

// PlanPromote plans writing the overlay of canary group as the document
// and then removing the overlay: every instance follows the document. No
// overlay is ErrArgument, an invalid one ErrInvalid (findings: Check the
// plan's Next). kind is the rule kind, "" to detect it.
func PlanPromote(ctx context.Context, c *Center, group, kind string) (*Plan, error) {
	ov, err := c.Overlay(group)
	if err != nil {
		return nil, err
	}
	p, err := planPromote(ctx, c, ov, group, kind)
	if err != nil {
		_ = ov.Close()
	}
	return p, err
}

func planPromote(ctx context.Context, c, ov *Center, group, kind string) (*Plan, error) {
	over, err := ov.Read(ctx)
	if err != nil {
		return nil, err
	}
	if over.Missing {
		return nil, classf(ErrArgument, "canary group %s has no overlay at %s: nothing to promote", group, c.display)
	}
	k, err := PickKind(kind, over.Data, c.name)
	if err != nil {
		return nil, err
	}
	name := Header(ov.display, over)
	if _, _, err := k.Check(name, over.Data); err != nil {
		return nil, fmt.Errorf("%s is not a valid %s document: %w", ov.display, k.name, err)
	}
	p, err := plan(ctx, c, k, over.Data, name, "promote "+group)
	if err != nil {
		return nil, err
	}
	p.promoted, p.promRev = ov, over.Revision
	return p, p.review()
}

// PlanAbort plans removing the overlay of canary group: its instances
// return to the document, which is not touched. Changes are those from the
// overlay back to the document; Empty when there is no overlay. Close the
// plan after Carry.
func PlanAbort(ctx context.Context, c *Center, group, kind string) (*Plan, error) {
	ov, err := c.Overlay(group)
	if err != nil {
		return nil, err
	}
	over, err := ov.Read(ctx)
	if err == nil && !over.Missing {
		var base datasource.Snapshot
		if base, err = c.Read(ctx); err == nil {
			var k *Kind
			if k, err = PickKind(kind, over.Data, c.name); err == nil {
				p := &Plan{Center: ov, Kind: k, Current: over, Next: base.Data, NextMissing: true, Base: over, BaseName: ov.display,
					NextName: Header(c.display, base), Command: "abort " + group, overlay: group}
				if base.Missing {
					p.Next = nil
				}
				// The diff is to what the instances go back to: the
				// document's rules (none when it does not exist).
				to, terr := k.Rules(base.Data, base.Missing)
				if terr != nil {
					_ = ov.Close()
					return nil, class(ErrInvalid, fmt.Errorf("%s: %w", p.NextName, terr))
				}
				from, ferr := k.Rules(over.Data, false)
				if ferr != nil {
					p.Replaced, from = ferr, nil
				}
				p.Changes = Diff(from, to)
				return p, nil
			}
		}
	}
	if err != nil {
		_ = ov.Close()
		return nil, err
	}
	return &Plan{Center: ov, Current: over, NextMissing: true, Base: over, BaseName: ov.display, Command: "abort " + group, overlay: group, Kind: kinds[0]}, nil
}

// NewPlan plans writing next (a valid document of kind k, from nextName)
// over cur, the document as read earlier (by the caller: what a person
// reviewed): the write is compare-and-set on cur's revision, so a change
// made since is a conflict. command is recorded in the history.
func NewPlan(c *Center, k *Kind, cur datasource.Snapshot, next []byte, nextName, command string) (*Plan, error) {
	if _, _, err := k.Check(nextName, next); err != nil {
		return nil, fmt.Errorf("%s is not a valid %s document: %w", nextName, k.name, err)
	}
	p := &Plan{Center: c, Kind: k, Current: cur, Next: next, Base: cur, BaseName: c.display, NextName: nextName, Command: command}
	return p, p.review()
}
