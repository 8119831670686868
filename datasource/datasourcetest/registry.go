package datasourcetest

import (
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
)

// defaultBeatInterval is the Instance.Interval of the registry cases
// unless Harness.BeatInterval says otherwise.
const defaultBeatInterval = 200 * time.Millisecond

// registryOf returns b's Source as a datasource.Registry, or skips.
func (s suite) registryOf(t *testing.T, b Backend) datasource.Registry {
	t.Helper()
	reg, ok := b.Source.(datasource.Registry)
	if !ok {
		t.Skipf("%T is not a datasource.Registry", b.Source)
	}
	return reg
}

func (s suite) instance(id string) datasource.Instance {
	return datasource.Instance{
		ID: id, App: "orders", Version: "v1.2.3", Addr: "10.0.0.7:8080",
		AdminURL: "http://10.0.0.7:8080/debug/bulwark/", Interval: s.h.BeatInterval,
	}
}

// find returns the instance id in the list, if it is there.
func find(list []datasource.Instance, id string) (datasource.Instance, bool) {
	i := slices.IndexFunc(list, func(in datasource.Instance) bool { return in.ID == id })
	if i < 0 {
		return datasource.Instance{}, false
	}
	return list[i], true
}

// waitInstances polls Instances until cond holds for the list.
func (s suite) waitInstances(t *testing.T, reg datasource.Registry, what string, cond func([]datasource.Instance) bool) []datasource.Instance {
	t.Helper()
	var last []datasource.Instance
	var lastErr error
	ok := poll(s.ctx(t), s.h.Timeout, func() bool {
		last, lastErr = reg.Instances(s.ctx(t))
		return lastErr == nil && cond(last)
	})
	require.True(t, ok, "waited %v for %s; last list %+v, error %v", s.h.Timeout, what, last, lastErr)
	return last
}

