// Package rulesfile finds the rules.json an example ships beside its
// source, from whatever directory the example runs in, the same way for
// every example that follows a file. It is a helper of the examples, not a
// public API.
package rulesfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// Default returns the rules file an example follows when no -rules flag
// names one: the rules.json beside the calling source file, or else a copy
// of builtin (see [Locate]), which it tells out.
func Default(out io.Writer, example string, builtin []byte) (string, error) {
	path, copied, err := Locate(sourceDir(2), os.TempDir(), example, builtin)
	if err != nil {
		return "", fmt.Errorf("%s: %w", example, err)
	}
	if copied {
		fmt.Fprintf(out, "the rules.json beside the source is not there: following a copy of the built-in one\n")
	}
	return path, nil
}

// SourceDir is the directory of the source file that calls it: go run and
// go build record it (unless -trimpath), so the rules.json beside it is
// found from any working directory. "" when it is not known.
func SourceDir() string { return sourceDir(2) }

// sourceDir is the directory of the source file skip frames up.
func sourceDir(skip int) string {
	_, file, _, ok := runtime.Caller(skip)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(file)
}

// Locate returns the rules.json in dir; when dir has none (a binary moved
// away from its source, a -trimpath build) it returns a copy of builtin in
// tmp/bulwark-<example>/rules.json, written if it is not there yet (an
// earlier run's edits are kept), and copied is true.
func Locate(dir, tmp, example string, builtin []byte) (path string, copied bool, err error) {
	if dir != "" {
		path := filepath.Join(dir, "rules.json")
		if _, err := os.Stat(path); err == nil {
			return path, false, nil
		}
	}
	path = filepath.Join(tmp, "bulwark-"+example, "rules.json")
	if _, err := os.Stat(path); err == nil {
		return path, true, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(path, builtin, 0o600); err != nil {
		return "", false, err
	}
	return path, true, nil
}
