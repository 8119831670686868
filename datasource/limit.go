package datasource

import (
	"context"
	"fmt"
	"io"
)

// defaultMaxSize is the largest document a Readable or Writable reads
// unless WithMaxSize says otherwise: 4 MiB, the converters' own limit.
const defaultMaxSize = 4 << 20

type maxSizeKey struct{}

// WithReadLimit returns a context that carries the size limit of the
// document a Source.Read is asked for. The Readable and the Writable set it
// on every Read; a backend reads it with [ReadLimit].
func WithReadLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, maxSizeKey{}, n)
}

// ReadLimit returns the size limit carried by ctx: the largest document, in
// bytes, that Source.Read may return. A Read of a larger document returns
// an error wrapping [ErrTooLarge] and must not hold the whole document to
// find out (stream it through [ReadAll], or ask the server for the size or
// a bounded range first). Zero or less means no limit; a ctx without one
// gives 4 MiB.
func ReadLimit(ctx context.Context) int64 {
	if n, ok := ctx.Value(maxSizeKey{}).(int64); ok {
		return n
	}
	return defaultMaxSize
}

// CheckSize returns an error wrapping ErrTooLarge when a document of n
// bytes is over the limit that ctx carries (see ReadLimit).
func CheckSize(ctx context.Context, n int64) error {
	if limit := ReadLimit(ctx); limit > 0 && n > limit {
		return fmt.Errorf("document of %d bytes is over the %d-byte limit: %w", n, limit, ErrTooLarge)
	}
	return nil
}

// ReadAll reads r to its end, or fails with an error wrapping ErrTooLarge
// as soon as it has read more than the limit that ctx carries: a document
// over the limit is never held whole.
func ReadAll(ctx context.Context, r io.Reader) ([]byte, error) {
	limit := ReadLimit(ctx)
	if limit <= 0 {
		return io.ReadAll(r)
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("document is over the %d-byte limit: %w", limit, ErrTooLarge)
	}
	return data, nil
}
