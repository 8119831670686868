// Package file is the embedded default datasource: a rule document in a
// local file. [New] returns a [Source] that is a datasource.Source, a
// datasource.Watcher and a datasource.Sink.
//
// Reading: a file that does not exist is a missing document (the rules are
// cleared, or kept with datasource.WithKeepOnMissing), not an error; a
// symbolic link is followed. The revision is the content revision
// (datasource.ContentRevision of the bytes).
//
// Watching: Watch watches the file's directory, not the file, with
// fsnotify (inotify, kqueue, ReadDirectoryChangesW), so that every way a
// file is replaced is seen: an in-place write, an editor's atomic save (a
// temporary file renamed over the file), and a Kubernetes ConfigMap update
// (the file is a link into "..data/", and "..data" is a link that is
// atomically replaced). When the file is a link into another directory,
// that directory is watched too. A rename or creation is read at once; a
// burst of in-place write events is read once, WithDebounce (5 ms) after
// its first; only a change of content is reported. When
// notifications are not available (inotify missing or its limits reached,
// or WithPolling) Watch reports datasource.ErrWatchUnsupported and the
// Readable polls instead, reading and hashing the file every poll
// interval. If the directory is removed the watch breaks; the Readable
// reads again (a missing document) and watches again with backoff.
//
// Writing: Write compares the file's current revision with the expected
// one and replaces the file under an exclusive flock(2) lock on a lock file
// beside it (".<name>.lock", or WithLockPath), which every Source in this
// process and in others takes, so concurrent writers serialise and exactly
// one of several writers at a revision wins. The new content is written to
// a temporary file in the same directory, synced, renamed over the file,
// and the directory is synced: a reader sees the old document or the new
// one, and a crash after Write returns keeps the new one. The file keeps
// its permission bits (and owner, where the process may set it); a new file
// gets WithPerm (0644). A file that is a link has its target replaced.
package file
