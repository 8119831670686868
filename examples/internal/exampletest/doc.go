// Package exampletest holds what the examples' tests share: running an
// example's run function while the test reads what it prints (Start,
// Output.WaitFor), the lines every example that follows a key prints for
// the same changes (FollowsLiveChanges), the README's go run commands
// (GoRun), the rules file an example ships with and saving it as editors
// do (Shipped, Save), and servers that never answer or refuse connections
// (Unresponsive, Refused, FailsFast).
//
// It is a helper of the examples' tests, not of the examples: each
// example stays readable on its own.
package exampletest
