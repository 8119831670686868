// Package console is the fleet rule console behind "bulwark console": one
// page over the rule documents of one or more config centers, with every
// instance that registered itself beside them (datasource.Registry) or
// was named by hand, the fleet's statistics summed per resource from each
// instance's admin JSON, and rule editing that is signed in, reviewed and
// audited.
//
// The server is an http.Handler (Server). Its page is embedded (no CDN:
// it works offline); its API is JSON under /api/. Every request but the
// page, the session probe and the sign-in needs a signed-in user; every
// write needs the editor role and the session's CSRF token in the
// X-CSRF-Token header. Users sign in with a password checked against a
// users file of bcrypt hashes (written by "bulwark console passwd"), or
// come signed in through a trusted proxy's header (WithAuthHeader).
package console
