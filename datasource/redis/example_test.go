package redis_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/redis"
)

// A service follows its flow rules in Redis, and a tool changes one
// threshold without losing a concurrent edit.
func ExampleNew() {
	ctx := context.Background()
	// TLS, ACL user and password are the client's business.
	client := goredis.NewClient(&goredis.Options{
		Addr:     "127.0.0.1:6379",
		Username: "order-service",
		Password: os.Getenv("REDIS_PASSWORD"),
	})
	defer client.Close() // the Source never closes it

	key := "bulwark:order-service:prod:flow"
	src := redis.New(client, key, key+":changed")

	// Read, and follow changes: a message on the channel makes the
	// datasource GET the key again.
	ds := datasource.NewReadable(src, converter.FlowRules())
	core.Default().Flow().Register(ds.Property())
	if err := ds.Start(ctx); err != nil {
		fmt.Println("no rules yet:", err) // it keeps retrying in the background
	}
	defer ds.Close()

	// Write back: WATCH, compare, MULTI SET + PUBLISH EXEC, retried on
	// conflict. Wait until this service runs the new rules.
	w := datasource.NewWritable(src, converter.FlowRules(), datasource.WaitApplied(ds, 5*time.Second))
	err := w.Update(ctx, func(rules []flow.Rule) ([]flow.Rule, error) {
		rules = slices.Clone(rules)
		for i := range rules {
			if rules[i].Resource == "GET /orders" {
				rules[i].Count = 200
			}
		}
		return rules, nil
	})
	if err != nil {
		fmt.Println("update:", err)
	}
}
