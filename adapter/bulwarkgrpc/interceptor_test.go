package bulwarkgrpc_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/bulwark-go/bulwark/adapter/bulwarkgrpc"
	"github.com/bulwark-go/bulwark/core"
	"github.com/bulwark-go/bulwark/core/authority"
	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
	"github.com/bulwark-go/bulwark/core/system"
)

func protectedServer(e *core.Engine, opts ...bulwarkgrpc.Option) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(bulwarkgrpc.UnaryServerInterceptor(e, opts...)),
		grpc.ChainStreamInterceptor(bulwarkgrpc.StreamServerInterceptor(e, opts...)),
	}
}

func TestServerFlowAndSystemRulesAnswerResourceExhausted(t *testing.T) {
	e, clk := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: getMethod, Count: 2}}))
	impl := &orders{}
	conn := serve(t, impl, protectedServer(e))

	assert.Equal(t, []codes.Code{codes.OK, codes.OK}, gets(t, conn, "1", "2"))
	code, msg := get(t, conn, "3")
	assert.Equal(t, codes.ResourceExhausted, code)
	assert.Equal(t, "bulwark: blocked (flow)", msg)
	assert.EqualValues(t, 2, impl.calls.Load(), "a blocked call never reaches the handler")

	clk.Advance(time.Second)
	require.NoError(t, e.Flow().Load(nil))
	require.NoError(t, e.System().Load([]system.Rule{{QPS: 1}}))
	assert.Equal(t, []codes.Code{codes.OK, codes.ResourceExhausted}, gets(t, conn, "4", "5"))
	_, msg = get(t, conn, "6")
	assert.Equal(t, "bulwark: blocked (system)", msg)
}

func TestServerErrorsOpenTheBreakerApplicationCodesDoNot(t *testing.T) {
	e, clk := newEngine(t)
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: getMethod, Grade: circuitbreaker.ErrorRatio, Count: 0.5, TimeWindow: 10, MinRequestAmount: 4,
	}}))
	impl := &orders{}
	conn := serve(t, impl, protectedServer(e))

	impl.fail.Store(uint32(codes.NotFound))
	assert.Equal(t, []codes.Code{codes.NotFound, codes.NotFound, codes.NotFound, codes.NotFound, codes.NotFound},
		gets(t, conn, "a", "b", "c", "d", "e"), "NotFound is an answer, not a failure")

	clk.Advance(time.Second) // a new statistic interval
	impl.fail.Store(uint32(codes.Internal))
	assert.Equal(t, []codes.Code{codes.Internal, codes.Internal, codes.Internal, codes.Internal}, gets(t, conn, "a", "b", "c", "d"))
	code, msg := get(t, conn, "e")
	assert.Equal(t, codes.Unavailable, code)
	assert.Equal(t, "bulwark: blocked (degrade)", msg)

	impl.fail.Store(uint32(codes.OK))
	assert.Equal(t, []codes.Code{codes.Unavailable}, gets(t, conn, "f"), "open until its time window passes")
	clk.Advance(10 * time.Second)
	assert.Equal(t, []codes.Code{codes.OK, codes.OK, codes.OK}, gets(t, conn, "g", "h", "i"), "the probe succeeded")
}

func TestEveryDefaultErrorCodeCountsAndWithErrorCodesReplacesThem(t *testing.T) {
	opens := func(t *testing.T, fail codes.Code, opts ...bulwarkgrpc.Option) bool {
		e, _ := newEngine(t)
		require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
			Resource: getMethod, Grade: circuitbreaker.ErrorCount, Count: 1, TimeWindow: 10, MinRequestAmount: 1,
		}}))
		impl := &orders{}
		impl.fail.Store(uint32(fail))
		conn := serve(t, impl, protectedServer(e, opts...))
		gets(t, conn, "a", "b")
		code, _ := get(t, conn, "c")
		return code == codes.Unavailable && impl.calls.Load() == 2
	}
	for _, c := range []codes.Code{codes.Unknown, codes.DeadlineExceeded, codes.Internal, codes.Unavailable, codes.DataLoss} {
		assert.True(t, opens(t, c), "%v counts", c)
	}
	for _, c := range []codes.Code{codes.NotFound, codes.InvalidArgument, codes.PermissionDenied, codes.AlreadyExists, codes.Canceled} {
		assert.False(t, opens(t, c), "%v does not count", c)
	}
	assert.True(t, opens(t, codes.NotFound, bulwarkgrpc.WithErrorCodes(codes.NotFound)))
	assert.False(t, opens(t, codes.Internal, bulwarkgrpc.WithErrorCodes(codes.NotFound)))
}

