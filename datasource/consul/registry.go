package consul

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/bulwark-go/bulwark/datasource"
)

// Register registers inst beside the document (datasource.Registry): its
// record is the key KEY.instances/ID, held by a Consul session of its own
// whose TTL is datasource.MissedBeats intervals (at least Consul's
// minimum, 10 s) and whose behavior is "delete"; every beat renews the
// session and rewrites the record. Consul deletes the record when the
// session expires (Consul may take up to twice the TTL) or the agent's
// node fails its health check; Close destroys the session.
func (s *Source) Register(ctx context.Context, inst datasource.Instance) (io.Closer, error) {
	return s.reg.Register(ctx, inst)
}

// Instances lists the instances registered beside the document
// (datasource.Registry): one listing of KEY.instances/.
func (s *Source) Instances(ctx context.Context) ([]datasource.Instance, error) {
	return s.reg.Instances(ctx)
}

// minSessionTTL is the shortest session TTL Consul accepts.
const minSessionTTL = 10 * time.Second

// instanceStore is registry.Store on Consul: a key per record, held by a
// session per key.
type instanceStore struct {
	kv      *api.KV
	session *api.Session
	prefix  string

	mu       sync.Mutex
	sessions map[string]string // by ID: the session of each record this Source wrote
}

func (st *instanceStore) sessionOf(id string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sessions[id]
}

func (st *instanceStore) setSession(id, sess string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if sess == "" {
		delete(st.sessions, id)
	} else {
		st.sessions[id] = sess
	}
}

func (st *instanceStore) Put(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	wo := (&api.WriteOptions{}).WithContext(ctx)
	sess := st.sessionOf(id)
	if sess != "" {
		entry, _, err := st.session.Renew(sess, wo)
		if err != nil {
			return err
		}
		if entry == nil {
			sess = "" // expired (a long outage): the record is written again under a new one
		}
	}
	if sess == "" {
		var err error
		sess, _, err = st.session.Create(&api.SessionEntry{
			Name:      "bulwark instance " + id,
			TTL:       max(ttl, minSessionTTL).Round(time.Second).String(),
			Behavior:  api.SessionBehaviorDelete,
			LockDelay: time.Millisecond, // the record may be taken again at once by a new session
		}, wo)
		if err != nil {
			return err
		}
		st.setSession(id, sess)
	}
	ok, _, err := st.kv.Acquire(&api.KVPair{Key: st.prefix + id, Value: rec, Session: sess}, wo)
	if err != nil {
		return err
	}
	if !ok {
		// Held by another session (the same ID registered elsewhere, or an
		// expired one of ours in its lock delay): write it under ours next beat.
		st.setSession(id, "")
		_, _ = st.session.Destroy(sess, wo)
		return errHeld
	}
	return nil
}

// errHeld is Put's error when another session holds the record's key.
var errHeld = errors.New("the record's key is held by another session")

func (st *instanceStore) List(ctx context.Context) ([][]byte, error) {
	pairs, _, err := st.kv.List(st.prefix, query(ctx))
	if err != nil {
		return nil, err
	}
	recs := make([][]byte, 0, len(pairs))
	for _, p := range pairs {
		recs = append(recs, p.Value)
	}
	return recs, nil
}

func (st *instanceStore) Delete(ctx context.Context, id string) error {
	wo := (&api.WriteOptions{}).WithContext(ctx)
	if sess := st.sessionOf(id); sess != "" {
		st.setSession(id, "")
		if _, err := st.session.Destroy(sess, wo); err != nil {
			return err
		}
	}
	_, err := st.kv.Delete(st.prefix+id, wo)
	return err
}
