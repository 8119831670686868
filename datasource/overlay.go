package datasource

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bulwark-go/bulwark/datasource/internal/overlay"
)

// overlayer is a Source that can name the overlay of a group (every
// backend of this module: see WithOverlay).
type overlayer interface {
	Overlay(group string) Source
}

// overlaid is the Source a Readable made with WithOverlay reads: the
// overlay's document while it exists, else the base's. Both are read each
// time, so that the watches start from what was read; a change of either
// is a hint to read again.
type overlaid struct {
	base, over Source
	group      string

	mu               sync.Mutex
	lastBase, lastOv Snapshot // the latest Read's, where the watches start
}

// withOverlay returns src overlaid by the overlay of group, or a Source
// whose every Read fails saying why it cannot be.
func withOverlay(src Source, group string) Source {
	if !overlay.ValidGroup(group) {
		return broken{fmt.Errorf("datasource: overlay group %q: want 1 to 64 letters, digits, '-' or '_'", group)}
	}
	o, ok := src.(overlayer)
	if !ok {
		return broken{fmt.Errorf("datasource: overlay group %q: %T has no overlays", group, src)}
	}
	return &overlaid{base: src, over: o.Overlay(group), group: group}
}

// String names the base and the group: the last-good cache of an overlaid
// Readable is its own.
func (o *overlaid) String() string {
	return fmt.Sprintf("%s (overlay %s)", describe(o.base), o.group)
}

// Read returns the overlay's document, with its revision prefixed by
// "overlay:GROUP:", while the overlay exists, else the base's as it is.
func (o *overlaid) Read(ctx context.Context) (Snapshot, error) {
	ov, err := o.over.Read(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("overlay %s: %w", o.group, err)
	}
	b, err := o.base.Read(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	o.mu.Lock()
	o.lastBase, o.lastOv = b, ov
	o.mu.Unlock()
	if ov.Missing {
		return b, nil
	}
	ov = normalize(ov)
	ov.Revision = "overlay:" + o.group + ":" + ov.Revision
	return ov, nil
}

// Watch watches the base and the overlay; a change of either is a hint.
// It returns when ctx ends or either watch does, after both have.
func (o *overlaid) Watch(ctx context.Context, _ Snapshot, changed func(Snapshot)) error {
	bw, ok1 := o.base.(Watcher)
	ow, ok2 := o.over.(Watcher)
	if !ok1 || !ok2 {
		return fmt.Errorf("overlay %s: %w", o.group, ErrWatchUnsupported)
	}
	o.mu.Lock()
	fromBase, fromOv := o.lastBase, o.lastOv
	o.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hint := func(Snapshot) { changed(Snapshot{}) } // read both again
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs <- bw.Watch(ctx, fromBase, hint) })
	wg.Go(func() {
		if err := ow.Watch(ctx, fromOv, hint); err != nil {
			err = fmt.Errorf("overlay %s: %w", o.group, err)
			errs <- err
			return
		}
		errs <- nil
	})
	first := <-errs
	cancel()
	wg.Wait()
	return first
}

// Close closes both.
func (o *overlaid) Close() error {
	return errors.Join(o.base.Close(), o.over.Close())
}

// broken is a Source that cannot be read, for a Readable whose options
// cannot work: Start reports the error.
type broken struct{ err error }

func (b broken) Read(context.Context) (Snapshot, error) { return Snapshot{}, b.err }
func (b broken) Close() error                           { return nil }

// describe names a Source by its String, else its type.
func describe(src Source) string {
	if s, ok := src.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", src)
}
