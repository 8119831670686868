package file_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwark-go/bulwark/datasource/datasourcetest"
	"github.com/bulwark-go/bulwark/datasource/file"
)

func harness(opts ...file.Option) datasourcetest.Harness {
	return datasourcetest.Harness{
		New: func(t *testing.T) datasourcetest.Backend {
			path := filepath.Join(t.TempDir(), "rules.json")
			at := func(path string) datasourcetest.Backend {
				return datasourcetest.Backend{
					Put: func(_ context.Context, data []byte) error {
						// Another client: an editor's atomic save.
						tmp := path + ".editor-tmp"
						if err := os.WriteFile(tmp, data, 0o644); err != nil {
							return err
						}
						return os.Rename(tmp, path)
					},
					Delete: func(context.Context) error {
						if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
							return err
						}
						return nil
					},
				}
			}
			b := at(path)
			b.Source = file.New(path, opts...)
			b.Overlay = func(g string) datasourcetest.Backend { return at(path + ".overlay." + g) }
			return b
		},
	}
}

func TestConformance(t *testing.T) {
	datasourcetest.Run(t, harness())
}

func TestConformancePolling(t *testing.T) {
	datasourcetest.Run(t, harness(file.WithPolling()))
}

// In-place writes (truncate, then write) instead of renames.
func TestConformanceInPlaceWrites(t *testing.T) {
	h := harness()
	newBackend := h.New
	h.New = func(t *testing.T) datasourcetest.Backend {
		b := newBackend(t)
		path := strings.TrimPrefix(b.Source.(*file.Source).String(), "file:")
		b.Put = func(_ context.Context, data []byte) error { return os.WriteFile(path, data, 0o644) }
		return b
	}
	datasourcetest.Run(t, h)
}
