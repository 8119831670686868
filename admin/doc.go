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
//	GET .../api/suggest suggested rules from the baseline, as JSON (?period=10m&factor=1.3)
//
// The page shows the resources (pass/s, block/s by kind, errors/s, average
// RT and concurrency, each with a 60-second sparkline), the circuit
// breakers and their states, the system figures, the rules in force per
// kind with the source and revision they came from, each datasource's
// Status, the token service's health when the engine has one (cluster
// rules: healthy or failing since when and why, requests, fallbacks), the
// recent rule-change events with their diffs, and the rules suggested from
// each resource's baseline (see below). Kinds are named as a rule-set
// document names them (flow, degrade, system, authority, paramFlow), enums
// by name ("grade": "thread"), times on a 24-hour clock, counts with their
// unit, and an empty table says why it is empty. The HTML itself holds a
// summary of the state rendered by the server (resources, rules, breakers,
// datasources), so that a browser without JavaScript shows it; the script
// replaces it with the live sections. Everything it
// needs is embedded (no CDN: it works offline); it is readable on a phone;
// it changes nothing (any method but GET and HEAD is refused). It reads the
// engine through [core.Engine.Stats], [core.Engine.History],
// [core.Engine.RuleEvents] and [core.Engine.Suggest], which never block an
// entry.
//
// /api/suggest reports [core.Engine.Suggest] over period (a Go duration,
// at most 1h; default 10m) with factor as headroom (1 to 10; default
// 1.3): per resource its baseline (peak pass QPS and when, peak error
// ratio and average RT, totals) and the shadow rules suggested from it,
// and under "documents" the Sentinel documents "flow", "degrade" and
// "ruleset": the rules in force with the suggestions in place, ready for
// bulwark apply (bulwark suggest --from URL prints one). A bad parameter
// is a 400.
//
// The handler adds no authentication: mount it where only operators reach.
package admin
