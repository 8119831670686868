// Package atomicfile replaces a file's content atomically: a temporary file
// in the same directory is written, synced and renamed over the target, and
// the directory is synced, so a reader sees the old content or the new one,
// never a mix, and the new content survives a crash once Write returns.
// Remove removes a file just as durably.
package atomicfile
