package bulwarkgrpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/internal/testclock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The test service, registered by hand (no generated code), with
// protobuf's well-known wrapper messages:
//
//	service Orders {
//	  rpc Get(StringValue) returns (StringValue);                 // unary
//	  rpc Watch(StringValue) returns (stream StringValue);        // server streaming
//	  rpc Upload(stream StringValue) returns (StringValue);       // client streaming
//	}
const (
	getMethod    = "/bulwark.test.Orders/Get"
	watchMethod  = "/bulwark.test.Orders/Watch"
	uploadMethod = "/bulwark.test.Orders/Upload"
)

var (
	watchDesc  = grpc.StreamDesc{StreamName: "Watch", ServerStreams: true}
	uploadDesc = grpc.StreamDesc{StreamName: "Upload", ClientStreams: true}
)

// orders implements the service; the test sets how it answers.
type orders struct {
	fail   atomic.Uint32 // the code every call fails with; OK: succeed
	panics atomic.Bool   // Get panics
	calls  atomic.Int64  // handler runs
	hold   chan struct{} // Watch sends one message, then waits for it to close
}

func (o *orders) result() error {
	o.calls.Add(1)
	if c := codes.Code(o.fail.Load()); c != codes.OK {
		return status.Error(c, "failing as told")
	}
	return nil
}

var ordersDesc = grpc.ServiceDesc{
	ServiceName: "bulwark.test.Orders",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Get",
		Handler: func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			get := func(ctx context.Context, req any) (any, error) {
				o := srv.(*orders)
				if o.panics.Load() {
					panic("orders: Get panicked")
				}
				if err := o.result(); err != nil {
					return nil, err
				}
				return wrapperspb.String("order " + req.(*wrapperspb.StringValue).Value), nil
			}
			if icpt == nil {
				return get(ctx, in)
			}
			return icpt(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: getMethod}, get)
		},
	}},
	Streams: []grpc.StreamDesc{
		{StreamName: "Watch", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
			o := srv.(*orders)
			in := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(in); err != nil {
				return err
			}
			if err := o.result(); err != nil {
				return err
			}
			if err := ss.SendMsg(wrapperspb.String("update " + in.Value)); err != nil {
				return err
			}
			if o.hold != nil {
				select {
				case <-o.hold:
				case <-ss.Context().Done():
					return ss.Context().Err()
				}
			}
			return nil
		}},
		{StreamName: "Upload", ClientStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
			n := 0
			for {
				err := ss.RecvMsg(new(wrapperspb.StringValue))
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				n++
			}
			if err := srv.(*orders).result(); err != nil {
				return err
			}
			return ss.SendMsg(wrapperspb.Int64(int64(n)))
		}},
	},
}

// newEngine returns an engine on a clock that moves only when told.
func newEngine(t *testing.T) (*core.Engine, *testclock.Clock) {
	t.Helper()
	clk := testclock.New()
	e := core.NewEngine(core.WithClock(clk))
	t.Cleanup(func() { _ = e.Close() })
	return e, clk
}

// serve runs the service on a loopback listener with the server options
// and returns a connection to it with the dial options.
func serve(t *testing.T, impl *orders, serverOpts []grpc.ServerOption, dialOpts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(serverOpts...)
	srv.RegisterService(&ordersDesc, impl)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(lis) })
	conn, err := grpc.NewClient(lis.Addr().String(),
		append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dialOpts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		wg.Wait()
	})
	return conn
}

// get calls Get and returns the status code.
func get(t *testing.T, conn *grpc.ClientConn, id string, opts ...grpc.CallOption) (codes.Code, string) {
	t.Helper()
	out := new(wrapperspb.StringValue)
	err := conn.Invoke(t.Context(), getMethod, wrapperspb.String(id), out, opts...)
	st := status.Convert(err)
	return st.Code(), st.Message()
}

func gets(t *testing.T, conn *grpc.ClientConn, ids ...string) []codes.Code {
	t.Helper()
	out := make([]codes.Code, len(ids))
	for i, id := range ids {
		out[i], _ = get(t, conn, id)
	}
	return out
}
