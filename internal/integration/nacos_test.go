package integration

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// newNacosConfigClient returns a config client of the server at addr for namespace ns,
// with its cache and logs under t's temporary directory and the local snapshot disabled
// (so a GetConfig during an outage fails instead of answering from disk).
func newNacosConfigClient(t *testing.T, addr, ns string) config_client.IConfigClient {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.ParseUint(port, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cc := constant.NewClientConfig(
		constant.WithNamespaceId(ns),
		constant.WithTimeoutMs(3000),
		constant.WithNotLoadCacheAtStart(true),
		constant.WithDisableUseSnapShot(true),
		constant.WithCacheDir(filepath.Join(dir, "cache")),
		constant.WithLogDir(filepath.Join(dir, "log")),
		constant.WithLogLevel("error"),
	)
	client, err := clients.NewConfigClient(vo.NacosClientParam{
		ClientConfig:  cc,
		ServerConfigs: []constant.ServerConfig{*constant.NewServerConfig(host, p)},
	})
	if err != nil {
		t.Fatalf("nacos config client: %v", err)
	}
	t.Cleanup(client.CloseClient)
	return client
}

// eventuallyConfig polls GetConfig until it returns want (errors count as not yet), and
// returns how long it took.
func eventuallyConfig(t *testing.T, c config_client.IConfigClient, dataID, group, want string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var got string
	var err error
	for time.Since(start) < within {
		got, err = c.GetConfig(vo.ConfigParam{DataId: dataID, Group: group})
		if err == nil && got == want {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("GetConfig(%s, %s) after %v: got %q, %v; want %q", dataID, group, within, got, err, want)
	return 0
}

func publish(t *testing.T, c config_client.IConfigClient, dataID, group, content string) {
	t.Helper()
	ok, err := c.PublishConfig(vo.ConfigParam{DataId: dataID, Group: group, Content: content})
	if err != nil || !ok {
		t.Fatalf("PublishConfig(%s, %s): %v, %v", dataID, group, ok, err)
	}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestNacosSmoke checks the Nacos-protocol server with the Go SDK: publish, read, listen,
// compare-and-set, delete, namespaces and groups, and the controls.
func TestNacosSmoke(t *testing.T) {
	srv := StartNacos(t)
	t.Logf("nacos server at %s (%s mode)", srv.Addr(), srv.Mode())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newNacosConfigClient(t, srv.Addr(), "")
	const group = "SENTINEL_GROUP"
	const id = "bulwark-flow-rules"

	// A missing config reads as "" with no error.
	if got, err := c.GetConfig(vo.ConfigParam{DataId: id, Group: group}); err != nil || got != "" {
		t.Fatalf("GetConfig of a missing config: %q, %v", got, err)
	}

	publish(t, c, id, group, `[{"resource":"a","count":1}]`)
	d := eventuallyConfig(t, c, id, group, `[{"resource":"a","count":1}]`, 10*time.Second)
	t.Logf("publish visible to GetConfig after %v", d)

	// ListenConfig: wait for the new content; other callbacks (an empty one, the old
	// content) may come first.
	var mu sync.Mutex
	var seen []string
	changed := make(chan string, 16)
	err := c.ListenConfig(vo.ConfigParam{DataId: id, Group: group, OnChange: func(_, _, _, data string) {
		mu.Lock()
		seen = append(seen, data)
		mu.Unlock()
		select {
		case changed <- data:
		default:
		}
	}})
	if err != nil {
		t.Fatalf("ListenConfig: %v", err)
	}
	// The SDK registers a listener on its next 5 s tick: let it settle before publishing.
	time.Sleep(6 * time.Second)
	pubAt := time.Now()
	publish(t, c, id, group, `[{"resource":"a","count":2}]`)
	waitChange := func(want string) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case data := <-changed:
				if data == want {
					return
				}
			case <-deadline:
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("no callback with %q; callbacks: %q", want, seen)
			}
		}
	}
	waitChange(`[{"resource":"a","count":2}]`)
	t.Logf("listener callback %v after the publish", time.Since(pubAt))
	eventuallyConfig(t, c, id, group, `[{"resource":"a","count":2}]`, 10*time.Second)

	// Compare-and-set with CasMd5.
	cur := `[{"resource":"a","count":2}]`
	ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: group, Content: "stale", CasMd5: md5Hex("something else")})
	t.Logf("publish with a stale CasMd5: ok=%v err=%v", ok, err)
	if ok || err == nil {
		t.Errorf("publish with a stale CasMd5 succeeded")
	}
	ok, err = c.PublishConfig(vo.ConfigParam{DataId: id, Group: group, Content: "cas-right", CasMd5: md5Hex(cur)})
	t.Logf("publish with the current CasMd5: ok=%v err=%v", ok, err)
	casNew := "cas-new"
	okNew, errNew := c.PublishConfig(vo.ConfigParam{DataId: "bulwark-cas-new", Group: group, Content: casNew, CasMd5: md5Hex("whatever")})
	t.Logf("publish of a new config with some CasMd5: ok=%v err=%v", okNew, errNew)
	time.Sleep(1500 * time.Millisecond)
	got, _ := c.GetConfig(vo.ConfigParam{DataId: id, Group: group})
	t.Logf("after the CAS publishes the config reads %q", got)
	if got == "stale" {
		t.Errorf("the publish with a stale CasMd5 was applied")
	}
	if ok {
		cur = "cas-right"
	}

	// Groups and namespaces are separate.
	if got, err := c.GetConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP"}); err != nil || got != "" {
		t.Errorf("GetConfig in another group: %q, %v; want empty", got, err)
	}
	public := newNacosConfigClient(t, srv.Addr(), "public")
	d = eventuallyConfig(t, public, id, group, cur, 10*time.Second)
	t.Logf(`namespace "public" reads namespace "" (after %v)`, d)
	dev := newNacosConfigClient(t, srv.Addr(), "bulwark-dev")
	if got, err := dev.GetConfig(vo.ConfigParam{DataId: id, Group: group}); err != nil || got != "" {
		t.Errorf("GetConfig in namespace bulwark-dev before any publish: %q, %v; want empty", got, err)
	}
	publish(t, dev, id, group, "dev")
	eventuallyConfig(t, dev, id, group, "dev", 10*time.Second)
	eventuallyConfig(t, c, id, group, cur, 2*time.Second)

	// Delete: reads as "" again.
	if ok, err := c.DeleteConfig(vo.ConfigParam{DataId: id, Group: group}); err != nil || !ok {
		t.Fatalf("DeleteConfig: %v, %v", ok, err)
	}
	eventuallyConfig(t, c, id, group, "", 10*time.Second)
	waitChange("")

	// Stop and Start: the data is kept and the client reconnects by itself.
	if nacosRaceEnabled {
		// nacos-sdk-go v2.3.2 races on reconnect (RpcClient.notifyConnectionEvent reads
		// currentConnection while reconnect writes it; nacos-group/nacos-sdk-go issues 741
		// and 905), which fails the test under -race. Run it without -race for this part.
		t.Skip("the rest (stop/start, pause/resume) makes the SDK reconnect, and nacos-sdk-go v2.3.2 " +
			"has a data race on reconnect: run TestNacosSmoke without -race")
	}
	publish(t, c, id, group, "before restart")
	eventuallyConfig(t, c, id, group, "before restart", 10*time.Second)
	time.Sleep(time.Second) // let the write reach the store, not just the cache
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetConfig(vo.ConfigParam{DataId: id, Group: group}); err == nil {
		t.Errorf("GetConfig with the server stopped succeeded")
	}
	start := time.Now()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("server started again in %v", time.Since(start))
	d = eventuallyConfig(t, c, id, group, "before restart", 30*time.Second)
	t.Logf("client read the kept config %v after Start returned", d)
	publish(t, c, id, group, "after restart")
	waitChange("after restart")

	// Pause and Resume.
	if err := srv.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, err = c.GetConfig(vo.ConfigParam{DataId: id, Group: group})
	t.Logf("GetConfig with the server paused: %v after %v", err, time.Since(start))
	if err == nil {
		t.Errorf("GetConfig with the server paused succeeded")
	}
	if err := srv.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	d = eventuallyConfig(t, c, id, group, "after restart", 30*time.Second)
	t.Logf("client read again %v after Resume", d)
	publish(t, c, id, group, "after resume")
	waitChange("after resume")
}
