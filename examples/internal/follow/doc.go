// Package follow is the printing the examples share: each follows the
// rules of every kind its document holds (flow, degrade, system,
// authority, paramFlow) and prints every rule change (old → new, field by field), every
// change of the datasource's Status, and what that change means for the
// rules in force, the same way. It is a helper of the examples, not a
// public API: each example keeps its own wiring (flags, client, logger,
// source, Start and its warnings, failing fast without a server) so that
// a reader sees how to connect it, and leaves the printing here.
package follow
