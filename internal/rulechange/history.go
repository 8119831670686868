package rulechange

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
)

// The audit trail of a document lives beside it, in the same config center
// (Center.hist): one JSON document holding the last historyEntries changes
// made with this tool, oldest first, written with compare-and-set so that
// concurrent writers never lose each other's entries.
const (
	historyEntries = 100
	// DefaultHistoryBytes bounds the history document: under ZooKeeper's
	// 1 MB node limit and etcd's 1.5 MiB request limit.
	DefaultHistoryBytes = 512 << 10
	historyAttempts     = 10
)

type historyDoc struct {
	Format  string  `json:"format"` // historyFormat
	Entries []Entry `json:"entries"`
}

const historyFormat = "bulwark-history/1"

// Entry is one change: who made it, when, from which revision to which, the
// rule diff and the document it replaced.
type Entry struct {
	Seq     int       `json:"seq"`
	Time    time.Time `json:"time"`
	Author  string    `json:"author"`
	Command string    `json:"command"`
	From    string    `json:"from"` // "" when the document did not exist
	To      string    `json:"to"`
	Kind    string    `json:"kind"`
	Diff    []string  `json:"diff"`
	// Previous is the document the change replaced; null when it did not
	// exist.
	Previous *string `json:"previous"`
	// Overlay is the canary group whose overlay the change wrote or
	// removed (apply --canary, abort); "" for the document itself.
	Overlay string `json:"overlay,omitempty"`
}

// History reads the recorded changes of the document, oldest first; a
// missing history is empty.
func (c *Center) History(ctx context.Context) ([]Entry, error) {
	h, _, err := c.readHistory(ctx)
	return h.Entries, err
}

// readHistory reads the history and its revision.
func (c *Center) readHistory(ctx context.Context) (historyDoc, string, error) {
	if c.base != nil {
		return c.base.readHistory(ctx)
	}
	snap, err := c.readFrom(ctx, c.hist, c.histName)
	if err != nil {
		return historyDoc{}, "", err
	}
	if snap.Missing {
		return historyDoc{Format: historyFormat}, "", nil
	}
	var h historyDoc
	if err := json.Unmarshal(snap.Data, &h); err != nil || h.Format != historyFormat {
		return historyDoc{}, "", classf(ErrInvalid, "%s holds something else than bulwark's history (format %q); it is left alone: %v", c.histName, h.Format, err)
	}
	return h, snap.Revision, nil
}

// record appends e to the history of c (its Seq is set here), keeping the
// last historyEntries entries and at most maxBytes, oldest dropped first.
// Conflicting writers retry.
func (c *Center) record(ctx context.Context, e Entry, maxBytes int) (int, error) {
	if c.base != nil {
		return c.base.record(ctx, e, maxBytes)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultHistoryBytes
	}
	pause := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		h, rev, err := c.readHistory(ctx)
		if err != nil {
			return 0, err
		}
		e.Seq = 1
		if n := len(h.Entries); n > 0 {
			e.Seq = h.Entries[n-1].Seq + 1
		}
		h.Entries = append(h.Entries, e)
		if n := len(h.Entries); n > historyEntries {
			h.Entries = h.Entries[n-historyEntries:]
		}
		data, _ := json.MarshalIndent(h, "", " ")
		for len(data) > maxBytes && len(h.Entries) > 1 {
			h.Entries = h.Entries[1:]
			data, _ = json.MarshalIndent(h, "", " ")
		}
		_, err = c.write(ctx, c.hist, data, rev, c.histName)
		if err == nil {
			return e.Seq, nil
		}
		if attempt == historyAttempts || ctx.Err() != nil {
			return 0, err
		}
		if !errors.Is(err, datasource.ErrConflict) {
			// A server may refuse a document this large (PolarisMesh's
			// Nacos API stores 20000 characters by default): try a
			// shorter history, the oldest entries dropped.
			if len(h.Entries) == 1 {
				return 0, err
			}
			maxBytes = len(data) / 2
			continue
		}
		// Another writer recorded in between (or a stale read): again,
		// after a jittered pause that outlasts a Nacos server's cache.
		if err := sleep(ctx, pause/2+rand.N(pause/2)); err != nil {
			return 0, err
		}
		pause = min(2*pause, time.Second)
	}
}

// sleep waits d, or until ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
