// Package paramvalue reads the value of a hot-parameter item
// (hotspot.ParamFlowItem): its Object, written as text, as the Go value
// its ClassType, a Java type name, says. The item's Validate checks that
// it reads, and the engine's limiters (internal/paramlimit) match
// arguments against the values read.
package paramvalue
