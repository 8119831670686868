// Package system holds adaptive system-protection rules: Java Sentinel's
// SystemRule.
//
// A [Rule] protects the whole process rather than one resource: it limits
// inbound entries (core.Inbound) when the machine or the service as a
// whole is overloaded. Its thresholds are
//
//   - highestSystemLoad: the 1-minute load average, checked the BBR way
//     (an entry is blocked only if concurrency > 1 and concurrency >
//     maxSuccessQps × minRt / 1000);
//   - highestCpuUsage: CPU usage, a ratio in (0, 1], the larger of the
//     machine's (or container's, by its cgroup limit) and the process's;
//   - qps: inbound entries per second, all resources together;
//   - avgRt: average response time of inbound entries, ms;
//   - maxThread: concurrent inbound entries.
//
// # Zero values and Java defaults
//
// Java's SystemRule starts with every threshold at -1, meaning "unset".
// In Go a threshold left at 0 is unset too ([Rule.WithDefaults] writes it
// as -1, [Unset]), so a rule sets only the thresholds it names, as a
// document that leaves the others out. Java takes a document's explicit 0
// as a threshold that blocks all inbound traffic; package converter
// refuses it and asks for -1. Java's inherited resource and limitApp
// fields are accepted in documents and ignored.
//
// # Checking
//
// The engine (package core) merges the rules in force into one set of
// limits: for each threshold, the smallest value any rule sets (Java loads
// rules one by one and keeps the minimum; here the combination is swapped
// in whole). It runs the checks in Java's order: qps (inbound pass QPS
// plus the entry's count above the threshold), thread (inbound entries in
// flight above maxThread, the entry itself not counted), avgRt, load, cpu.
// The load check is BBR's: above highestSystemLoad an entry is blocked only
// when more than one call is in flight and more are in flight than
// maxSuccessQps × minRt / 1000, so a loaded machine still admits what the
// service has shown it can complete. With no completion in the window,
// minRt is the engine's maximum RT and maxSuccessQps 0: under high load, a
// second concurrent call is blocked until calls complete.
//
// # Collectors
//
// Load and CPU usage come from a [Collector], which the engine samples once
// a second from a goroutine of its own, started only while a rule with
// highestSystemLoad or highestCpuUsage is in force, stopped when no such
// rule remains and by core.Engine.Close (which waits for it). The first
// sample is taken before the rules go live. The default collector reads
// /proc/loadavg, /proc/stat, /proc/self/stat and the process's cgroup (v2
// cpu.max and cpu.stat, or v1 cpu.cfs_quota_us, cpu.cfs_period_us and
// cpuacct.usage), so that in a container CPU usage is measured against the
// container's limit: CPU usage is the larger of the system's (the
// container's CPU time over its cgroup limit, the smallest on the path to
// the root, when it has one; else the machine's) and the process's (its
// CPU time over the cores it may use), as Java's SystemStatusListener
// reports. A metric that cannot be read (another OS, a missing file)
// disables its check until it can be read again, and the engine logs the
// failure once; it never blocks traffic. core.WithSystemCollector injects
// another collector (tests use fixed values).
package system
