// Package limit carries the size limit of a document through the context
// of Source.Read, and checks it for the Readable, the Writable and the
// backends. package datasource exports ReadLimit and the error
// ErrTooLarge from here.
package limit

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is datasource.ErrTooLarge.
var ErrTooLarge = errors.New("datasource: document too large")

// Default is the largest document read when the context carries no limit:
// 4 MiB, the converters' own limit.
const Default = 4 << 20

type key struct{}

// With returns a context that carries n as the size limit.
func With(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, key{}, n)
}

// Of returns the size limit carried by ctx, or Default. Zero or less means
// no limit.
func Of(ctx context.Context) int64 {
	if n, ok := ctx.Value(key{}).(int64); ok {
		return n
	}
	return Default
}

// Check returns an error wrapping ErrTooLarge when a document of n bytes is
// over the limit that ctx carries.
func Check(ctx context.Context, n int64) error {
	if l := Of(ctx); l > 0 && n > l {
		return fmt.Errorf("document of %d bytes is over the %d-byte limit: %w", n, l, ErrTooLarge)
	}
	return nil
}

// ReadAll reads r to its end, or fails with an error wrapping ErrTooLarge
// as soon as it has read more than the limit that ctx carries: a document
// over the limit is never held whole.
func ReadAll(ctx context.Context, r io.Reader) ([]byte, error) {
	l := Of(ctx)
	if l <= 0 {
		return io.ReadAll(r)
	}
	data, err := io.ReadAll(io.LimitReader(r, l+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > l {
		return nil, fmt.Errorf("document is over the %d-byte limit: %w", l, ErrTooLarge)
	}
	return data, nil
}
