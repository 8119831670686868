package authority_test

import (
	"context"
	"fmt"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
)

// Only the apps "ops" and "sre" may call the admin API.
func Example() {
	e := core.NewEngine()
	err := e.Authority().Load([]authority.Rule{{Resource: "admin", LimitApp: "ops,sre", Strategy: authority.White}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, origin := range []string{"ops", "web", ""} {
		en, err := e.Enter(ctx, "admin", core.WithOrigin(origin))
		if err == nil {
			en.Exit()
		}
		fmt.Printf("%q: %v\n", origin, err)
	}
	// Output:
	// "ops": <nil>
	// "web": core: admin blocked by authority rule white limitApp=ops,sre
	// "": <nil>
}
