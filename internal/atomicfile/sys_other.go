//go:build !unix

package atomicfile

import "io/fs"

func owner(fs.FileInfo) (uid, gid int) { return -1, -1 }

// syncDir is a no-op where directories cannot be opened for syncing.
func syncDir(string) error { return nil }
