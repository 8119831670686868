package nacos_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/bulwark-go/bulwark/converter"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/datasource"
	"github.com/bulwark-go/bulwark/datasource/nacos"
)

// A service reads its flow rules from the dataId Sentinel's dashboard and
// Spring Cloud Alibaba use, and follows every change.
func Example() {
	ctx := context.Background()
	cli, err := clients.NewConfigClient(vo.NacosClientParam{
		ClientConfig: constant.NewClientConfig(
			constant.WithNamespaceId("prod"),
			constant.WithTimeoutMs(3000),
			constant.WithNotLoadCacheAtStart(true),
			constant.WithDisableUseSnapShot(true), // an outage keeps the rules in force
			constant.WithCacheDir("/var/cache/order-service/nacos"),
			constant.WithLogDir("/var/log/order-service/nacos"),
			constant.WithLogLevel("warn"),
		),
		ServerConfigs: []constant.ServerConfig{*constant.NewServerConfig("nacos.internal", 8848)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cli.CloseClient()

	src := nacos.New(cli, "order-service-flow-rules", "SENTINEL_GROUP")
	ds := datasource.NewReadable(src, converter.FlowRules(),
		datasource.WithReconcileInterval(nacos.ReconcileInterval),
		datasource.WithCacheDir("/var/cache/order-service/rules"))
	core.Default().Flow().Register(ds.Property())
	if err := ds.Start(ctx); err != nil {
		fmt.Println("no flow rules yet:", err) // it keeps trying in the background
	}
	defer ds.Close()

	// Change one threshold without losing a concurrent edit: compare-and-set
	// on Nacos' md5 of the content, retried on conflict.
	w := datasource.NewWritable(src, converter.FlowRules(), datasource.WaitApplied(ds, 10*time.Second))
	_ = w
}