func (s suite) register(t *testing.T, reg datasource.Registry, inst datasource.Instance) io.Closer {
	t.Helper()
	c, err := reg.Register(s.ctx(t), inst)
	require.NoError(t, err, "Register %s", inst.ID)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// registerListed: what Register writes, Instances returns (sorted, with
// a recent Beat, not Stale); IDs that cannot name a record and an ID
// registered twice through one Source are refused.
func (s suite) registerListed(t *testing.T) {
	b := s.h.New(t)
	reg := s.registryOf(t, b)
	list, err := reg.Instances(s.ctx(t))
	require.NoError(t, err)
	assert.Empty(t, list, "no instance is registered yet")

	before := time.Now()
	s.register(t, reg, s.instance("b-2"))
	s.register(t, reg, s.instance("a-1"))
	list = s.waitInstances(t, reg, "both instances", func(l []datasource.Instance) bool { return len(l) == 2 })
	assert.Equal(t, []string{"a-1", "b-2"}, []string{list[0].ID, list[1].ID}, "sorted by ID")
	for _, got := range list {
		want := s.instance(got.ID)
		assert.Equal(t, want.App, got.App)
		assert.Equal(t, want.Version, got.Version)
		assert.Equal(t, want.Addr, got.Addr)
		assert.Equal(t, want.AdminURL, got.AdminURL)
		assert.Equal(t, want.Interval, got.Interval)
		assert.False(t, got.Stale, "a fresh record is not stale")
		assert.False(t, got.Beat.Before(before.Add(-time.Second)), "Beat %v is the time of a beat after %v", got.Beat, before)
	}

	_, err = reg.Register(s.ctx(t), s.instance("a-1"))
	require.Error(t, err, "an ID registered twice through one Source")
	for _, id := range []string{"", ".hidden", "a/b", "a b", string(make([]byte, 129))} {
		_, err := reg.Register(s.ctx(t), s.instance(id))
		require.Error(t, err, "ID %q cannot name a record", id)
	}
	def := s.instance("default-interval")
	def.Interval = 0
	s.register(t, reg, def)
	list = s.waitInstances(t, reg, "the third instance", func(l []datasource.Instance) bool { return len(l) == 3 })
	got, _ := find(list, "default-interval")
	assert.Equal(t, registry.DefaultInterval, got.Interval, "Interval 0 is 5 s")
}

// beatKeepsIt: a registered instance stays listed and fresh for more than
// MissedBeats intervals: its beats renew the record (Beat moves on).
func (s suite) beatKeepsIt(t *testing.T) {
	b := s.h.New(t)
	reg := s.registryOf(t, b)
	s.register(t, reg, s.instance("kept"))
	first := s.waitInstances(t, reg, "the instance", func(l []datasource.Instance) bool { _, ok := find(l, "kept"); return ok })
	start, _ := find(first, "kept")
	horizon := start.Beat.Add(time.Duration(datasource.MissedBeats+1) * s.h.BeatInterval)
	lists := 0
	s.waitInstances(t, reg, fmt.Sprintf("a beat after %v", horizon), func(l []datasource.Instance) bool {
		lists++
		got, ok := find(l, "kept")
		if !assert.True(t, ok, "a beating instance is listed (list %d)", lists) || !assert.False(t, got.Stale, "nor stale (list %d)", lists) {
			return true // failed: stop waiting
		}
		return got.Beat.After(horizon)
	})
	assert.Greater(t, lists, 1, "the instance was listed along the way")
}

// closeUnregisters: the Closer's Close removes the record (and is
// idempotent); the other instance stays.
func (s suite) closeUnregisters(t *testing.T) {
	b := s.h.New(t)
	reg := s.registryOf(t, b)
	gone := s.register(t, reg, s.instance("gone"))
	s.register(t, reg, s.instance("stays"))
	s.waitInstances(t, reg, "both instances", func(l []datasource.Instance) bool { return len(l) == 2 })
	require.NoError(t, gone.Close())
	require.NoError(t, gone.Close(), "Close is idempotent")
	s.waitInstances(t, reg, "the closed instance to be gone", func(l []datasource.Instance) bool {
		_, there := find(l, "gone")
		_, stays := find(l, "stays")
		return !there && stays
	})
	// Its ID may be registered again.
	s.register(t, reg, s.instance("gone"))
	s.waitInstances(t, reg, "the instance registered again", func(l []datasource.Instance) bool { return len(l) == 2 })
}

// stoppedBeatExpires: an instance whose beats stop without Close (a
// crashed process) expires, or is listed Stale, within a few intervals.
func (s suite) stoppedBeatExpires(t *testing.T) {
	b := s.h.New(t)
	reg := s.registryOf(t, b)
	crashed := s.register(t, reg, s.instance("crashed"))
	s.register(t, reg, s.instance("alive"))
	s.waitInstances(t, reg, "both instances", func(l []datasource.Instance) bool { return len(l) == 2 })
	registry.Abandon(crashed)
	s.waitInstances(t, reg, "the crashed instance to expire or go stale", func(l []datasource.Instance) bool {
		got, there := find(l, "crashed")
		alive, ok := find(l, "alive")
		return (!there || got.Stale) && ok && !alive.Stale
	})
	if s.h.RecordExpiry <= 0 {
		return
	}
	within := s.h.RecordExpiry + s.h.Timeout
	var last []datasource.Instance
	ok := poll(s.ctx(t), within, func() bool {
		l, err := reg.Instances(s.ctx(t))
		_, there := find(l, "crashed")
		_, alive := find(l, "alive")
		last = l
		return err == nil && !there && alive
	})
	require.True(t, ok, "waited %v for the backend to remove the crashed instance's record; last list %+v", within, last)
}

// registryClosed: closing the Source ends its registrations' goroutines;
// Register and Instances then return ErrClosed.
func (s suite) registryClosed(t *testing.T) {
	b := s.h.New(t)
	reg := s.registryOf(t, b)
	ignore := append([]goleak.Option{goleak.IgnoreCurrent()}, s.h.IgnoreGoroutines...)
	c, err := reg.Register(s.ctx(t), s.instance("one"))
	require.NoError(t, err)
	s.waitInstances(t, reg, "the instance", func(l []datasource.Instance) bool { return len(l) == 1 })

	require.NoError(t, b.Source.Close())
	_, err = reg.Register(s.ctx(t), s.instance("two"))
	require.ErrorIs(t, err, datasource.ErrClosed, "Register after Close")
	_, err = reg.Instances(s.ctx(t))
	require.ErrorIs(t, err, datasource.ErrClosed, "Instances after Close")
	require.NoError(t, c.Close(), "a registration closed with its Source may be closed again")
	for deadline := time.Now().Add(10 * time.Second); ; {
		err := goleak.Find(ignore...)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines still running 10 s after Close: %v", err)
		}
	}
}