func TestAPanicCountsAndReachesTheRecoveryOutside(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: getMethod, Grade: circuitbreaker.ErrorCount, Count: 0.5, TimeWindow: 10, MinRequestAmount: 1,
	}}))
	recovered := make(chan any, 1)
	recovery := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (_ any, err error) {
		defer func() {
			if v := recover(); v != nil {
				recovered <- v
				err = status.Error(codes.Aborted, "recovered") // a code that does not count
			}
		}()
		return h(ctx, req)
	}
	impl := &orders{}
	impl.panics.Store(true)
	// No code counts: only the panic can open the breaker.
	conn := serve(t, impl, []grpc.ServerOption{grpc.ChainUnaryInterceptor(recovery,
		bulwarkgrpc.UnaryServerInterceptor(e, bulwarkgrpc.WithErrorCodes()))})

	code, _ := get(t, conn, "1")
	assert.Equal(t, codes.Aborted, code)
	assert.Equal(t, "orders: Get panicked", <-recovered)
	code, _ = get(t, conn, "2")
	assert.Equal(t, codes.Unavailable, code, "the panic opened the breaker")
}

// watch opens a Watch stream and returns it with its first message's
// error (a block shows there on a server-streaming call).
func watch(ctx context.Context, conn *grpc.ClientConn, id string) (grpc.ClientStream, error) {
	s, err := conn.NewStream(ctx, &watchDesc, watchMethod)
	if err != nil {
		return nil, err
	}
	if err := s.SendMsg(wrapperspb.String(id)); err != nil {
		return nil, err
	}
	if err := s.CloseSend(); err != nil {
		return nil, err
	}
	return s, s.RecvMsg(new(wrapperspb.StringValue))
}

func TestAServerStreamHoldsItsEntryUntilTheHandlerReturns(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: watchMethod, Grade: flow.GradeThread, Count: 1}}))
	impl := &orders{hold: make(chan struct{})}
	conn := serve(t, impl, protectedServer(e))

	first, err := watch(t.Context(), conn, "1")
	require.NoError(t, err)
	_, err = watch(t.Context(), conn, "2")
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Equal(t, "bulwark: blocked (flow)", status.Convert(err).Message())

	close(impl.hold)
	assert.ErrorIs(t, first.RecvMsg(new(wrapperspb.StringValue)), io.EOF)
	require.Eventually(t, func() bool {
		s, err := watch(t.Context(), conn, "3")
		if err == nil {
			assert.ErrorIs(t, s.RecvMsg(new(wrapperspb.StringValue)), io.EOF)
		}
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "the entry ended with the handler")
}

func TestServerStreamErrorsOpenTheBreaker(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: watchMethod, Grade: circuitbreaker.ErrorCount, Count: 1, TimeWindow: 10, MinRequestAmount: 1,
	}}))
	impl := &orders{}
	impl.fail.Store(uint32(codes.DataLoss))
	conn := serve(t, impl, protectedServer(e))
	for range 2 {
		_, err := watch(t.Context(), conn, "x")
		assert.Equal(t, codes.DataLoss, status.Code(err))
	}
	_, err := watch(t.Context(), conn, "x")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.EqualValues(t, 2, impl.calls.Load())
}

