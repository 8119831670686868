// Package console is the fleet rule console behind "bulwark console": one
// page over the rule documents of one or more config centers, with every
// instance that registered itself beside them (datasource.Registry) or
// was named by hand, the fleet's statistics summed per resource from each
// instance's admin JSON, and rule editing that is signed in, reviewed and
// audited.
//
// The server is an http.Handler (Server). Its page is embedded (no CDN:
// it works offline); its API is JSON under /api/:
//
//	GET  /api/session     who is signed in, their role and CSRF token
//	POST /api/signin      {"name", "password"}: starts a session (a cookie)
//	POST /api/signout
//	GET  /api/fleet       the instances (up, down, stale) and the figures summed per resource
//	GET  /api/instance    ?key=: one instance's admin JSON, as last fetched
//	GET  /api/docs        the documents
//	GET  /api/doc         ?source=N: a document's rules, revision, canary groups, or why it does not decode
//	GET  /api/history     ?source=N: its recorded changes, newest first
//	POST /api/edit        add, change or delete one rule (of the document, or of a canary group's overlay)
//	POST /api/replace     replace a document (one that does not decode)
//	POST /api/rollback    write back what a history entry replaced
//	POST /api/promote     a canary group's overlay becomes the document
//	POST /api/abort       a canary group's overlay is removed
//
// Every request but the page, the session probe and the sign-in needs a
// signed-in user; every POST needs the session's CSRF token in the
// X-CSRF-Token header and a JSON body, and every write the editor role.
// A write names the revision the page read and carries "review": true to
// get the diff without writing; it is written with compare-and-set on
// that revision, so an edit made meanwhile is a conflict (409, with the
// document as it is now and the history entries since), never
// overwritten. Writes go through internal/rulechange, the machinery of
// the CLI: the same validation, diff and history, recorded under the
// signed-in name.
//
// Users sign in with a password checked against a users file of bcrypt
// hashes (SetUser; "bulwark console passwd"), or come signed in through a
// trusted proxy's header (WithAuthHeader).
package console
