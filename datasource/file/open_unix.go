//go:build unix

package file

import (
	"os"
	"syscall"
)

// openFlags opens a file for Read without blocking: a named pipe with no
// writer opens at once (and is then refused, as it is not a regular file),
// and a terminal does not become the controlling one. O_NONBLOCK has no
// effect on the reads of a regular file.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
