//go:build !unix

package file

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"
)

// lockFile creates path exclusively and removes it to unlock: a lock that
// processes respect where flock does not exist. A crashed writer leaves the
// file behind; remove it by hand.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	delay := 200 * time.Microsecond
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
		delay = min(delay*2, 20*time.Millisecond)
	}
}
