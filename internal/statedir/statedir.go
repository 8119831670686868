package statedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bulwark-go/bulwark/internal/atomicfile"
)

// Dir returns the state directory beside the documents in dir,
// dir/.bulwark, made if needed with its .gitignore. A dir that is itself
// a state directory is returned as it is.
func Dir(dir string) (string, error) {
	state := filepath.Join(dir, ".bulwark")
	if filepath.Base(filepath.Clean(dir)) == ".bulwark" {
		state = dir
	}
	if err := os.MkdirAll(state, 0o755); err != nil {
		return "", err
	}
	ignore := filepath.Join(state, ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
		if err := atomicfile.Write(ignore, []byte("*\n"), 0o644); err != nil {
			return "", err
		}
	}
	return state, nil
}
