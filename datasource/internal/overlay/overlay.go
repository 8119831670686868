// Package overlay names the overlays of a document (datasource.WithOverlay)
// for package datasource and every backend: where the overlay of a canary
// group lives beside a document, what may be a group, and which names
// beside a document are its overlays.
package overlay

import (
	"regexp"
	"slices"
	"strings"
)

// validGroup is what a canary group may be called: it becomes part of a
// key, a path or a dataId.
var validGroup = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidGroup reports whether group may name an overlay: 1 to 64 letters,
// digits, '-' or '_'.
func ValidGroup(group string) bool { return validGroup.MatchString(group) }

// Name is where every backend keeps the overlay of group beside a document
// named name (a key, a path, a dataId, a channel): name followed by
// ".overlay." and group, a sibling, so it needs no parent of its own.
func Name(name, group string) string { return Prefix(name) + group }

// Prefix is how the names of the overlays of the document name begin.
func Prefix(name string) string { return name + ".overlay." }

// Groups returns the groups, sorted and each once, whose overlay beside
// the document name is among names. A name that only begins the same way
// is left out: one whose rest is no group (a temporary or lock file, a
// history, "name.overlay." alone) and one of another document.
func Groups(name string, names []string) []string {
	prefix := Prefix(name)
	var groups []string
	for _, n := range names {
		if g, ok := strings.CutPrefix(n, prefix); ok && ValidGroup(g) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups)
}
