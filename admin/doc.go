// Package admin serves a read-only live view of a bulwark engine: a JSON
// API and one page, refreshed every second.
//
// [Handler] returns an http.Handler that the caller mounts where they
// like, for example:
//
//	mux.Handle("/debug/bulwark/", admin.Handler(engine, admin.WithDatasources(ds)))
//
// It serves, relative to the path it is mounted at (whatever the prefix):
//
//	GET .../            the page
//	GET .../api/state   everything the page shows, as JSON
//
// The page shows the resources (pass/s, block/s by kind, errors/s, average
// RT and concurrency, each with a 60-second sparkline), the circuit
// breakers and their states, the system figures, the rules in force per
// kind with the source and revision they came from, each datasource's
// Status, the token service's health when the engine has one (cluster
// rules: healthy or failing since when and why, requests, fallbacks), and
// the recent rule-change events with their diffs. Everything it
// needs is embedded (no CDN: it works offline); it is readable on a phone;
// it changes nothing (any method but GET and HEAD is refused). It reads the
// engine through [core.Engine.Stats], [core.Engine.History] and
// [core.Engine.RuleEvents], which never block an entry.
//
// The handler adds no authentication: mount it where only operators reach.
package admin
