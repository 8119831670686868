package datasource

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
	"github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/internal/atomicfile"
)

// cachePath is the last-good file of the datasource: its name (WithName,
// or the Source's String) made safe for a file name, plus a short hash of
// the Source's identity (its String: server, namespace or database, and
// key), so that two Readables of the same key on different servers or
// namespaces never share a file, nor two names that sanitise alike.
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
	sum := sha256.Sum256([]byte(r.name + "\x00" + r.identity))
	return filepath.Join(r.opts.cacheDir, safe+"-"+hex.EncodeToString(sum[:6])+".cache"), nil
}

// Cache files hold rules, which may be sensitive: only the process's user
// may read them.
const (
	cacheDirPerm  = 0o700
	cacheFilePerm = 0o600
)

// storeCache records an applied document (or removes the record when the
// applied state is "missing", so a restart does not revive deleted rules).
// Cache errors are logged, never fatal: the cache is a fallback. A failed
// update is retried (see retryCache) until it succeeds or a later document
// replaces it, so a later boot never starts from a stale record.
func (r *Readable[T]) storeCache(snap Snapshot) {
	if r.opts.cacheDir == "" {
		return
	}
	if err := r.writeCache(snap); err != nil {
		r.cacheN++
		r.pending = &snap
		r.log.Warn("datasource cache not updated; will retry", "err", err, "failures", r.cacheN)
		return
	}
	r.pending, r.cacheN = nil, 0
}

// retryCache retries a failed cache update.
func (r *Readable[T]) retryCache() {
	if r.pending != nil && r.ctx.Err() == nil {
		r.storeCache(*r.pending)
	}
}

func (r *Readable[T]) writeCache(snap Snapshot) error {
	path, err := r.cachePath()
	if err != nil {
		return err
	}
	if snap.Missing {
		if err := atomicfile.Remove(path); err != nil {
			return named(r.name, "cache: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(r.opts.cacheDir, cacheDirPerm); err != nil {
		return named(r.name, "cache: %w", err)
	}
	if err := atomicfile.Write(path, snap.Data, cacheFilePerm); err != nil {
		return named(r.name, "cache: %w", err)
	}
	// atomicfile keeps an existing file's mode: a record written by an
	// older release may be group- or world-readable.
	if err := os.Chmod(path, cacheFilePerm); err != nil {
		return named(r.name, "cache: %w", err)
	}
	return nil
}

// loadCache applies the last-good document, if there is one. A document a
// lenient RuleManager applies in part counts as applied, as it did when it
// was cached.
func (r *Readable[T]) loadCache() error {
	path, err := r.cachePath()
	if err != nil {
		return err
	}
	data, err := r.readCache(path)
	if err != nil {
		return named(r.name, "cache: %w", err)
	}
	rev := contentrev.Of(data)
	rejected, warn := r.set(Snapshot{Data: data, Revision: rev})
	if rejected != nil {
		return fmt.Errorf("cache %s: %w", path, rejected)
	}
	if !r.last.valid || r.last.missing {
		// Remember it, so a source that comes back with the same bytes is
		// not decoded again.
		r.last = docState{valid: true, rev: rev, sum: sha256.Sum256(data), warn: warn}
	}
	now := time.Now()
	r.mu.Lock()
	r.status.Revision = rev
	r.status.AppliedAt = now
	r.status.FromCache = true
	if warn != nil {
		r.status.Err = errors.Join(r.status.Err, warn)
	}
	r.mu.Unlock()
	r.log.Warn("datasource applied the last-good cache", "path", path, "revision", rev)
	return nil
}

// readCache reads the cache file, refusing one over the size limit.
func (r *Readable[T]) readCache(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return limit.ReadAll(limit.With(r.ctx, r.opts.maxSize), f)
}
