package nacos_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bulwark-go/bulwark/datasource"
	sizelimit "github.com/bulwark-go/bulwark/datasource/internal/limit"
	"github.com/bulwark-go/bulwark/datasource/nacos"
	"github.com/bulwark-go/bulwark/internal/integration"
)

// A config over the read limit is refused, one at the limit is read.
func TestReadLimit(t *testing.T) {
	srv := integration.StartNacos(t)
	ctx := testCtx(t)
	const group, limit = "SENTINEL_GROUP", 100
	dataID := uniqueID("bulwark-limit")
	w := newWriter(t, srv.Addr(), "", dataID, group)
	src := nacos.New(newClient(t, srv.Addr(), ""), dataID, group)
	limited := sizelimit.With(ctx, limit)

	at := strings.Repeat("x", limit)
	require.NoError(t, w.put(ctx, at))
	// Reads may lag the write for a moment (the server answers from a cache).
	var snap datasource.Snapshot
	require.Eventually(t, func() bool {
		var err error
		snap, err = src.Read(limited)
		return err == nil && string(snap.Data) == at
	}, 30*time.Second, 50*time.Millisecond, "a config at the limit is read (last: %+v)", snap)

	require.NoError(t, w.put(ctx, at+"x"))
	var err error
	require.Eventually(t, func() bool {
		_, err = src.Read(limited)
		return errors.Is(err, datasource.ErrTooLarge)
	}, 30*time.Second, 50*time.Millisecond, "a config over the limit is refused (last error: %v)", err)
	assert.ErrorContains(t, err, group+"/"+dataID)
	t.Logf("over the limit: %v", err)
}

// The name holds the servers, the namespace, the group and the dataId,
// read from the SDK's client.
func TestString(t *testing.T) {
	srv := integration.StartNacos(t)
	a := nacos.New(newClient(t, srv.Addr(), "bulwark-a"), "flow", "SENTINEL_GROUP")
	assert.Equal(t, "nacos://"+srv.Addr()+"/bulwark-a/SENTINEL_GROUP/flow", a.String())
	b := nacos.New(newClient(t, srv.Addr(), "bulwark-b"), "flow", "SENTINEL_GROUP")
	assert.NotEqual(t, a.String(), b.String(), "one dataId in two namespaces")
	pub := nacos.New(newClient(t, srv.Addr(), ""), "flow", "")
	assert.Equal(t, "nacos://"+srv.Addr()+"//DEFAULT_GROUP/flow", pub.String(), "public namespace, default group")
}

// described is an IConfigClient that tells its settings the way the SDK's
// own client does; nothing else of it is called.
type described struct {
	config_client.IConfigClient
	cc  constant.ClientConfig
	scs []constant.ServerConfig
}

func (d described) GetClientConfig() (constant.ClientConfig, error)   { return d.cc, nil }
func (d described) GetServerConfig() ([]constant.ServerConfig, error) { return d.scs, nil }

func TestStringFormats(t *testing.T) {
	cli := described{
		cc: constant.ClientConfig{NamespaceId: "prod", Username: "svc", Password: "secret"},
		scs: []constant.ServerConfig{
			{IpAddr: "10.0.0.2", Port: 8848}, {IpAddr: "10.0.0.1", Port: 8848}, {IpAddr: "::1", Port: 8848},
		},
	}
	src := nacos.New(cli, "order-service-flow-rules", "SENTINEL_GROUP")
	assert.Equal(t, "nacos://10.0.0.1:8848,10.0.0.2:8848,[::1]:8848/prod/SENTINEL_GROUP/order-service-flow-rules", src.String())
	assert.NotContains(t, src.String(), "secret")

	viaEndpoint := described{cc: constant.ClientConfig{NamespaceId: "prod", Endpoint: "acm.example:8080"}}
	assert.Equal(t, "nacos://acm.example:8080/prod/G/d", nacos.New(viaEndpoint, "d", "G").String())

	var opaque struct{ config_client.IConfigClient } // tells nothing
	assert.Equal(t, "nacos:////G/d", nacos.New(opaque, "d", "G").String())
}
