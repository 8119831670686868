package redis

import (
	"context"
	"errors"
	"io"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
)

// Register registers inst beside the document (datasource.Registry): its
// record is the string key KEY.instances/ID, set with a TTL of
// datasource.MissedBeats intervals at every beat, so Redis removes it
// once the beats stop; Close deletes it.
func (s *Source) Register(ctx context.Context, inst datasource.Instance) (io.Closer, error) {
	return s.reg.Register(ctx, inst)
}

// Instances lists the instances registered beside the document
// (datasource.Registry): the keys that SCAN finds under KEY.instances/
// (on every master of a cluster, every shard of a ring), each read with
// GET. A key created or removed while SCAN walks may be listed or not.
func (s *Source) Instances(ctx context.Context) ([]datasource.Instance, error) {
	return s.reg.Instances(ctx)
}

// instanceStore is registry.Store on Redis: a key with a TTL per record.
type instanceStore struct{ s *Source }

func (st instanceStore) key(id string) string { return registry.Prefix(st.s.key) + id }

func (st instanceStore) Put(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	return st.s.exec(ctx, func() error { return st.s.client.Set(ctx, st.key(id), rec, ttl).Err() })
}

func (st instanceStore) List(ctx context.Context) ([][]byte, error) {
	keys, err := st.s.scan(ctx, escapeGlob(registry.Prefix(st.s.key))+"*")
	if err != nil {
		return nil, err
	}
	recs := make([][]byte, 0, len(keys))
	for _, k := range keys {
		b, err := call(ctx, st.s, func() ([]byte, error) { return st.s.client.Get(ctx, k).Bytes() })
		switch {
		case errors.Is(err, goredis.Nil):
			continue // expired since SCAN
		case err != nil:
			return nil, err
		}
		recs = append(recs, b)
	}
	return recs, nil
}

func (st instanceStore) Delete(ctx context.Context, id string) error {
	return st.s.exec(ctx, func() error { return st.s.client.Del(ctx, st.key(id)).Err() })
}
