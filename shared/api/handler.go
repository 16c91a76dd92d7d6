// Package api is the HTTP surface of the API (docs/openapi.yaml): a Handler is an http.Handler
// whose routes are ServeMux method patterns ("POST /lookup"), declared once per Lambda function
// in the route tables. The local API serves it directly; in Lambda, an API Gateway HTTP API event
// (payload 2.0) is converted to an *http.Request once, at the edge (edge.go). Both run the same
// code.
package api

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// BasePath is the base path of every route.
const BasePath = "/api/v1/knowledge"

// MaxBody is the largest request body accepted (64 KiB).
const MaxBody = 64 << 10

// Scopes of the API contract (docs/openapi.yaml).
const (
	ScopeRead       = "knowledge:read"
	ScopeSync       = "knowledge:sync"
	ScopeSyncReport = "knowledge:sync:report"
	ScopeAdmin      = "knowledge:admin"
)

// AuthMode says where the actor comes from.
type AuthMode string

// Auth modes: JWT authorizer claims when deployed, X-Actor-* headers locally.
const (
	AuthJWT          AuthMode = "jwt"
	AuthLocalHeaders AuthMode = "local-headers"
)

// Handler serves the routes of docs/openapi.yaml: an http.Handler whose routes are ServeMux
// method patterns. The local API serves it directly (HTTP adds the request deadline); a Lambda
// function serves it through Lambda, which converts the API Gateway event once (edge.go).
type Handler struct {
	svc    Lookup
	status Status
	sync   Sync
	auth   AuthMode
	log    *slog.Logger
	now    func() time.Time
	warm   atomic.Bool // false until the first request: cold_start in the request log

	mux       *http.ServeMux
	routes    map[string]*route // by pattern, as the mux names it
	served    map[string]bool   // the patterns this handler serves; the others answer 404
	mcpServer MCPServer         // POST, GET and DELETE /mcp; nil where the function serves no MCP
	tracer    Tracer            // nil: no spans

	function Function     // "" for every function's routes (the local API)
	schedule ScheduleFunc // the schedule's work, for a scheduled function
}

// Tracer opens the span of one invocation, continuing the caller's trace from an X-Amzn-Trace-Id
// header when there is one; end closes it and flushes the invocation's spans (tracing.Tracer).
type Tracer interface {
	Invocation(ctx context.Context, name, header string) (_ context.Context, end func())
}

// WithTracer makes every request and scheduled event a span of t's, named "handler" and
// "schedule"; it returns h.
func (h *Handler) WithTracer(t Tracer) *Handler {
	h.tracer = t
	return h
}

// span opens the span of one invocation when h has a tracer.
func (h *Handler) span(ctx context.Context, name, header string) (context.Context, func()) {
	if h.tracer == nil {
		return ctx, func() {}
	}
	return h.tracer.Invocation(ctx, name, header)
}

// call is one request in flight.
type call struct {
	r             *http.Request
	body          []byte // read whole before the route runs, at most MaxBody+1 bytes
	correlationID string
	actor         port.Actor
	log           *slog.Logger
	allow         []string // methods the path takes, when the request's method is not one
	status        int      // success status, 200 unless set
}

type callKey struct{}

// New builds the handler of every function whose services are given (the local API, tests).
// Every route of docs/openapi.yaml is known, so that a wrong method gets its 405 with the right
// Allow header whichever function receives it; only the routes of the services given are
// served, the others answer 404.
func New(s Services, auth AuthMode, log *slog.Logger) *Handler {
	return NewFunction("", s, auth, log)
}

// NewFunction builds the handler of one Lambda function: the routes the route tables give it
// ("" for every function's), served by the services given.
func NewFunction(f Function, s Services, auth AuthMode, log *slog.Logger) *Handler {
	h := &Handler{svc: s.Lookup, status: s.Status, sync: s.Sync, mcpServer: s.MCP, auth: auth, log: log, now: time.Now,
		function: f, schedule: s.Schedule,
		mux: http.NewServeMux(), routes: map[string]*route{}, served: map[string]bool{}}
	for _, r := range routeTable {
		pattern := r.method() + " " + r.path()
		h.routes[pattern] = r
		serve := r.needs(s) && (f == "" || f == r.function)
		if f == r.function && !serve {
			// A main that does not wire what its routes need: the route answers 404.
			log.Error("a route of the function has no service", "function", f, "route", pattern)
		}
		h.served[pattern] = serve
		h.mux.Handle(pattern, h.handle(r, serve))
	}
	if f.Scheduled() && s.Schedule == nil {
		log.Error("a scheduled function has no schedule's work: its scheduled events fail", "function", f)
	}
	return h
}

