// Package rulechange is how bulwark's tools change a rule document in a
// config center: the CLI (cmd/bulwark) and the fleet console share it, so
// that both read, validate, diff, write and record the same way, and each
// sees the other's history.
//
// One package, one job: a change to a document, from the source URL to the
// audit entry. Open connects to a document named by a URL (a path or
// file://, etcd://, redis://, zk://, nacos://) with credentials and TLS in
// Options, the clients' own logs going to Options.Logger (silent by
// default). A Kind decodes, validates (Check: decoded strictly, then loaded
// into an engine of its own) and splits a document into Rules; Diff
// compares two rule lists rule by rule and field by field. A Plan is one
// reviewed change (apply, set, rollback, promote, abort): its Changes are
// what a person confirms, and Carry writes it with compare-and-set on the
// revision read and records an Entry in the document's history. Canary
// groups are overlays beside the document (Center.Overlay, Center.Status).
//
// Printing, prompts and flags are the callers'. Errors say what failed and
// carry a class callers branch on: ErrArgument (a malformed source, kind or
// group), ErrInvalid (a document that is not valid), ErrUnreachable (the
// config center did not answer, or refused) and datasource.ErrConflict
// (the document changed since it was read: nothing was written).
//
// # History
//
// The audit trail of a document lives beside it in the same config center:
// one JSON document ("format": "bulwark-history/1") holding the last 100
// changes, oldest first, written with compare-and-set so that concurrent
// writers never lose each other's entries: the document's key + ".history"
// (Redis: key + ":history"; Nacos: dataId + ".history" in its group; a
// file: .bulwark/NAME.history in its directory, see internal/statedir). Every
// tool that opens a document through Open uses that place.
package rulechange
