package etcd

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bulwark-go/bulwark/datasource"
)

// Register registers inst beside the document (datasource.Registry): its
// record is the key KEY.instances/ID, attached to a lease of its own
// whose TTL is datasource.MissedBeats intervals (at least the server's
// minimum, a second or two); every beat renews the lease and rewrites the
// record. etcd removes the record when the lease expires; Close revokes it.
func (s *Source) Register(ctx context.Context, inst datasource.Instance) (io.Closer, error) {
	return s.reg.Register(ctx, inst)
}

// Instances lists the instances registered beside the document
// (datasource.Registry): one range read of KEY.instances/.
func (s *Source) Instances(ctx context.Context) ([]datasource.Instance, error) {
	return s.reg.Instances(ctx)
}

// instanceStore is registry.Store on etcd: a key per record, a lease per key.
type instanceStore struct {
	kv     clientv3.KV
	lessor clientv3.Lease
	prefix string

	mu     sync.Mutex
	leases map[string]clientv3.LeaseID // by ID: the lease of each record this Source wrote
}

func (st *instanceStore) lease(id string) clientv3.LeaseID {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.leases[id]
}

func (st *instanceStore) setLease(id string, l clientv3.LeaseID) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if l == 0 {
		delete(st.leases, id)
	} else {
		st.leases[id] = l
	}
}

func (st *instanceStore) Put(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	lease := st.lease(id)
	if lease != 0 {
		_, err := st.lessor.KeepAliveOnce(ctx, lease)
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			lease = 0 // expired (a long outage): the record is written again on a new one
		case err != nil:
			return err
		}
	}
	if lease == 0 {
		g, err := st.lessor.Grant(ctx, int64((ttl+time.Second-1)/time.Second))
		if err != nil {
			return err
		}
		lease = g.ID
		st.setLease(id, lease)
	}
	if _, err := st.kv.Put(ctx, st.prefix+id, string(rec), clientv3.WithLease(lease)); err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			st.setLease(id, 0)
		}
		return err
	}
	return nil
}

func (st *instanceStore) List(ctx context.Context) ([][]byte, error) {
	resp, err := st.kv.Get(ctx, st.prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	recs := make([][]byte, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		recs = append(recs, kv.Value)
	}
	return recs, nil
}

func (st *instanceStore) Delete(ctx context.Context, id string) error {
	if lease := st.lease(id); lease != 0 {
		st.setLease(id, 0)
		if _, err := st.lessor.Revoke(ctx, lease); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return err
		}
	}
	_, err := st.kv.Delete(ctx, st.prefix+id)
	return err
}
