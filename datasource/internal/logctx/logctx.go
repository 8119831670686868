// Package logctx carries the logger of a Readable to the backend calls it
// makes: a backend's Watch logs what it alone sees (a watch armed, an
// event ignored, a re-subscription) at Debug to the logger of the Readable
// that calls it (datasource.WithLogger), so a backend has no logger option
// of its own.
package logctx

import (
	"context"
	"log/slog"
)

type key struct{}

// discard logs nothing: the logger of a call that carries none.
var discard = slog.New(slog.DiscardHandler)

// With returns ctx carrying l.
func With(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, key{}, l)
}

// From returns the logger ctx carries, or one that discards everything.
func From(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(key{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return discard
}
