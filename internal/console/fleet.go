package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bulwark-go/bulwark/datasource"
)

// Instance states, as the page shows them.
const (
	stateUp    = "up"    // registered (or named by hand) and its admin JSON answered
	stateDown  = "down"  // its record is fresh, but its admin JSON did not answer
	stateStale = "stale" // its beats stopped: the record is stale, or gone
)

// forgetAfter is how long an instance whose record expired is still
// shown (stale) before the page forgets it.
const forgetAfter = 10 * time.Minute

// maxStateBytes bounds an instance's admin JSON.
const maxStateBytes = 8 << 20

// instanceView is one instance as the page shows it.
type instanceView struct {
	Key      string    `json:"key"`    // unique in the fleet: the source and ID, or the admin URL named by hand
	Source   string    `json:"source"` // the document it registered beside; "" when named by hand
	ID       string    `json:"id"`
	App      string    `json:"app,omitempty"`
	Version  string    `json:"version,omitempty"`
	Addr     string    `json:"addr,omitempty"`
	AdminURL string    `json:"adminUrl,omitempty"`
	Beat     time.Time `json:"beat,omitzero"`
	State    string    `json:"state"`
	// Why says why the instance is not up: its fetch's error, or that its
	// record went stale or expired.
	Why       string    `json:"why,omitempty"`
	Fetched   time.Time `json:"fetched,omitzero"` // when its admin JSON last answered
	Resources int       `json:"resources"`
}

// resourceSum is one resource's figures of the last second, summed over
// the instances that are up.
type resourceSum struct {
	Resource  string           `json:"resource"`
	Passed    int64            `json:"passed"`
	Blocked   int64            `json:"blocked"`
	BlockedBy map[string]int64 `json:"blockedBy,omitempty"`
	Failed    int64            `json:"failed"`
	AvgRTMs   float64          `json:"avgRtMs"` // weighted by each instance's completed calls
	Instances int              `json:"instances"`
}

// fleetView is what /api/fleet answers.
type fleetView struct {
	Time      time.Time      `json:"time"`
	Instances []instanceView `json:"instances"`
	Resources []resourceSum  `json:"resources"`
	// Errors are the registries that could not be listed, by source.
	Errors []string `json:"errors"`
}

// adminState is the part of an instance's admin JSON (admin's api/state)
// that the fleet sums.
type adminState struct {
	Resources []struct {
		Resource string `json:"resource"`
		Second   struct {
			Passed    int64            `json:"passed"`
			Blocked   int64            `json:"blocked"`
			BlockedBy map[string]int64 `json:"blockedBy"`
			Succeeded int64            `json:"succeeded"`
			Failed    int64            `json:"failed"`
			AvgRTMs   float64          `json:"avgRtMs"`
		} `json:"second"`
	} `json:"resources"`
}

// fleet finds the instances and fetches their admin JSON, every refresh,
// from a goroutine that Close stops.
type fleet struct {
	docs    []Document
	manual  []string
	timeout time.Duration
	client  *http.Client
	now     func() time.Time

	mu      sync.Mutex
	view    fleetView
	ready   chan struct{} // closed after the first refresh
	states  map[string]json.RawMessage
	seen    map[string]instanceView // instances listed before, for those whose record expired
	started bool
}

func newFleet(docs []Document, manual []string, timeout time.Duration, now func() time.Time) *fleet {
	return &fleet{docs: docs, manual: manual, timeout: timeout, now: now, client: &http.Client{},
		ready: make(chan struct{}), states: map[string]json.RawMessage{}, seen: map[string]instanceView{}}
}

