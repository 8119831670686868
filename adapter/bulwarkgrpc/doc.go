// Package bulwarkgrpc protects gRPC servers and the calls a client makes
// with a bulwark engine: interceptors that admit every call through
// core.Engine.Enter, fail the calls a rule blocks with a status code that
// says why, and report failed calls so that error-based circuit breakers
// open.
//
//	srv := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(bulwarkgrpc.UnaryServerInterceptor(engine)),
//		grpc.ChainStreamInterceptor(bulwarkgrpc.StreamServerInterceptor(engine)),
//	)
//	conn, err := grpc.NewClient(target, creds,
//		grpc.WithChainUnaryInterceptor(bulwarkgrpc.UnaryClientInterceptor(engine)),
//		grpc.WithChainStreamInterceptor(bulwarkgrpc.StreamClientInterceptor(engine)),
//	)
//
// # Resources and entries
//
// A call's resource is its full method name, "/pkg.Service/Method", the
// same on both sides. Server interceptors take inbound entries (system
// rules apply to them), client interceptors outbound ones. A unary entry
// covers the handler (or, on a client, the whole call); a stream's covers
// the stream: on a server until the handler returns, on a client until
// RecvMsg returns io.EOF or an error, the one response of a call without
// server streaming arrives, or the context given to the call ends, which
// is how gRPC itself knows that a stream is over.
//
// [WithOriginKey] reads the caller's origin from incoming metadata (server
// side; it costs the one allocation of the metadata lookup), and
// [WithArgs] gives hot-parameter values, typically from the request
// message.
//
// # Blocked calls
//
// A blocked call fails without running the handler (or, on a client,
// without reaching the network) with "bulwark: blocked (<kind>)", the
// kind named as a rule-set document names it (flow, degrade, system,
// authority, paramFlow: see core.BlockKind), and:
//
//   - codes.ResourceExhausted for flow, hot-parameter (paramFlow) and system blocks;
//   - codes.Unavailable for an open circuit breaker (degrade);
//   - codes.PermissionDenied for authority blocks: the caller's origin is
//     refused, and retrying will not help.
//
// On the client side the error also unwraps to the *core.BlockError, so
// errors.Is(err, core.ErrBlocked) tells a local block from a failure of the
// server. A call whose context ends while a pacing rule makes it wait
// fails with Canceled or DeadlineExceeded.
//
// # Errors
//
// A call that ends with a code meaning that the callee failed counts as a
// failed call: Unknown, DeadlineExceeded, Internal, Unavailable and
// DataLoss, changed with [WithErrorCodes]. Application answers such as
// NotFound, InvalidArgument or PermissionDenied do not count; neither
// does a handler that returns its context's error after the caller
// cancelled (Canceled). A panic counts as well: it is recorded and keeps
// unwinding, untouched (the interceptors never recover; put a recovery
// interceptor outside them if the server needs one).
package bulwarkgrpc
