package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"

	"github.com/bulwark-go/bulwark/datasource"
)

// tracker keeps a watch on every directory that the path's chain of links
// goes through.
type tracker struct {
	w    *fsnotify.Watcher
	path string
	// home is the directory that holds the path's own entry, with its
	// links resolved. Its removal breaks the watch.
	home string
	// names are the entries (links resolved in their directories) whose
	// change can change what the path reads: every link followed and the
	// file the chain ends at.
	names   []string
	watched map[string]bool
}

// update follows the chain again and moves the watches to the directories
// it now goes through.
func (t *tracker) update() error {
	home, err := filepath.EvalSymlinks(filepath.Dir(t.path))
	if err != nil {
		return fmt.Errorf("file: watch %s: %w", filepath.Dir(t.path), err)
	}
	t.home = home
	t.names = linkChain(t.path)
	want := map[string]bool{}
	if err := t.add(home); err != nil {
		if isLimit(err) {
			return fmt.Errorf("file: watch %s: %w: %w", home, datasource.ErrWatchUnsupported, err)
		}
		return fmt.Errorf("file: watch %s: %w", home, err)
	}
	want[home] = true
	for _, name := range t.names {
		// The closest directory of name that exists: a dangling link's
		// target directory may be created later.
		for dir := filepath.Dir(name); !want[dir]; dir = filepath.Dir(dir) {
			err := t.add(dir)
			if err == nil {
				want[dir] = true
				break
			}
			if isLimit(err) {
				return fmt.Errorf("file: watch %s: %w: %w", dir, datasource.ErrWatchUnsupported, err)
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	for dir := range t.watched {
		if !want[dir] {
			_ = t.w.Remove(dir) // fails when the directory is gone already
			delete(t.watched, dir)
		}
	}
	return nil
}

// add watches dir. It adds it again when it is watched already: a
// directory removed and made again since (a new inode) needs a new watch,
// and adding a watch again is cheap.
func (t *tracker) add(dir string) error {
	if err := t.w.Add(dir); err != nil {
		return err
	}
	t.watched[dir] = true
	return nil
}

// relevant reports whether an event on name can change what the path
// reads: name is one of the chain's entries or a directory on the way to
// one of them.
func (t *tracker) relevant(name string) bool {
	for _, n := range t.names {
		if n == name || within(name, n) {
			return true
		}
	}
	return name == t.home
}

// within reports whether the clean path p is inside the directory dir.
func within(dir, p string) bool {
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return len(p) > len(dir) && strings.HasPrefix(p, dir)
}

// maxLinks bounds how many links linkChain follows (a loop ends there).
const maxLinks = 255

// linkChain resolves path (absolute) as the system does, one component at
// a time, and returns the entries met on the way whose change can change
// what path refers to: each symbolic link followed, as its path in its
// directory with that directory's own links resolved, and the entry the
// chain ends at (which may not exist: then the path where it would be).
func linkChain(path string) []string {
	var names []string
	vol := filepath.VolumeName(path)
	dest := vol + string(filepath.Separator)
	todo := path[len(vol):]
	for links := 0; ; {
		todo = strings.TrimLeft(todo, string(filepath.Separator))
		if todo == "" {
			return append(names, dest)
		}
		comp, rest, _ := strings.Cut(todo, string(filepath.Separator))
		todo = rest
		switch comp {
		case ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing (or unreadable): this is where the file would be.
			return append(names, filepath.Join(next, todo))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dest = next
			continue
		}
		names = append(names, next)
		if links++; links > maxLinks {
			return names
		}
		target, err := os.Readlink(next)
		if err != nil {
			return names
		}
		if filepath.IsAbs(target) || filepath.VolumeName(target) != "" {
			vol = filepath.VolumeName(target)
			dest = vol + string(filepath.Separator)
			target = target[len(vol):]
		}
		todo = target + string(filepath.Separator) + todo
	}
}

// isLimit reports an error that means notifications are not available here.
func isLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) ||
		errors.Is(err, syscall.ENOSYS) || errors.Is(err, errors.ErrUnsupported)
}
