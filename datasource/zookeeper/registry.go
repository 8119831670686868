package zookeeper

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/internal/registry"
)

// Register registers inst beside the document (datasource.Registry): its
// record is the ephemeral node PATH.instances/ID (the parent is created,
// persistent, with the Source's ACL), whose data every beat rewrites.
// ZooKeeper removes the node when the connection's session ends; while the
// session lives on without beats (a hung process), Instances reports the
// record Stale. A session that expired and came back makes the next beat
// create the node again. Close deletes it.
func (s *Source) Register(ctx context.Context, inst datasource.Instance) (io.Closer, error) {
	return s.reg.Register(ctx, inst)
}

// Instances lists the instances registered beside the document
// (datasource.Registry): the children of PATH.instances, each read.
func (s *Source) Instances(ctx context.Context) ([]datasource.Instance, error) {
	return s.reg.Instances(ctx)
}

// instanceStore is registry.Store on ZooKeeper: an ephemeral node per
// record; the TTL is the session's.
type instanceStore struct{ s *Source }

func (st instanceStore) dir() string           { return strings.TrimSuffix(registry.Prefix(st.s.path), "/") }
func (st instanceStore) node(id string) string { return registry.Prefix(st.s.path) + id }

func (st instanceStore) Put(ctx context.Context, id string, rec []byte, _ time.Duration) error {
	s, node := st.s, st.node(id)
	set := func() error {
		_, err := call(ctx, s, "register", func() (got, error) {
			_, err := s.conn.Set(node, rec, -1)
			return got{}, err
		})
		return err
	}
	create := func() error {
		_, err := call(ctx, s, "register", func() (got, error) {
			_, err := s.conn.Create(node, rec, zk.FlagEphemeral, s.acl)
			return got{}, err
		})
		return err
	}
	err := set()
	if !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	err = create()
	if errors.Is(err, zk.ErrNoNode) { // no parent yet
		if err = st.createDir(ctx); err != nil {
			return err
		}
		err = create()
	}
	if errors.Is(err, zk.ErrNodeExists) { // created by a beat of ours that timed out
		err = set()
	}
	return err
}

func (st instanceStore) createDir(ctx context.Context) error {
	s := st.s
	if err := s.createParents(ctx); err != nil {
		return err
	}
	_, err := call(ctx, s, "create the instances node", func() (got, error) {
		_, err := s.conn.Create(st.dir(), nil, 0, s.acl)
		return got{}, err
	})
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

func (st instanceStore) List(ctx context.Context) ([][]byte, error) {
	s := st.s
	r, err := call(ctx, s, "list the instances of", func() (got, error) {
		children, _, err := s.conn.Children(st.dir())
		return got{children: children}, err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil
	case err != nil:
		return nil, err
	}
	recs := make([][]byte, 0, len(r.children))
	for _, id := range r.children {
		g, err := call(ctx, s, "read the instance of", func() (got, error) {
			data, _, err := s.conn.Get(st.node(id))
			return got{data: data}, err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue // gone since Children
		case err != nil:
			return nil, err
		}
		recs = append(recs, g.data)
	}
	return recs, nil
}

func (st instanceStore) Delete(ctx context.Context, id string) error {
	s := st.s
	_, err := call(ctx, s, "unregister", func() (got, error) {
		return got{}, s.conn.Delete(st.node(id), -1)
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
