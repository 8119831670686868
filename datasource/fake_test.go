package datasource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/contentrev"
)

// codec is a tiny JSON codec over []string, standing in for a converter.
type codec struct{ decodes *atomic.Int64 }

func (c codec) Convert(data []byte) ([]string, error) {
	if c.decodes != nil {
		c.decodes.Add(1)
	}
	var v []string
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v, nil
}

func (codec) Encode(v []string) ([]byte, error) { return json.Marshal(v) }

// encoderOnly is an Encoder that is not a Codec.
type encoderOnly struct{}

func (encoderOnly) Encode(v []string) ([]byte, error) { return json.Marshal(v) }

func doc(v ...string) []byte { b, _ := json.Marshal(v); return b }

var errDown = errors.New("connection refused")

// fake is a Source whose faults the test controls: it fails the next
// failN reads, records when each read happened, and counts Close calls.
type fake struct {
	mu      sync.Mutex
	snap    datasource.Snapshot
	failN   int
	failAll bool
	reads   []time.Time
	closes  int
	block   chan struct{} // if not nil, Read waits for it (or ctx)
}

func (f *fake) set(data []byte, rev string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap = datasource.Snapshot{Data: data, Revision: rev}
}

func (f *fake) setMissing() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap = datasource.Snapshot{Missing: true}
}

func (f *fake) fail(n int, all bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failN, f.failAll = n, all
}

func (f *fake) Read(ctx context.Context) (datasource.Snapshot, error) {
	f.mu.Lock()
	block := f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return datasource.Snapshot{}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, time.Now())
	if f.failAll || f.failN > 0 {
		f.failN--
		return datasource.Snapshot{}, errDown
	}
	return f.snap, nil
}

func (f *fake) readTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.reads...)
}

func (f *fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closes++
	return nil
}

func (f *fake) Write(_ context.Context, data []byte, expect string) (datasource.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.snap.Revision
	if f.snap.Missing {
		cur = ""
	}
	if cur != expect {
		return datasource.Snapshot{}, fmt.Errorf("fake: at %q: %w", cur, datasource.ErrConflict)
	}
	f.snap = datasource.Snapshot{Data: data, Revision: contentrev.Of(data)}
	return f.snap, nil
}

// watching is a fake with a Watcher whose behaviour the test sets.
type watching struct {
	*fake
	watch func(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error
}

func (w watching) Watch(ctx context.Context, from datasource.Snapshot, changed func(datasource.Snapshot)) error {
	return w.watch(ctx, from, changed)
}

// conflicting is a Sink that always reports a conflict.
type conflicting struct{ *fake }

func (conflicting) Write(context.Context, []byte, string) (datasource.Snapshot, error) {
	return datasource.Snapshot{}, fmt.Errorf("always: %w", datasource.ErrConflict)
}

// writeOnly is a Sink that is not a Source.
type writeOnly struct{}

func (writeOnly) Write(context.Context, []byte, string) (datasource.Snapshot, error) {
	return datasource.Snapshot{}, nil
}

// lagging is an eventually consistent Source and Sink: writes are stored
// at once (compare-and-set against the latest document), but a read
// returns the document as it was lag ago, the way a server that answers
// reads from a cache refreshed on a tick does. Use it inside a synctest
// bubble.
type lagging struct {
	lag time.Duration

	mu      sync.Mutex
	history []lagEntry // in write order; history[0] is the initial document
	reads   int
}

type lagEntry struct {
	at     time.Time
	snap   datasource.Snapshot
	glitch bool // a read-side glitch, not a stored document
}

func newLagging(lag time.Duration, initial datasource.Snapshot) *lagging {
	return &lagging{lag: lag, history: []lagEntry{{at: time.Now(), snap: initial}}}
}

// set stores data as another client would (no compare-and-set).
func (l *lagging) set(data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.history = append(l.history, lagEntry{at: time.Now(), snap: datasource.Snapshot{Data: data, Revision: contentrev.Of(data)}})
}

// glitch makes the document read as missing from now (lag later) until
// the next write, without changing what compare-and-set compares with, the
// way a server that swaps releases in its cache answers for a moment.
func (l *lagging) glitch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.history = append(l.history, lagEntry{at: time.Now(), snap: datasource.Snapshot{Missing: true}, glitch: true})
}

func (l *lagging) readCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reads
}

func (l *lagging) Read(context.Context) (datasource.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	seen := time.Now().Add(-l.lag)
	snap := l.history[0].snap
	for _, e := range l.history[1:] {
		if e.at.After(seen) {
			break
		}
		snap = e.snap
	}
	return snap, nil
}

func (l *lagging) Close() error { return nil }

func (l *lagging) Write(_ context.Context, data []byte, expect string) (datasource.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var last datasource.Snapshot
	for _, e := range l.history {
		if !e.glitch {
			last = e.snap
		}
	}
	cur := last.Revision
	if last.Missing {
		cur = ""
	}
	if cur != expect {
		return datasource.Snapshot{}, fmt.Errorf("lagging: at %q: %w", cur, datasource.ErrConflict)
	}
	snap := datasource.Snapshot{Data: data, Revision: contentrev.Of(data)}
	l.history = append(l.history, lagEntry{at: time.Now(), snap: snap})
	return snap, nil
}
