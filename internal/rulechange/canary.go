package rulechange

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/bulwark-go/bulwark/datasource"
)

// overlayer is a backend Source that names the overlay of a canary group
// beside its document (every backend of this module; see
// datasource.WithOverlay).
type overlayer interface {
	Overlay(group string) datasource.Source
}

// lister is a backend Source that lists the canary groups with an overlay
// beside its document (every backend of this module; a Nacos-protocol
// server only when it has config search).
type lister interface {
	Overlays(ctx context.Context) ([]string, error)
}

// deleter is a backend Source that removes its document with
// compare-and-set (every backend of this module).
type deleter interface {
	Delete(ctx context.Context, expectRevision string) error
}

// validGroup is what datasource.WithOverlay accepts as a group.
var validGroup = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Overlay returns the center of the overlay of group beside c's document
// (what the instances started with datasource.WithOverlay(group) follow):
// the same client, and the history of the base, where changes to the
// overlay are recorded. Its Close closes the overlay's Source only.
func (c *Center) Overlay(group string) (*Center, error) {
	if !validGroup.MatchString(group) {
		return nil, classf(ErrArgument, "canary group %q: want 1 to 64 letters, digits, '-' or '_'", group)
	}
	o, ok := c.doc.(overlayer)
	if !ok {
		return nil, classf(ErrArgument, "%s: %T has no overlays", c.display, c.doc)
	}
	ep, ok := o.Overlay(group).(Endpoint)
	if !ok {
		return nil, classf(ErrArgument, "%s: the overlay of %T cannot be written", c.display, c.doc)
	}
	ov := *c
	ov.doc, ov.base, ov.group, ov.closeFn = ep, c, group, nil
	ov.display = c.display + " (overlay " + group + ")"
	return &ov, nil
}

// remove deletes the document if it is still at revision: a conflict is
// datasource.ErrConflict, any other error ErrUnreachable.
func (c *Center) remove(ctx context.Context, revision string) error {
	d, ok := c.doc.(deleter)
	if !ok {
		return classf(ErrArgument, "%s: %T cannot delete", c.display, c.doc)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	err := d.Delete(ctx, revision)
	switch {
	case errors.Is(err, datasource.ErrConflict):
		return err
	case err != nil:
		return class(ErrUnreachable, fmt.Errorf("delete %s: %w", c.display, c.cause(ctx, err)))
	}
	return nil
}

// OverlayGroups returns the canary groups with an overlay beside c's
// document, sorted, as the center lists them. A center that cannot list
// them (errors.ErrUnsupported: a Nacos-protocol server without config
// search) is answered from the document's history: the groups that apply
// --canary and abort recorded, which may no longer have an overlay (the
// caller reads each), and note says what that leaves out.
func (c *Center) OverlayGroups(ctx context.Context) (groups []string, note string, err error) {
	l, ok := c.doc.(lister)
	if !ok {
		return nil, "", classf(ErrArgument, "%s: %T cannot list its overlays; name them", c.display, c.doc)
	}
	lctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	groups, err = l.Overlays(lctx)
	switch {
	case err == nil:
		return groups, "", nil
	case !errors.Is(err, errors.ErrUnsupported):
		return nil, "", class(ErrUnreachable, fmt.Errorf("list the overlays of %s: %w", c.display, c.cause(lctx, err)))
	}
	h, _, herr := c.readHistory(ctx)
	if herr != nil {
		return nil, "", herr
	}
	for _, en := range h.Entries {
		if en.Overlay != "" && validGroup.MatchString(en.Overlay) {
			groups = append(groups, en.Overlay)
		}
	}
	slices.Sort(groups)
	note = fmt.Sprintf("%v\nshowing the groups recorded in %s (apply --canary, abort) whose overlay exists: "+
		"an overlay written by another tool, or whose records left the history, is not shown (name it with --groups)", err, c.histName)
	return slices.Compact(groups), note, nil
}

// OverlayStatus is one canary group's overlay and how it differs from the
// document.
type OverlayStatus struct {
	Group    string   `json:"group"`
	Exists   bool     `json:"exists"`
	Revision string   `json:"revision,omitempty"`
	Changes  []Change `json:"changes,omitempty"` // from the document to the overlay
	Problem  string   `json:"problem,omitempty"` // the overlay does not decode
}

// Status reads the overlay of group and diffs it against base, the
// document read; kind names the rule kind ("": detected).
func (c *Center) Status(ctx context.Context, base datasource.Snapshot, group, kind string) (OverlayStatus, error) {
	st := OverlayStatus{Group: group}
	ov, err := c.Overlay(group)
	if err != nil {
		return st, err
	}
	defer ov.Close()
	over, err := ov.Read(ctx)
	if err != nil || over.Missing {
		return st, err
	}
	st.Exists, st.Revision = true, over.Revision
	k, err := PickKind(kind, over.Data, c.name)
	if err != nil {
		return st, err
	}
	to, err := k.Rules(over.Data, false)
	if err != nil {
		st.Problem = fmt.Sprintf("not valid %s rules: %v", k.name, err)
		return st, nil
	}
	from, err := k.Rules(base.Data, base.Missing)
	if err != nil {
		from = nil
	}
	st.Changes = Diff(from, to)
	return st, nil
}