func TestOriginAndHotParametersOnTheServer(t *testing.T) {
	e, clk := newEngine(t)
	require.NoError(t, e.Authority().Load([]authority.Rule{{Resource: getMethod, LimitApp: "scraper", Strategy: authority.Black}}))
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: getMethod, LimitApp: "mobile", Count: 2}}))
	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{{Resource: getMethod, ParamIdx: 0, Count: 1}}))
	conn := serve(t, &orders{}, protectedServer(e,
		bulwarkgrpc.WithOriginKey("X-Caller"), // metadata keys are lower case; the option folds it
		bulwarkgrpc.WithArgs(func(ctx context.Context, req any) []any {
			if m, ok := req.(*wrapperspb.StringValue); ok {
				return []any{m.Value}
			}
			return nil
		}),
	))
	as := func(caller, id string) (codes.Code, string) {
		ctx := metadata.AppendToOutgoingContext(t.Context(), "x-caller", caller)
		out := new(wrapperspb.StringValue)
		st := status.Convert(conn.Invoke(ctx, getMethod, wrapperspb.String(id), out))
		return st.Code(), st.Message()
	}

	code, msg := as("scraper", "1")
	assert.Equal(t, codes.PermissionDenied, code)
	assert.Equal(t, "bulwark: blocked (authority)", msg)

	code, _ = as("mobile", "1")
	assert.Equal(t, codes.OK, code)
	code, msg = as("web", "1")
	assert.Equal(t, codes.ResourceExhausted, code)
	assert.Equal(t, "bulwark: blocked (paramFlow)", msg)

	code, _ = as("mobile", "2")
	assert.Equal(t, codes.OK, code)
	code, msg = as("mobile", "3")
	assert.Equal(t, codes.ResourceExhausted, code)
	assert.Equal(t, "bulwark: blocked (flow)", msg, "mobile's two a second are used")
	code, _ = as("web", "4")
	assert.Equal(t, codes.OK, code, "the flow rule is mobile's only")

	clk.Advance(2 * time.Second)
	code, _ = as("web", "1")
	assert.Equal(t, codes.OK, code)
}

func TestClientInterceptorsBlockBeforeTheNetwork(t *testing.T) {
	e, clk := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: getMethod, Count: 1}}))
	require.NoError(t, e.Hotspot().Load([]hotspot.Rule{{Resource: uploadMethod, Count: 0}}))
	impl := &orders{}
	conn := serve(t, impl, nil,
		grpc.WithChainUnaryInterceptor(bulwarkgrpc.UnaryClientInterceptor(e)),
		grpc.WithChainStreamInterceptor(bulwarkgrpc.StreamClientInterceptor(e,
			bulwarkgrpc.WithArgs(func(ctx context.Context, req any) []any {
				assert.Nil(t, req, "a stream opens before its messages")
				return []any{"tenant-x"}
			}))),
	)

	assert.Equal(t, []codes.Code{codes.OK, codes.ResourceExhausted}, gets(t, conn, "1", "2"))
	err := conn.Invoke(t.Context(), getMethod, wrapperspb.String("3"), new(wrapperspb.StringValue))
	assert.ErrorIs(t, err, core.ErrBlocked, "a local block unwraps to the BlockError")
	var b *core.BlockError
	require.ErrorAs(t, err, &b)
	assert.Equal(t, core.BlockFlow, b.Kind)
	assert.EqualValues(t, 1, impl.calls.Load())

	_, err = conn.NewStream(t.Context(), &uploadDesc, uploadMethod)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Equal(t, "bulwark: blocked (paramFlow)", status.Convert(err).Message())

	clk.Advance(time.Second)
	assert.Equal(t, []codes.Code{codes.OK}, gets(t, conn, "4"))
}

