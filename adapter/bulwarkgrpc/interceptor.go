package bulwarkgrpc

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/bulwark-go/bulwark/core"
)

// Option configures the interceptors.
type Option func(*config)

type config struct {
	e         *core.Engine
	originKey string
	args      func(ctx context.Context, req any) []any
	errCodes  uint64 // bit c: codes.Code(c) counts as a failed call
}

// defaultErrorCodes are the codes that say the callee failed.
var defaultErrorCodes = []codes.Code{codes.Unknown, codes.DeadlineExceeded, codes.Internal, codes.Unavailable, codes.DataLoss}

// WithOriginKey names the incoming metadata key whose first value is the
// caller's origin (Sentinel's origin, matched by flow rules' limitApp and
// by authority rules), for example "x-caller". Server interceptors only:
// the client interceptors are the caller. "" means no origin, as without
// the option.
func WithOriginKey(key string) Option {
	return func(c *config) { c.originKey = strings.ToLower(key) }
}

// WithArgs gives the hot-parameter values of a call (core.WithArgs),
// matched by hot-parameter rules through their paramIdx, typically fields
// of the request message. req is the request message for unary calls; a
// stream's entry is taken when the stream opens, before any message, so
// stream interceptors pass a nil req (take values from ctx, its metadata).
func WithArgs(fn func(ctx context.Context, req any) []any) Option {
	return func(c *config) {
		if fn != nil {
			c.args = fn
		}
	}
}

// WithErrorCodes replaces the status codes that count as failed calls for
// error-based circuit breakers (by default Unknown, DeadlineExceeded,
// Internal, Unavailable and DataLoss: the callee failed). Given no codes,
// no code counts, and only panics do. OK never counts.
func WithErrorCodes(cs ...codes.Code) Option {
	return func(c *config) { c.errCodes = codeSet(cs) }
}

func codeSet(cs []codes.Code) uint64 {
	var set uint64
	for _, c := range cs {
		if c != codes.OK && c < 64 {
			set |= 1 << c
		}
	}
	return set
}