// Entry is the handler's Lambda entry point, for lambda.Start: API Gateway's events (Lambda), and
// for a function the schedule invokes (Function.Scheduled) the schedule's events as well
// (LambdaWithSchedule, running Services.Schedule).
func (h *Handler) Entry() any {
	if !h.function.Scheduled() {
		return h.Lambda
	}
	work := h.schedule
	if work == nil {
		work = func(context.Context, string) (any, error) { return nil, errors.New("no scheduled work") }
	}
	return h.LambdaWithSchedule(work)
}

// handle serves one route: it authorises the call (a public route without credentials serves
// the zero actor), then runs the route. A route this handler does not serve answers 404.
func (h *Handler) handle(r *route, serve bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c := req.Context().Value(callKey{}).(*call)
		c.r = req
		if !serve {
			h.fail(w, c, &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no such route here"})
			return
		}
		if !r.public || h.credentials(c) {
			if err := h.authorize(c, r.scopes); err != nil {
				h.fail(w, c, err)
				return
			}
		}
		r.serve(h, w, c)
	})
}

// Routes lists the handler's routes as "METHOD /path" under BasePath, path parameters written
// "{}", for checks against the deployment template and the OpenAPI document.
func (h *Handler) Routes() []string {
	var out []string
	for _, r := range routeTable {
		if h.served[r.method()+" "+r.path()] {
			out = append(out, r.method()+" "+anonymous(r.path()))
		}
	}
	return out
}

// PublicRoutes lists the served routes, written as Routes writes them, that also answer a
// request without credentials: the only routes the gateway may let through without a token.
func (h *Handler) PublicRoutes() []string {
	var out []string
	for _, r := range routeTable {
		if h.served[r.method()+" "+r.path()] && r.public {
			out = append(out, r.method()+" "+anonymous(r.path()))
		}
	}
	return out
}

// RouteScopes maps each served route, written as Routes writes it, to the scopes that admit an
// actor (any one of them), for checks against the gateway's route scopes.
func (h *Handler) RouteScopes() map[string][]string {
	out := map[string][]string{}
	for _, r := range routeTable {
		if h.served[r.method()+" "+r.path()] {
			out[r.method()+" "+anonymous(r.path())] = slices.Clone(r.scopes)
		}
	}
	return out
}

// anonymous writes a path's parameters "{}".
func anonymous(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// correlationPattern is the alphabet of a caller's correlation id; validCorrelationID adds the
// length limit. A bounded repetition ({1,64}) would compile to 64 copies of the class, a
// tenth of a millisecond of every cold start.
var correlationPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// validCorrelationID reports whether id matches ^[A-Za-z0-9._-]{1,64}$.
func validCorrelationID(id string) bool { return len(id) <= 64 && correlationPattern.MatchString(id) }

// header is a request header's values joined by commas, as API Gateway hands them on.
func header(r *http.Request, name string) string { return strings.Join(r.Header.Values(name), ",") }

// ServeHTTP handles one request. Every failure is a response in the contract's error shape, and
// panics become 500s with the details only in the log. The body is read whole first (at most
// MaxBody+1 bytes): a body that was not received whole is never served.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := h.now()
	// The invocation's trace header first: deployed, the request's own is the gateway's, the
	// parent of the invocation's.
	inv := invocationOf(r.Context())
	ctx, end := h.span(r.Context(), "handler", cmp.Or(inv.traceHeader, header(r, "X-Amzn-Trace-Id")))
	defer end() // last: after the request's log line, before the response leaves
	c := &call{r: r, correlationID: header(r, "X-Correlation-Id"), status: http.StatusOK}
	if !validCorrelationID(c.correlationID) {
		c.correlationID = rand.Text()
	}
	c.log = h.log.With("correlation_id", c.correlationID, "request_id", inv.requestID,
		"xray_trace_id", inv.traceHeader, "cold_start", !h.warm.Swap(true))
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			c.log.ErrorContext(ctx, "panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if sw.status == 0 {
				h.writeError(sw, c, errInternal)
			}
		}
		c.log.InfoContext(ctx, "request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"actor_id", c.actor.ID, "duration_ms", float64(h.now().Sub(start).Microseconds())/1000)
	}()
	var body []byte
	var err error
	if r.Body != nil { // a server's request always has one; a hand-made one may not
		body, err = io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	}
	if err != nil {
		c.log.WarnContext(ctx, "request body not received whole", "error", err)
		h.fail(sw, c, invalid("", "the request body was not received whole (cut off, or too slow); send it again"))
		return
	}
	c.body = body
	c.r = r.WithContext(context.WithValue(ctx, callKey{}, c))
	h.dispatch(sw, c)
}

