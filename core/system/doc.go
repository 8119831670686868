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
// Go's zero value is 0, and a threshold of 0 would block all inbound
// traffic, so [Rule.Validate] rejects 0 and tells you to write -1
// ([Unset]). Documents that leave a field out get -1 from the converter.
// Java's inherited resource and limitApp fields are accepted in documents
// and ignored.
package system
