package nacos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
)

// Register registers inst beside the document (datasource.Registry): the
// records of all the document's instances are one config in the same
// group, whose dataId is the document's followed by ".instances", a JSON
// object that maps each ID to its record and the time it expires
// (datasource.MissedBeats intervals after its beat). Every beat rewrites
// it with compare-and-set (CasMd5), retried on a conflict with another
// instance's beat, and drops the records that have expired. Close removes
// the instance's record.
//
// A Nacos-protocol server shows a publish only at its next cache refresh
// (about a second on PolarisMesh), and instances of one document contend
// for one config: use beats of a few seconds (the default 5 s is fine).
func (s *Source) Register(ctx context.Context, inst datasource.Instance) (io.Closer, error) {
	return s.reg.Register(ctx, inst)
}

// Instances lists the instances registered beside the document
// (datasource.Registry): one read of the dataId followed by ".instances",
// leaving out the records that have expired.
func (s *Source) Instances(ctx context.Context) ([]datasource.Instance, error) {
	return s.reg.Instances(ctx)
}

// instancesSuffix follows the document's dataId in the dataId of its
// instances' config.
const instancesSuffix = ".instances"

// instanceStore is registry.Store on Nacos: one config holding every
// record with its expiry, changed with compare-and-set.
type instanceStore struct {
	cfg *Source // the config dataID+".instances"

	mu    sync.Mutex // one change at a time from this Source
	known struct{ before, after datasource.Snapshot }
}

// entry is one record in the config.
type entry struct {
	Record  string `json:"record"`
	Expires int64  `json:"expiresMs"` // Unix milliseconds
}

// read reads the config; a read that still returns what this store's last
// write replaced (the server answers from a cache that refreshes on a
// tick) is taken to be that write.
func (st *instanceStore) read(ctx context.Context) (datasource.Snapshot, map[string]entry, error) {
	snap, err := st.cfg.Read(ctx)
	if err != nil {
		return datasource.Snapshot{}, nil, err
	}
	if k := st.known; k.after.Revision != "" && snap.Missing == k.before.Missing && snap.Revision == k.before.Revision {
		snap = k.after
	}
	entries := map[string]entry{}
	if !snap.Missing {
		if err := json.Unmarshal(snap.Data, &entries); err != nil {
			entries = map[string]entry{} // not ours, or damaged: rewritten by the next beat
		}
	}
	return snap, entries, nil
}

// change applies fn to the entries and publishes the result with
// compare-and-set, again after a short pause while another instance's
// change wins, until ctx ends.
func (st *instanceStore) change(ctx context.Context, fn func(map[string]entry)) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for attempt := 1; ; attempt++ {
		snap, entries, err := st.read(ctx)
		if err != nil {
			return err
		}
		now := time.Now().UnixMilli()
		for id, e := range entries {
			if e.Expires < now {
				delete(entries, id)
			}
		}
		fn(entries)
		data, err := json.Marshal(entries)
		if err != nil {
			return err
		}
		out, err := st.cfg.Write(ctx, data, snap.Revision)
		if err == nil {
			st.known.before, st.known.after = snap, out
			return nil
		}
		if !errors.Is(err, datasource.ErrConflict) {
			return err
		}
		pause := time.Duration(50+rand.N(100*min(attempt, 10))) * time.Millisecond
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last attempt: %w)", context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

func (st *instanceStore) Put(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	e := entry{Record: string(rec), Expires: time.Now().Add(ttl).UnixMilli()}
	return st.change(ctx, func(m map[string]entry) { m[id] = e })
}

func (st *instanceStore) List(ctx context.Context) ([][]byte, error) {
	st.mu.Lock()
	_, entries, err := st.read(ctx)
	st.mu.Unlock()
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	recs := make([][]byte, 0, len(entries))
	for _, e := range entries {
		if e.Expires >= now {
			recs = append(recs, []byte(e.Record))
		}
	}
	return recs, nil
}

func (st *instanceStore) Delete(ctx context.Context, id string) error {
	return st.change(ctx, func(m map[string]entry) { delete(m, id) })
}
