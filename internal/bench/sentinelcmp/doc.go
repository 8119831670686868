// Package sentinelcmp measures bulwark's rule loads side by side with
// sentinel-golang's (github.com/alibaba/sentinel-golang), in one test
// binary, on the same machine and in the same run, so that the ratio holds
// however loaded the machine is.
//
// It is a module of its own, so that the product's go.mod never requires
// sentinel-golang and `go test ./...` at the root does not build it; it
// uses this checkout of bulwark through a replace directive. Its go.sum is
// complete: once the modules are in the module cache (the first run
// downloads them from the module proxy) it runs offline.
//
// Run it from this directory, with benchstat for the figures:
//
//	cd internal/bench/sentinelcmp
//	go test -run '^$' -bench . -benchmem -count 6 -cpu 2 | tee load.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl load.txt
//
// The benchmarks:
//
//   - BenchmarkLoad10kChanged/impl=sentinel: flow.LoadRules of 10,000 QPS
//     rules, one per resource, every rule's threshold different from the
//     rules in force (the lists alternate); sentinel-golang's logging is
//     set to warnings, as bulwark's engine is silent by default, so that
//     neither side formats 10,000 rules into a log line.
//   - BenchmarkLoad10kChanged/impl=bulwark: Engine.Flow().Load of the same
//     rules.
//   - BenchmarkDocument10k: a JSON document of the same 10,000 rules from
//     bytes to in force in bulwark: converter.FlowRules().Convert, then
//     Load (defaults, validation, compile, swap).
package sentinelcmp
