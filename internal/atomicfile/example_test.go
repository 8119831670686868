package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bulwark-go/bulwark/internal/atomicfile"
)

func ExampleWrite() {
	dir, err := os.MkdirTemp("", "atomicfile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rules.json")

	if err := atomicfile.Write(path, []byte("[]\n"), 0o600); err != nil {
		panic(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		panic(err)
	}
	// Replacing keeps the file's permission bits, not perm.
	if err := atomicfile.Write(path, []byte(`[{"resource":"r","count":1}]`+"\n"), 0o600); err != nil {
		panic(err)
	}
	data, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	entries, _ := os.ReadDir(dir)
	fmt.Printf("%s%v %d file\n", data, fi.Mode().Perm(), len(entries))
	// Output:
	// [{"resource":"r","count":1}]
	// -rw-r----- 1 file
}
