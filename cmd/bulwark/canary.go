package main

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

// overlayOf returns the center of the overlay of group beside c's document:
// the same client, and the history of the base, where changes to the
// overlay are recorded. Closing it closes the overlay's Source only.
func (c *center) overlayOf(group string) (*center, error) {
	if !validGroup.MatchString(group) {
		return nil, failf(exitUsage, "canary group %q: want 1 to 64 letters, digits, '-' or '_'", group)
	}
	o, ok := c.doc.(overlayer)
	if !ok {
		return nil, failf(exitUsage, "%s: %T has no overlays", c.display, c.doc)
	}
	ep, ok := o.Overlay(group).(endpoint)
	if !ok {
		return nil, failf(exitUsage, "%s: the overlay of %T cannot be written", c.display, c.doc)
	}
	ov := *c
	ov.doc, ov.baseDisplay, ov.closeFn = ep, c.display, nil
	ov.display = c.display + " (overlay " + group + ")"
	return &ov, nil
}

// closeOverlay closes what overlayOf opened.
func (c *center) closeOverlay() { closeBounded(func() { _ = c.doc.Close() }) }

// remove deletes the document if it is still at revision; a conflict is
// exit code 3, any other error 4.
func (c *center) remove(ctx context.Context, revision string) error {
	d, ok := c.doc.(deleter)
	if !ok {
		return failf(exitUsage, "%s: %T cannot delete", c.display, c.doc)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	err := d.Delete(ctx, revision)
	switch {
	case errors.Is(err, datasource.ErrConflict):
		return fail(exitConflict, err)
	case err != nil:
		return fail(exitUnreachable, fmt.Errorf("delete %s: %w", c.display, c.cause(ctx, err)))
	}
	return nil
}

// overlayGroups returns the canary groups with an overlay beside c's
// document, sorted, as the center lists them. A center that cannot list
// them (errors.ErrUnsupported: a Nacos-protocol server without config
// search) is answered from the document's history: the groups that apply
// --canary and abort recorded, which may no longer have an overlay (the
// caller reads each), and note says what that leaves out.
func (c *center) overlayGroups(ctx context.Context) (groups []string, note string, err error) {
	l, ok := c.doc.(lister)
	if !ok {
		return nil, "", failf(exitUsage, "%s: %T cannot list its overlays; name them with --groups", c.display, c.doc)
	}
	lctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	groups, err = l.Overlays(lctx)
	switch {
	case err == nil:
		return groups, "", nil
	case !errors.Is(err, errors.ErrUnsupported):
		return nil, "", fail(exitUnreachable, fmt.Errorf("list the overlays of %s: %w", c.display, c.cause(lctx, err)))
	}
	h, _, herr := readHistory(ctx, c)
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
