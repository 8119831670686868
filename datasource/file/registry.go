package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/internal/atomicfile"
	"github.com/bulwark-go/bulwark/internal/statedir"
)

// Register registers inst beside the document (datasource.Registry): its
// record is the file ID.json in the directory .bulwark/NAME.instances
// beside the file (NAME is the document's file name), rewritten every
// beat. A file does not expire: once its beats stop, Instances reports it
// Stale, and Close removes it. The .bulwark directory holds a .gitignore
// that ignores everything in it.
func (s *Source) Register(ctx context.Context, inst datasource.Instance) (io.Closer, error) {
	return s.reg.Register(ctx, inst)
}

// Instances lists the instances registered beside the document
// (datasource.Registry).
func (s *Source) Instances(ctx context.Context) ([]datasource.Instance, error) {
	return s.reg.Instances(ctx)
}

// instanceStore keeps each record in a file of its own (registry.Store).
type instanceStore struct{ dir string }

func newInstanceStore(path string) instanceStore {
	dir, base := filepath.Split(path)
	return instanceStore{dir: filepath.Join(dir, ".bulwark", base+".instances")}
}

func (st instanceStore) Put(ctx context.Context, id string, rec []byte, _ time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := statedir.Dir(filepath.Dir(filepath.Dir(st.dir))); err != nil {
		return err
	}
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(st.dir, id+".json"), rec, 0o644)
}

func (st instanceStore) List(ctx context.Context) ([][]byte, error) {
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs [][]byte
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue // a temporary file of a Put, or not a record
		}
		b, err := os.ReadFile(filepath.Join(st.dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since ReadDir
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		recs = append(recs, b)
	}
	return recs, nil
}

func (st instanceStore) Delete(ctx context.Context, id string) error {
	err := atomicfile.Remove(filepath.Join(st.dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