// run refreshes every interval until ctx ends.
func (f *fleet) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		f.refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// current returns the latest view, waiting for the first refresh.
func (f *fleet) current(ctx context.Context) (fleetView, error) {
	select {
	case <-f.ready:
	case <-ctx.Done():
		return fleetView{}, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view, nil
}

// state returns the last admin JSON of the instance key.
func (f *fleet) state(key string) (json.RawMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.states[key]
	return s, ok
}

// refresh lists the registries and fetches every instance's admin JSON,
// all at once, each within the timeout: a slow instance delays nothing
// but itself.
func (f *fleet) refresh(ctx context.Context) {
	type found struct {
		list []datasource.Instance
		err  error
	}
	lists := make([]found, len(f.docs))
	var wg sync.WaitGroup
	for i, d := range f.docs {
		if d.Registry == nil {
			continue
		}
		wg.Go(func() {
			lctx, cancel := context.WithTimeout(ctx, f.timeout)
			defer cancel()
			l, err := d.Registry.Instances(lctx)
			lists[i] = found{l, err}
		})
	}
	wg.Wait()

	var v fleetView
	v.Time = f.now()
	v.Errors = []string{}
	for i, d := range f.docs {
		if lists[i].err != nil {
			v.Errors = append(v.Errors, fmt.Sprintf("%s: instances: %v", d.Name, lists[i].err))
		}
		for _, in := range lists[i].list {
			iv := instanceView{Key: d.Name + "#" + in.ID, Source: d.Name, ID: in.ID, App: in.App, Version: in.Version,
				Addr: in.Addr, AdminURL: in.AdminURL, Beat: in.Beat, State: stateUp}
			if in.Stale {
				iv.State = stateStale
				iv.Why = fmt.Sprintf("no beat since %s (every %v)", beatTime(in.Beat), in.Interval)
			}
			v.Instances = append(v.Instances, iv)
		}
	}
	for _, u := range f.manual {
		v.Instances = append(v.Instances, instanceView{Key: u, ID: u, AdminURL: u, State: stateUp})
	}

	states := make([]json.RawMessage, len(v.Instances))
	for i := range v.Instances {
		iv := &v.Instances[i]
		if iv.State != stateUp {
			continue
		}
		if iv.AdminURL == "" {
			iv.State, iv.Why = stateDown, "registered without an admin URL"
			continue
		}
		wg.Go(func() {
			raw, err := f.fetch(ctx, iv.AdminURL)
			if err != nil {
				iv.State, iv.Why = stateDown, err.Error()
				return
			}
			states[i] = raw
			iv.Fetched = f.now()
		})
	}
	wg.Wait()

	sums := map[string]*resourceSum{}
	rtWeight := map[string]int64{}
	for i, raw := range states {
		if raw == nil {
			continue
		}
		var st adminState
		if err := json.Unmarshal(raw, &st); err != nil {
			v.Instances[i].State, v.Instances[i].Why = stateDown, "admin JSON: "+err.Error()
			states[i] = nil
			continue
		}
		v.Instances[i].Resources = len(st.Resources)
		for _, r := range st.Resources {
			s := sums[r.Resource]
			if s == nil {
				s = &resourceSum{Resource: r.Resource}
				sums[r.Resource] = s
			}
			s.Instances++
			s.Passed += r.Second.Passed
			s.Blocked += r.Second.Blocked
			s.Failed += r.Second.Failed
			for k, n := range r.Second.BlockedBy {
				if s.BlockedBy == nil {
					s.BlockedBy = map[string]int64{}
				}
				s.BlockedBy[k] += n
			}
			if w := r.Second.Succeeded + r.Second.Failed; w > 0 {
				s.AvgRTMs += r.Second.AvgRTMs * float64(w)
				rtWeight[r.Resource] += w
			}
		}
	}
	v.Resources = make([]resourceSum, 0, len(sums))
	for name, s := range sums {
		if w := rtWeight[name]; w > 0 {
			s.AvgRTMs /= float64(w)
		}
		v.Resources = append(v.Resources, *s)
	}
	slices.SortFunc(v.Resources, func(a, b resourceSum) int {
		return cmp.Or(cmp.Compare(b.Passed+b.Blocked, a.Passed+a.Blocked), strings.Compare(a.Resource, b.Resource))
	})

	fresh := map[string]json.RawMessage{}
	for i, raw := range states {
		if raw != nil {
			fresh[v.Instances[i].Key] = raw
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	// An instance listed before whose record expired (etcd, Redis, Nacos
	// remove it) is shown stale for a while.
	listed := map[string]bool{}
	for _, iv := range v.Instances {
		listed[iv.Key] = true
		f.seen[iv.Key] = iv
	}
	for key, iv := range f.seen {
		switch {
		case listed[key]:
		case v.Time.Sub(iv.Beat) > forgetAfter || iv.Beat.IsZero():
			delete(f.seen, key)
		default:
			iv.State, iv.Why, iv.Resources = stateStale, "its record expired: no beat since "+beatTime(iv.Beat), 0
			v.Instances = append(v.Instances, iv)
		}
	}
	slices.SortFunc(v.Instances, func(a, b instanceView) int { return strings.Compare(a.Key, b.Key) })
	if v.Instances == nil {
		v.Instances = []instanceView{}
	}
	f.states = fresh
	f.view = v
	if !f.started {
		f.started = true
		close(f.ready)
	}
}

// fetch reads an instance's admin JSON within the timeout.
func (f *fleet) fetch(ctx context.Context, adminURL string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	u := strings.TrimSuffix(adminURL, "/") + "/api/state"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("admin URL %q: %w", adminURL, err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: no answer within %v", u, f.timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStateBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: no answer within %v", u, f.timeout)
		}
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	if len(body) > maxStateBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", u, maxStateBytes)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("%s: not JSON", u)
	}
	return body, nil
}

// beatTime is a beat's time for a person: 24-hour, in UTC (the page's
// reader may be elsewhere), "2026-12-06 16:48:29 UTC".
func beatTime(t time.Time) string { return t.UTC().Format(time.DateTime) + " UTC" }
