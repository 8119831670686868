// Package bulwarkhttp protects a net/http service with a bulwark engine:
// [Middleware] admits every request through core.Engine.Enter as an
// inbound entry, answers the requests a rule blocks, and reports failed
// requests so that error-based circuit breakers open.
//
//	mux := http.NewServeMux()
//	mux.HandleFunc("GET /orders/{id}", getOrder)
//	http.ListenAndServe(addr, bulwarkhttp.Middleware(engine)(mux))
//
// # Resource names
//
// A request's resource is the ServeMux pattern it matches, as registered
// ("GET /orders/{id}"), so /orders/1 and /orders/2 are one resource and
// rules name routes, not URLs:
//
//   - Middleware wrapping a *http.ServeMux asks the mux, before the mux
//     routes the request, which pattern it will match (ServeMux.Handler),
//     then lets the mux serve it. A request the mux routes to no pattern
//     (its 404 and 405 answers) is not protected, so paths that scanners
//     try never become resources; a redirect the mux answers (a missing
//     trailing slash, an unclean path) counts under the pattern it
//     redirects to. Routing happens twice, which costs the mux's matching
//     time once more (and, for a pattern with wildcards, the slice of
//     matches it allocates). Only a mux the middleware wraps directly is
//     asked: wrap the mux, not a handler in front of it
//     (http.StripPrefix("/api", Middleware(e)(mux)), not the reverse).
//   - Middleware wrapping one handler registered in a mux
//     (mux.Handle(pattern, Middleware(e)(h))) reads r.Pattern.
//   - Without a pattern, the resource is the method and the path
//     ("GET /orders/1"): give other routers' route templates with
//     [WithResource], from a place where the router has routed. With
//     gorilla/mux, r.Use runs middleware after matching, and
//     mux.CurrentRoute(r).GetPathTemplate() names the route. With chi,
//     chi.RouteContext(r.Context()).RoutePattern() is complete once chi has
//     routed: add the middleware per route (r.With(mw).Get(...)), not with
//     r.Use on the root router, which runs before routing. gin has its own
//     handler type: in a gin middleware, enter the engine with c.FullPath()
//     (known before the handlers run) through core.Engine.Enter.
//
// Middleware wrapping a whole mux runs before the mux routes, so
// r.PathValue is empty in [WithOrigin] and [WithArgs]: to take hot
// parameters from path values, wrap each handler where it is registered.
//
// # Blocked requests
//
// A blocked request gets a one-line text body naming the kind of rule as
// a rule-set document names it, "bulwark: blocked (flow)" (flow, degrade,
// system, authority, paramFlow: see core.BlockKind), the status message
// package bulwarkgrpc sends, and:
//
//   - 429 Too Many Requests with Retry-After for flow and hot-parameter
//     (paramFlow) blocks (1 second, or the paramFlow rule's durationInSec);
//   - 503 Service Unavailable for circuit-breaker (degrade) and system blocks, with
//     Retry-After for a breaker (its timeWindow, the longest it stays
//     open);
//   - 403 Forbidden for authority blocks: the caller's origin is refused,
//     and retrying will not help.
//
// [WithBlockHandler] replaces this response. A request whose context ends
// while a pacing rule makes it wait gets a plain 503.
//
// # Errors and response times
//
// The entry covers the whole handler, so the response time of a streamed
// response includes the stream. A response status of 500 or more
// ([WithErrorStatus] changes which) and a panic count as failed calls: a
// panic is recorded, then keeps unwinding, untouched, to the server (no
// recover). A hijacked connection (a WebSocket) counts as a success when
// the handler returns.
//
// # The wrapped ResponseWriter
//
// The handler gets a ResponseWriter that records the status and offers
// exactly what the server's offers among http.Flusher, http.Hijacker and
// io.ReaderFrom, plus Unwrap for http.ResponseController: streaming,
// sendfile and WebSocket upgrades work through it. It is the one
// allocation the middleware adds to an admitted request.
package bulwarkhttp