// dispatch hands the request to the route the ServeMux matches. What the mux would answer
// itself is answered in the contract's shape instead: an unknown path is a 404, a known path with
// another method a 405 with Allow (or, for OPTIONS, the path's methods), and a path that is not
// clean ("//x", "/x/../y") is a 404, never a redirect to its clean form.
func (h *Handler) dispatch(w http.ResponseWriter, c *call) {
	r := c.r
	if !strings.HasPrefix(r.URL.Path, BasePath) {
		h.fail(w, c, &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no such route; routes are under " + BasePath})
		return
	}
	if p := r.URL.EscapedPath(); cleanPath(p) == p {
		if _, pattern := h.mux.Handler(r); h.routes[pattern] != nil && h.routes[pattern].method() == r.Method {
			h.mux.ServeHTTP(w, r)
			return
		}
		c.allow = h.allowed(r)
	}
	switch {
	case len(c.allow) > 0 && r.Method == http.MethodOptions:
		// OPTIONS (a preflight carries no token) on the local API: the methods of the path,
		// nothing else. Deployed, no route takes OPTIONS: the gateway answers preflights itself
		// when CORS is configured, and refuses OPTIONS with its own 404 otherwise.
		c.allow = append(c.allow, http.MethodOptions)
		h.writeJSON(w, c, http.StatusOK, optionsResponse{Allow: c.allow, CorrelationID: c.correlationID})
	case len(c.allow) > 0:
		h.fail(w, c, &Error{Status: http.StatusMethodNotAllowed, Code: request.CodeMethodNotAllowed,
			Message: "method " + r.Method + " is not allowed here; use " + strings.Join(c.allow, ", ")})
	default:
		h.fail(w, c, &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no such route"})
	}
}

// allowed lists the methods whose routes the mux matches r's path to, in the order of the route
// tables. The mux's own list would add HEAD wherever GET is (it serves HEAD as GET); the
// contract's routes take no HEAD.
func (h *Handler) allowed(r *http.Request) []string {
	var allow []string
	probe := *r
	for _, rt := range routeTable {
		m := rt.method()
		if slices.Contains(allow, m) {
			continue
		}
		probe.Method = m
		if _, pattern := h.mux.Handler(&probe); h.routes[pattern] != nil && h.routes[pattern].method() == m {
			allow = append(allow, m)
		}
	}
	return allow
}

// cleanPath is the path ServeMux would redirect p to (net/http's cleanPath): p when p is clean.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// optionsResponse answers OPTIONS on a known path.
type optionsResponse struct {
	Allow         []string `json:"allow"`
	CorrelationID string   `json:"correlation_id"`
}

// actorPattern is the alphabet of an actor id (see validCorrelationID).
var actorPattern = regexp.MustCompile(`^[A-Za-z0-9@._:|+-]+$`)

// validActorID reports whether id matches ^[A-Za-z0-9@._:|+-]{1,128}$.
func validActorID(id string) bool { return len(id) <= 128 && actorPattern.MatchString(id) }

// credentials reports whether the request carries an actor to check: the JWT authorizer's claims
// (deployed; a route the gateway serves without its authorizer has none, whatever token the
// request holds), or the local actor headers.
func (h *Handler) credentials(c *call) bool {
	if h.auth == AuthLocalHeaders {
		return strings.TrimSpace(header(c.r, "X-Actor-Id")) != "" || strings.TrimSpace(header(c.r, "X-Actor-Scope")) != ""
	}
	return authorizerOf(c.r.Context()) != nil
}

// authorize resolves the actor from the transport's authentication, never from the body, and
// checks that it holds one of the route's scopes.
func (h *Handler) authorize(c *call, scopes []string) *Error {
	var id string
	var held []string
	switch h.auth {
	case AuthLocalHeaders:
		id, held = header(c.r, "X-Actor-Id"), strings.Fields(header(c.r, "X-Actor-Scope"))
	default:
		if a := authorizerOf(c.r.Context()); a != nil {
			id, held = a.Claims["sub"], claimScopes(a.Claims, a.Scopes)
		}
	}
	id = strings.TrimSpace(id)
	if !validActorID(id) {
		msg := "authentication required"
		if h.auth == AuthLocalHeaders {
			msg = "authentication required: send X-Actor-Id and X-Actor-Scope"
		}
		return &Error{Status: http.StatusUnauthorized, Code: request.CodeUnauthorized, Message: msg}
	}
	c.actor = port.Actor{ID: id, Scopes: held}
	for _, s := range scopes {
		if c.actor.HasScope(s) {
			return nil
		}
	}
	return &Error{Status: http.StatusForbidden, Code: request.CodeForbidden,
		Message: "this call needs the scope " + strings.Join(scopes, " or ")}
}
