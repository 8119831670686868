package registry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/bulwark-go/bulwark/datasource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// faultyStore keeps records in memory and fails the Puts a test asks it
// to: the backends' real stores run in datasourcetest; this one exercises
// the beat loop's timing and retries under synctest's clock.
type faultyStore struct {
	mu      sync.Mutex
	recs    map[string][]byte
	puts    []time.Time // when each Put was called
	failing int         // how many Puts to fail from now on
	deletes int
}

var errDown = errors.New("server down")

func (f *faultyStore) Put(_ context.Context, id string, rec []byte, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts = append(f.puts, time.Now())
	if f.failing > 0 {
		f.failing--
		return errDown
	}
	if f.recs == nil {
		f.recs = map[string][]byte{}
	}
	f.recs[id] = rec
	return nil
}

func (f *faultyStore) List(context.Context) ([][]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, r := range f.recs {
		out = append(out, r)
	}
	return out, nil
}

func (f *faultyStore) Delete(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.recs, id)
	f.deletes++
	return nil
}

func (f *faultyStore) putTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.puts...)
}

func TestBeatsWithinTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{}
		r := New("test", st)
		c, err := r.Register(t.Context(), datasource.Instance{ID: "a", Interval: time.Second})
		require.NoError(t, err)
		time.Sleep(100 * time.Second)
		synctest.Wait()
		puts := st.putTimes()
		// One Put at Register, then one every 0.8-1 s.
		assert.GreaterOrEqual(t, len(puts), 101)
		assert.LessOrEqual(t, len(puts), 126)
		for i := 1; i < len(puts); i++ {
			gap := puts[i].Sub(puts[i-1])
			assert.GreaterOrEqual(t, gap, 800*time.Millisecond, "beat %d", i)
			assert.LessOrEqual(t, gap, time.Second, "beat %d: never later than the interval", i)
		}
		list, err := r.Instances(t.Context())
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.False(t, list[0].Stale)
		require.NoError(t, c.Close())
		assert.Equal(t, 1, st.deletes)
		list, _ = r.Instances(t.Context())
		assert.Empty(t, list)
	})
}

func TestFailedBeatsRetrySooner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{}
		r := New("test", st)
		c, err := r.Register(t.Context(), datasource.Instance{ID: "a", Interval: 10 * time.Second})
		require.NoError(t, err)
		st.mu.Lock()
		st.failing = 4
		st.mu.Unlock()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		puts := st.putTimes()
		require.GreaterOrEqual(t, len(puts), 7, "the failed beats were retried")
		// puts[1] is the first failed beat; the 4 retries after it come
		// within half an interval each, and the last one succeeds.
		for i := 2; i <= 5; i++ {
			assert.LessOrEqual(t, puts[i].Sub(puts[i-1]), 5*time.Second, "retry %d", i-1)
		}
		assert.Less(t, puts[5].Sub(puts[1]), 2*TTL(10*time.Second)/3, "the record is written again before it expires")
		// Then beats resume at the interval.
		assert.GreaterOrEqual(t, puts[6].Sub(puts[5]), 8*time.Second)
		require.NoError(t, c.Close())
	})
}

func TestRegisterFailsWhenTheFirstRecordCannotBeWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{failing: 1}
		r := New("test", st)
		_, err := r.Register(t.Context(), datasource.Instance{ID: "a"})
		require.ErrorIs(t, err, errDown)
		assert.ErrorContains(t, err, "test: register a")
		synctest.Wait() // no goroutine is left: synctest.Test would fail
		c, err := r.Register(t.Context(), datasource.Instance{ID: "a"})
		require.NoError(t, err, "the ID is free again")
		require.NoError(t, c.Close())
	})
}

func TestCloseEndsEveryRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{}
		r := New("test", st)
		a, err := r.Register(t.Context(), datasource.Instance{ID: "a"})
		require.NoError(t, err)
		_, err = r.Register(t.Context(), datasource.Instance{ID: "b"})
		require.NoError(t, err)
		_, err = r.Register(t.Context(), datasource.Instance{ID: "b"})
		require.ErrorIs(t, err, ErrDuplicate)
		require.NoError(t, r.Close())
		assert.Equal(t, 2, st.deletes)
		require.NoError(t, r.Close(), "idempotent")
		require.NoError(t, a.Close(), "a registration closed with its Registry")
		assert.Equal(t, 2, st.deletes)
		_, err = r.Register(t.Context(), datasource.Instance{ID: "c"})
		require.ErrorIs(t, err, datasource.ErrClosed)
		_, err = r.Instances(t.Context())
		require.ErrorIs(t, err, datasource.ErrClosed)
	})
}

func TestAbandonLeavesTheRecordToGoStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{}
		r := New("test", st)
		c, err := r.Register(t.Context(), datasource.Instance{ID: "a", Interval: time.Second})
		require.NoError(t, err)
		Abandon(c)
		time.Sleep(3 * time.Second)
		list, _ := r.Instances(t.Context())
		require.Len(t, list, 1)
		assert.False(t, list[0].Stale, "exactly 3 intervals: not yet")
		time.Sleep(time.Millisecond)
		list, _ = r.Instances(t.Context())
		assert.True(t, list[0].Stale, "past 3 intervals")
		require.NoError(t, c.Close(), "Close after Abandon does nothing")
		assert.Zero(t, st.deletes)
		require.NoError(t, r.Close())
	})
}

func TestRecordRoundTrip(t *testing.T) {
	in := datasource.Instance{ID: "h:8080", App: "a", Version: "v", Addr: "h:8080", AdminURL: "http://h:8080/",
		Interval: 1500 * time.Millisecond, Beat: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	out, ok := Decode(Encode(in))
	require.True(t, ok)
	assert.Equal(t, in, out)
	for _, bad := range []string{``, `{}`, `{"id":"a"}`, `{"id":"../x","intervalMs":5}`, `[]`} {
		_, ok := Decode([]byte(bad))
		assert.False(t, ok, "%s is not a record", bad)
	}
}
