package consul_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/consul"
)

// Flow rules for one service and environment, kept in step with a Consul
// KV key. (It needs a server, so it is compiled, not run.)
func Example() {
	cfg := api.DefaultConfig() // CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, ...
	cfg.Address = "127.0.0.1:8500"
	cli, err := api.NewClient(cfg)
	if err != nil {
		log.Fatal(err)
	}

	engine := core.NewEngine()
	defer engine.Close()
	ds := datasource.NewReadable(consul.New(cli, "bulwark/order-service/prod/flow"), converter.FlowRules())
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
// applies the function and writes with a check-and-set on the key's
// ModifyIndex, starting again on conflict.
func ExampleSource_Write() {
	cli, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	w := datasource.NewWritable(consul.New(cli, "bulwark/order-service/prod/flow"), converter.FlowRules())
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