func newConfig(e *core.Engine, opts []Option) *config {
	if e == nil {
		e = core.Default()
	}
	c := &config{e: e, errCodes: codeSet(defaultErrorCodes)}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// options fills buf with the entry options of a call and returns them.
func (c *config) options(ctx context.Context, buf *[3]core.EntryOption, req any, inbound bool) []core.EntryOption {
	opts := buf[:0]
	if inbound {
		opts = append(opts, core.Inbound())
		if c.originKey != "" {
			if v := metadata.ValueFromIncomingContext(ctx, c.originKey); len(v) > 0 && v[0] != "" {
				opts = append(opts, core.WithOrigin(v[0]))
			}
		}
	}
	if c.args != nil {
		opts = append(opts, core.WithArgs(c.args(ctx, req)...))
	}
	return opts
}

// failed reports whether err's code counts as a failed call.
func (c *config) failed(err error) bool {
	if err == nil {
		return false
	}
	code := status.Code(err)
	if code == codes.Unknown {
		// A handler that returns its context's error, as the server
		// reports it: the caller gave up, the callee did not fail.
		switch {
		case errors.Is(err, context.Canceled):
			code = codes.Canceled
		case errors.Is(err, context.DeadlineExceeded):
			code = codes.DeadlineExceeded
		}
	}
	return code < 64 && c.errCodes&(1<<code) != 0
}

// errPanicked is what an entry records when the call panicked.
var errPanicked = errors.New("bulwarkgrpc: handler panicked")

// blocked turns Enter's error into the call's error: a status error with
// the code for the kind of block, which still unwraps to the
// *core.BlockError (errors.Is(err, core.ErrBlocked) on the client side).
func blocked(err error) error {
	b, ok := err.(*core.BlockError)
	if !ok {
		// The call's context ended while a pacing rule made it wait.
		return status.FromContextError(err).Err()
	}
	code := codes.ResourceExhausted // flow, paramFlow, system
	switch b.Kind {
	case core.BlockCircuitBreaker:
		code = codes.Unavailable
	case core.BlockAuthority:
		code = codes.PermissionDenied
	}
	return &blockError{st: status.New(code, "bulwark: blocked ("+b.Kind.String()+")"), b: b}
}

type blockError struct {
	st *status.Status
	b  *core.BlockError
}

func (e *blockError) Error() string              { return e.st.Err().Error() }
func (e *blockError) GRPCStatus() *status.Status { return e.st }
func (e *blockError) Unwrap() error              { return e.b }

// UnaryServerInterceptor admits each unary call through e as an inbound
// entry of its full method name ("/pkg.Service/Method"). A nil e means
// core.Default().
func UnaryServerInterceptor(e *core.Engine, opts ...Option) grpc.UnaryServerInterceptor {
	c := newConfig(e, opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		var buf [3]core.EntryOption
		en, err := c.e.Enter(ctx, info.FullMethod, c.options(ctx, &buf, req, true)...)
		if err != nil {
			return nil, blocked(err)
		}
		completed := false
		defer func() {
			if !completed { // a panic: recorded, and it unwinds on
				en.SetError(errPanicked)
				en.Exit()
			}
		}()
		resp, err := handler(ctx, req)
		completed = true
		if c.failed(err) {
			en.SetError(err)
		}
		en.Exit()
		return resp, err
	}
}

// StreamServerInterceptor admits each stream through e as an inbound
// entry of its full method name, held until the handler returns. A nil e
// means core.Default().
func StreamServerInterceptor(e *core.Engine, opts ...Option) grpc.StreamServerInterceptor {
	c := newConfig(e, opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		var buf [3]core.EntryOption
		en, err := c.e.Enter(ctx, info.FullMethod, c.options(ctx, &buf, nil, true)...)
		if err != nil {
			return blocked(err)
		}
		completed := false
		defer func() {
			if !completed {
				en.SetError(errPanicked)
				en.Exit()
			}
		}()
		err = handler(srv, ss)
		completed = true
		if c.failed(err) {
			en.SetError(err)
		}
		en.Exit()
		return err
	}
}

// UnaryClientInterceptor admits each outgoing unary call through e as an
// outbound entry of its full method name; a blocked call fails with the
// block's status without reaching the network. A nil e means
// core.Default().
func UnaryClientInterceptor(e *core.Engine, opts ...Option) grpc.UnaryClientInterceptor {
	c := newConfig(e, opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		var buf [3]core.EntryOption
		en, err := c.e.Enter(ctx, method, c.options(ctx, &buf, req, false)...)
		if err != nil {
			return blocked(err)
		}
		completed := false
		defer func() {
			if !completed {
				en.SetError(errPanicked)
				en.Exit()
			}
		}()
		err = invoker(ctx, method, req, reply, cc, callOpts...)
		completed = true
		if c.failed(err) {
			en.SetError(err)
		}
		en.Exit()
		return err
	}
}

// StreamClientInterceptor admits each outgoing stream through e as an
// outbound entry of its full method name. The entry ends when the stream
// does: RecvMsg returns io.EOF (a success) or an error, the single
// response of a stream without server streaming arrives, or the stream's
// context ends. A nil e means core.Default().
func StreamClientInterceptor(e *core.Engine, opts ...Option) grpc.StreamClientInterceptor {
	c := newConfig(e, opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		var buf [3]core.EntryOption
		en, err := c.e.Enter(ctx, method, c.options(ctx, &buf, nil, false)...)
		if err != nil {
			return nil, blocked(err)
		}
		cs, err := streamer(ctx, desc, cc, method, callOpts...)
		if err != nil {
			if c.failed(err) {
				en.SetError(err)
			}
			en.Exit()
			return nil, err
		}
		s := &clientStream{ClientStream: cs, c: c, en: en, serverStreams: desc.ServerStreams}
		// A caller that abandons the stream cancels ctx. (Not the
		// stream's own context: gRPC cancels that when the stream ends,
		// also when it fails, and the failure must be what is recorded.)
		s.stop = context.AfterFunc(ctx, func() { s.finish(ctx.Err()) })
		return s, nil
	}
}

// clientStream ends its entry once, when the stream ends.
type clientStream struct {
	grpc.ClientStream
	c             *config
	en            *core.Entry
	serverStreams bool
	stop          func() bool
	once          sync.Once
}

func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil || !s.serverStreams { // without server streaming, one response ends the call
		s.stop()
		if err == io.EOF {
			s.finish(nil)
		} else {
			s.finish(err)
		}
	}
	return err
}

// finish records the stream's outcome and ends the entry, once.
func (s *clientStream) finish(err error) {
	s.once.Do(func() {
		if s.c.failed(err) {
			s.en.SetError(err)
		}
		s.en.Exit()
	})
}
