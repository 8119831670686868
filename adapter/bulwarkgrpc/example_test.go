package bulwarkgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/bulwark-go/bulwark/adapter/bulwarkgrpc"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/flow"
)

func ExampleUnaryServerInterceptor() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "/grpc.health.v1.Health/Check", Count: 2}})

	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(bulwarkgrpc.UnaryServerInterceptor(e)))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	defer func() { srv.Stop(); <-done }()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for range 3 {
		resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			st := status.Convert(err)
			fmt.Println(st.Code(), st.Message())
			continue
		}
		fmt.Println(resp.GetStatus())
	}
	// Output:
	// SERVING
	// SERVING
	// ResourceExhausted bulwark: blocked (flow)
}

// A client limits its own calls: a call a rule refuses never reaches the
// network, and errors.Is tells it from a failure of the server.
func ExampleUnaryClientInterceptor() {
	e := core.NewEngine()
	defer e.Close()
	_ = e.Flow().Load([]flow.Rule{{Resource: "/grpc.health.v1.Health/Check", Count: 0}})

	// No server is needed to see a call refused locally.
	conn, err := grpc.NewClient("127.0.0.1:1",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(bulwarkgrpc.UnaryClientInterceptor(e)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	_, err = healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(status.Code(err), errors.Is(err, core.ErrBlocked))
	// Output:
	// ResourceExhausted true
}
