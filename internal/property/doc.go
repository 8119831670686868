// Package property is the mechanism of core.Property: a value that changes
// over time and the listeners told of every change, with what package core
// and package datasource pass each other besides the value, which users do
// not call: the source of each value, whether every listener applies the
// valid part of a value, and the news of a value refused before it could
// be set.
//
// core.Property[T] is defined as Cell[T, core.RuleSource] and has Set,
// Get and Listen of its own. Package core converts a *core.Property to a
// *Cell to register a RuleManager (a listener that takes the source,
// partial values and refusals); package datasource converts the
// *core.Property its Readable makes to a *Cell to set each document's
// value with its source (SetFrom), ask AcceptsPartial, and Reject a
// document that does not decode.
package property