func TestClientBreakerOpensOnServerFailures(t *testing.T) {
	e, clk := newEngine(t)
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: getMethod, Grade: circuitbreaker.ErrorRatio, Count: 0.5, TimeWindow: 5, MinRequestAmount: 3,
	}}))
	impl := &orders{}
	impl.fail.Store(uint32(codes.Unavailable))
	conn := serve(t, impl, nil, grpc.WithChainUnaryInterceptor(bulwarkgrpc.UnaryClientInterceptor(e)))

	assert.Equal(t, []codes.Code{codes.Unavailable, codes.Unavailable, codes.Unavailable, codes.Unavailable},
		gets(t, conn, "1", "2", "3", "4"))
	assert.EqualValues(t, 3, impl.calls.Load(), "the fourth call was refused locally")
	_, msg := get(t, conn, "5")
	assert.Equal(t, "bulwark: blocked (degrade)", msg)

	impl.fail.Store(uint32(codes.OK))
	clk.Advance(5 * time.Second)
	assert.Equal(t, []codes.Code{codes.OK, codes.OK}, gets(t, conn, "6", "7"))
}

// upload sends n messages on an Upload stream and returns the count the
// server answers.
func upload(s grpc.ClientStream, n int) (int64, error) {
	for range n {
		if err := s.SendMsg(wrapperspb.String("part")); err != nil {
			return 0, err
		}
	}
	if err := s.CloseSend(); err != nil {
		return 0, err
	}
	out := new(wrapperspb.Int64Value)
	err := s.RecvMsg(out)
	return out.Value, err
}

func TestAClientStreamHoldsItsEntryUntilItEnds(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.Flow().Load([]flow.Rule{{Resource: uploadMethod, Grade: flow.GradeThread, Count: 1}}))
	impl := &orders{}
	conn := serve(t, impl, nil, grpc.WithChainStreamInterceptor(bulwarkgrpc.StreamClientInterceptor(e)))

	first, err := conn.NewStream(t.Context(), &uploadDesc, uploadMethod)
	require.NoError(t, err)
	_, err = conn.NewStream(t.Context(), &uploadDesc, uploadMethod)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "the first stream holds the entry")

	n, err := upload(first, 3)
	require.NoError(t, err)
	assert.EqualValues(t, 3, n)
	// The one response ended the call, and its entry, synchronously.
	second, err := conn.NewStream(t.Context(), &uploadDesc, uploadMethod)
	require.NoError(t, err)

	_, err = upload(second, 1)
	require.NoError(t, err)

	// A stream abandoned by cancelling its context ends its entry too.
	ctx, cancel := context.WithCancel(t.Context())
	_, err = conn.NewStream(ctx, &uploadDesc, uploadMethod)
	require.NoError(t, err)
	cancel()
	require.Eventually(t, func() bool {
		s, err := conn.NewStream(t.Context(), &uploadDesc, uploadMethod)
		if err != nil {
			return false
		}
		_, err = upload(s, 1)
		assert.NoError(t, err)
		return true
	}, 10*time.Second, 5*time.Millisecond, "the cancelled stream's entry ended")
}

func TestClientStreamFailuresOpenTheBreaker(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.CircuitBreaker().Load([]circuitbreaker.Rule{{
		Resource: watchMethod, Grade: circuitbreaker.ErrorCount, Count: 1, TimeWindow: 10, MinRequestAmount: 1,
	}}))
	impl := &orders{}
	impl.fail.Store(uint32(codes.Internal))
	conn := serve(t, impl, nil, grpc.WithChainStreamInterceptor(bulwarkgrpc.StreamClientInterceptor(e)))
	for range 2 {
		_, err := watch(t.Context(), conn, "x")
		assert.Equal(t, codes.Internal, status.Code(err))
	}
	_, err := watch(t.Context(), conn, "x")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.True(t, errors.Is(err, core.ErrBlocked))
	assert.EqualValues(t, 2, impl.calls.Load())
}

// The README's table of blocked answers shows the code and the message a
// blocked call gets, for every kind.
func TestREADMEShowsTheBlockMessage(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, k := range []core.BlockKind{core.BlockFlow, core.BlockHotspot, core.BlockSystem, core.BlockCircuitBreaker, core.BlockAuthority} {
		st := status.Convert(bulwarkgrpc.Blocked(&core.BlockError{Kind: k, Resource: "/pkg.S/M"}))
		assert.Contains(t, string(readme), "| `"+st.Code().String()+"`, `"+st.Message()+"` |", k.String())
	}
}
