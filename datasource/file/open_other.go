//go:build !unix

package file

import "os"

// openFlags opens a file for Read.
const openFlags = os.O_RDONLY
