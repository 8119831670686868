package datasource

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/datasource/internal/atomicfile"
)

// cachePath is the last-good file of the datasource: its name made safe
// for a file name, plus a short hash of the full name so that two names
// that sanitise alike do not share a file.
func (r *Readable[T]) cachePath() (string, error) {
	if r.name == "" {
		return "", named(r.name, "cache: %w", errors.New("a cache directory needs a name (WithName)"))
	}
	safe := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			return c
		}
		return '_'
	}, r.name)
	safe = strings.Trim(safe, ".")
	if len(safe) > 100 {
		safe = safe[:100]
	}
	sum := sha256.Sum256([]byte(r.name))
	return filepath.Join(r.opts.cacheDir, safe+"-"+hex.EncodeToString(sum[:4])+".cache"), nil
}

// storeCache records an applied document (or removes the record when the
// applied state is "missing", so a restart does not revive deleted rules).
// Cache errors are logged, never fatal: the cache is a fallback.
func (r *Readable[T]) storeCache(snap Snapshot) {
	if r.opts.cacheDir == "" {
		return
	}
	path, err := r.cachePath()
	if err == nil {
		if snap.Missing {
			if err = os.Remove(path); errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else if err = os.MkdirAll(r.opts.cacheDir, 0o755); err == nil {
			err = atomicfile.Write(path, snap.Data, 0o644)
		}
	}
	if err != nil {
		r.log.Warn("datasource cache not updated", "err", err)
	}
}

// loadCache applies the last-good document, if there is one.
func (r *Readable[T]) loadCache() error {
	path, err := r.cachePath()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return named(r.name, "cache: %w", err)
	}
	v, err := r.conv.Convert(data)
	if err != nil {
		return named(r.name, "cache %s: decode: %w", path, err)
	}
	if err := r.prop.Set(v); err != nil {
		return named(r.name, "cache %s: rejected: %w", path, err)
	}
	rev := ContentRevision(data)
	if !r.cur.valid {
		// Remember it, so a source that comes back with the same bytes is
		// not decoded again.
		r.cur = docState{valid: true, rev: rev, data: data}
	}
	now := time.Now()
	r.mu.Lock()
	r.status.Revision = rev
	r.status.AppliedAt = now
	r.status.FromCache = true
	r.mu.Unlock()
	r.log.Warn("datasource applied the last-good cache", "path", path, "revision", rev)
	return nil
}
