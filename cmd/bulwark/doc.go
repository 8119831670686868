// Command bulwark validates, reviews, applies and rolls back Sentinel rule
// documents in a file or a config center (etcd, Redis, ZooKeeper, Nacos).
//
//	bulwark suggest --from http://10.0.0.7:8080/debug/bulwark/ > rules.json   # shadow rules from a service's baseline
//	bulwark validate rules.json                      # every problem, FILE:LINE:COL: [i] "resource": field: problem
//	bulwark diff etcd://127.0.0.1:2379/bulwark/order-service/prod/flow rules.json
//	bulwark apply etcd://127.0.0.1:2379/bulwark/order-service/prod/flow rules.json
//	bulwark set redis://127.0.0.1:6379/bulwark:order-service:prod:flow "GET /orders" count=200
//	bulwark history zk://127.0.0.1:2181/bulwark/order-service/prod/flow
//	bulwark rollback nacos://127.0.0.1:8848/order-service-flow-rules?group=SENTINEL_GROUP
//	bulwark apply --canary canary etcd://127.0.0.1:2379/bulwark/order-service/prod/flow rules.json
//	bulwark promote etcd://127.0.0.1:2379/bulwark/order-service/prod/flow canary   # or: abort
//	bulwark console passwd --role editor alice         # then: the fleet console on 127.0.0.1:8719
//	bulwark console --source etcd://127.0.0.1:2379/bulwark/order-service/prod/flow
//
// Sources are URLs: a path or file:///path, etcd://host:2379/key,
// redis://host:6379/key (?channel=, default key + ":changed"; ?db=),
// zk://host:2181/path, nacos://host:8848/dataId (?group=, default
// DEFAULT_GROUP; ?namespace=). Several servers are separated by commas.
// Credentials and TLS come from flags or the environment (BULWARK_USER,
// BULWARK_PASSWORD, BULWARK_TLS_CA, BULWARK_TLS_CERT, BULWARK_TLS_KEY) and are
// never printed. The clients' own log lines (go-redis, etcd,
// ZooKeeper, the Nacos SDK) are printed with -v only.
//
// suggest prints the rules a running service's admin page (package admin)
// suggests from the traffic it measured, every one a shadow rule, in a
// document ready for apply.
//
// apply --canary GROUP writes the overlay of a canary group beside the
// document (see datasource.WithOverlay); promote writes it as the document
// and removes it, abort removes it, status lists them.
//
// console serves the fleet rule console (package internal/console): the
// instances registered beside the documents, their statistics summed, and
// rule edits by people signed in as editors, reviewed, compare-and-set and
// recorded in the same history under their name.
//
// Every change made by apply, edit, set, rollback, promote and abort is compare-and-set
// against the revision read, and is recorded in an audit trail beside the
// document, in the same config center: the document's key + ".history"
// (Redis: key + ":history"; a file: .bulwark/NAME.history in its directory,
// beside the lock files, a directory with a .gitignore that keeps it out of
// git), the last 100 changes.
//
// Every command that writes (apply, edit, set, rollback, promote, abort)
// prints the change first, then asks at a terminal; when standard input is
// not a terminal (a pipe, CI) it refuses, saying so, unless --yes is given.
//
// Exit codes: 0 ok, 1 invalid document or differences found (diff), 2 usage
// (or a change not confirmed), 3 conflict (someone changed the document in
// between: nothing was written), 4 the config center could not be reached or
// refused the request.
//
// Run "bulwark help COMMAND" or "bulwark COMMAND --help" for a command's
// flags.
package main
