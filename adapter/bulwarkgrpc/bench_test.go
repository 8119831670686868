package bulwarkgrpc_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"github.com/bulwark-go/bulwark/adapter/bulwarkgrpc"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

// BenchmarkUnaryServerInterceptor compares, in one run, a unary handler
// called bare, inside the engine's Enter and Exit written by hand
// ("enter-exit"), and through the interceptor ("protected"). The method
// has a flow rule that admits everything, so its check runs.
func BenchmarkUnaryServerInterceptor(b *testing.B) {
	e := core.NewEngine()
	defer e.Close()
	if err := e.Flow().Load([]flow.Rule{{Resource: getMethod, Count: 1e12}}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req, resp := any("request"), any("response")
	handler := func(ctx context.Context, req any) (any, error) { return resp, nil }
	info := &grpc.UnaryServerInfo{FullMethod: getMethod}
	icpt := bulwarkgrpc.UnaryServerInterceptor(e)
	for _, bc := range []struct {
		name string
		call func() (any, error)
	}{
		{"bare", func() (any, error) { return handler(ctx, req) }},
		{"enter-exit", func() (any, error) {
			en, err := e.Enter(ctx, info.FullMethod, core.Inbound())
			if err != nil {
				return nil, err
			}
			defer en.Exit()
			return handler(ctx, req)
		}},
		{"protected", func() (any, error) { return icpt(ctx, req, info, handler) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
