package zookeeper_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/zookeeper"
)

// Flow rules from a ZooKeeper node, followed live; a tool changes one
// threshold with compare-and-set. The node holds Java Sentinel's JSON, so a
// Java service can read the same node.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// The connection is the application's: servers, session timeout, auth.
	servers := []string{"127.0.0.1:2181"}
	conn, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	_ = conn.AddAuth("digest", []byte("order-service:secret")) // when the node has a digest ACL

	// WithServers names the document (and its last-good cache):
	// zk://127.0.0.1:2181/bulwark/order-service/prod/flow. WithACL is the
	// ACL of the nodes Write creates.
	src := zookeeper.New(conn, "/bulwark/order-service/prod/flow",
		zookeeper.WithServers(servers...),
		zookeeper.WithACL(zk.DigestACL(zk.PermAll, "order-service", "secret")...))
	ds := datasource.NewReadable(src, converter.FlowRules())
	engine := core.Default()
	engine.Flow().Register(ds.Property())
	if err := ds.Start(ctx); err != nil {
		fmt.Println("no rules yet:", err) // Start keeps trying in the background
	}
	defer ds.Close()

	// Raise one threshold without losing a concurrent edit, and wait until
	// the running rules have it.
	w := datasource.NewWritable(src, converter.FlowRules(), datasource.WaitApplied(ds, 5*time.Second))
	err = w.Update(ctx, func(rules []flow.Rule) ([]flow.Rule, error) {
		for i := range rules {
			if rules[i].Resource == "GET /orders" {
				rules[i].Count *= 2
			}
		}
		return rules, nil
	})
	st := ds.Status()
	fmt.Println(err, st.Revision, st.Err)
}
