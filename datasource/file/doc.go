// Package file is the embedded default datasource: a rule document in a
// local file. [New] returns a [Source] that is a datasource.Source, a
// datasource.Watcher and a datasource.Sink.
//
// Reading: a file that does not exist (or a link that leads nowhere) is a
// missing document (the rules are cleared, or kept with
// datasource.WithKeepOnMissing), not an error; symbolic links are
// followed. The revision is the content revision (the first 16 bytes
// of the SHA-256 of the bytes, in hex). Read opens the file without
// blocking and refuses anything that is not a regular file, naming the
// path and what it is ("is a named pipe (FIFO), not a regular file"): a FIFO with no writer, a device or a
// socket can neither hang a read nor stream forever. A document larger than
// the limit the Readable or Writable puts in the read's context
// (datasource.WithMaxSize, 4 MiB by default) is refused with an error
// wrapping datasource.ErrTooLarge: at once when the file's size says so,
// else as soon as one byte too many was read; it is never held whole. Read
// checks its context before it opens the file and between chunks. What it
// cannot interrupt is a single system call that blocks: stat, open or read
// on a hung network mount (NFS "hard", a stuck FUSE server). Such a Read
// returns when the kernel gives up; the Readable does not wait for it to
// close (it bounds Close separately).
//
// Watching: Watch watches directories with fsnotify (inotify, kqueue,
// ReadDirectoryChangesW), not the file, so that every way a file is
// replaced is seen: an in-place write, an editor's atomic save (a
// temporary file renamed over the file, or the file renamed away as a
// backup and written again), and a link swapped by renaming a new link
// over it. It resolves the path one component at a time, as the system
// does, and watches the directory of every symbolic link met on the way
// and of the file the chain ends at: the file itself a link, a link in the
// middle of a chain (rules.json -> mid/current -> a/rules.json, with
// mid/current retargeted), and a directory on the path that is a link (a
// Kubernetes ConfigMap volume: rules.json -> ..data/rules.json, with
// "..data" -> "..2026_01_01_..." swapped). A directory of the chain that
// does not exist yet is waited for by watching its closest existing
// parent.
//
// Only events on those entries (or on a directory that leads to one)
// count; after each, Watch resolves the chain again, moves its watches to
// the directories it now goes through, and reads the file. Events on other
// files in the same directories, such as a log file beside the rules, are
// ignored: they cause no read. A rename, creation or removal is read at
// once; a burst of in-place write events is read once, 5 ms
// after its first. Each such read is hinted with the revision it found,
// not the document (the watcher keeps no copy of it), even when it is the
// revision Watch found last: the Readable may have read another document
// in between, and it drops the hints of the document it holds. When the
// kernel's event queue overflows, Watch reads at once. When
// notifications are not available (inotify missing or its limits reached)
// Watch reports datasource.ErrWatchUnsupported and the Readable polls
// instead, reading and hashing the file every poll interval. A file
// system that takes watches but delivers no events for changes made
// elsewhere (some network and FUSE mounts) is read by the Readable's
// reconcile: set datasource.WithReconcileInterval to how soon such a
// change must be seen. If the directory that holds the path's own entry is removed or
// renamed the watch breaks; the Readable reads again (a missing document)
// and watches again with backoff.
//
// Writing: Write compares the file's current revision with the expected
// one and replaces the file under an exclusive flock(2) lock on a lock file
// (".bulwark/<name>.lock" beside it), which every Source in this process
// and in others takes, so concurrent writers serialise and exactly one of
// several writers at a revision wins. The .bulwark directory, where
// bulwark keeps what is not a document (lock files, instance records, the
// CLI's history), is made with a .gitignore that ignores everything in
// it, so that a document kept in git is committed alone. Its read of the current
// document is a Read: bounded by the same limit, and refusing what is not a
// regular file. The new content is written to a temporary file in the same
// directory, synced, renamed over the file, and the directory is synced: a
// reader sees the old document or the new one, and a crash after Write
// returns keeps the new one. The file keeps its permission bits (and
// owner, where the process may set it); a new file gets 0644. A
// file that is a link has its target (the end of the chain) replaced.
//
// Delete compares and removes under the same lock, then syncs the
// directory. A file that is a link has the link removed, not its target.
package file
