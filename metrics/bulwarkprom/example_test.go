package bulwarkprom_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/metrics/bulwarkprom"
)

func ExampleNewCollector() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "GET /orders", Count: 100}})

	reg := prometheus.NewRegistry()
	reg.MustRegister(bulwarkprom.NewCollector(e))
	// Serve it where you like, for example:
	_ = http.Handler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP bulwark_rules Rules in force.
# TYPE bulwark_rules gauge
bulwark_rules{kind="authority"} 0
bulwark_rules{kind="degrade"} 0
bulwark_rules{kind="flow"} 1
bulwark_rules{kind="paramFlow"} 0
bulwark_rules{kind="system"} 0
`), "bulwark_rules")
	fmt.Println(err)
	// Output: <nil>
}
