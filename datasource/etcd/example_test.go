package etcd_test

import (
	"context"
	"fmt"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/etcd"
)

// Flow rules for one service and environment, kept in step with an etcd
// key. (It needs a server, so it is compiled, not run.)
func Example() {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"127.0.0.1:2379"},
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	engine := core.NewEngine()
	defer engine.Close()
	ds := datasource.NewReadable(etcd.New(cli, "/bulwark/order-service/prod/flow"), converter.FlowRules())
	engine.Flow().Register(ds.Property())
	cancel := engine.Flow().OnChange(func(c core.RuleChange[flow.Rule]) {
		fmt.Printf("flow rules: %d active\n", len(c.New))
	})
	defer cancel()

	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := ds.Start(ctx); err != nil {
		log.Printf("no rules yet (retrying in the background): %v", err)
	}
	defer ds.Close()
	fmt.Printf("%+v\n", ds.Status())
}

// Changing one threshold without losing a concurrent edit: Update reads,
// applies the function and writes with compare-and-set on the key's mod
// revision, starting again on conflict.
func ExampleSource_Write() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	w := datasource.NewWritable(etcd.New(cli, "/bulwark/order-service/prod/flow"), converter.FlowRules())
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	err = w.Update(ctx, func(rules []flow.Rule) ([]flow.Rule, error) {
		for i := range rules {
			if rules[i].Resource == "GET /orders" {
				rules[i].Count = 200
			}
		}
		return rules, nil
	})
	if err != nil {
		log.Fatal(err)
	}
}
