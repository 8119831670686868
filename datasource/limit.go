package datasource

import (
	"context"

	"github.com/bulwark-go/bulwark/datasource/internal/limit"
)

// withReadLimit returns a context that carries the size limit of the
// document a Source.Read is asked for. The Readable and the Writable set it
// on every Read; a backend reads it with [ReadLimit].
func withReadLimit(ctx context.Context, n int64) context.Context { return limit.With(ctx, n) }

// ReadLimit returns the size limit carried by ctx: the largest document, in
// bytes, that Source.Read may return. A Read of a larger document returns
// an error wrapping [ErrTooLarge] and must not hold the whole document to
// find out (stream it through an io.LimitReader of ReadLimit+1 bytes, or
// ask the server for the size or a bounded range first). Zero or less means
// no limit; a ctx without one gives 4 MiB.
func ReadLimit(ctx context.Context) int64 { return limit.Of(ctx) }
