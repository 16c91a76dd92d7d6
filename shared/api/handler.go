// Package api is the HTTP surface of the API (docs/openapi.yaml), independent of transport: a Handler serves a
// Request and returns a Response, and thin adapters connect it to API Gateway HTTP API events
// (payload 2.0) in Lambda and to net/http for the local API. Both run the same code.
package api

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
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

// Request is a transport-neutral HTTP request.
type Request struct {
	Method string
	// Path is the path after any stage prefix, e.g. "/api/v1/knowledge/lookup".
	Path string
	// Header holds request headers with lower-case names.
	Header map[string]string
	// Query holds the query string parameters.
	Query url.Values
	// RawQuery is the query string as received, without the "?": a route that refuses what it
	// does not define reads it, as Query drops malformed pairs.
	RawQuery string
	Body     []byte
	// BodyErr is set by a transport that could not read the body whole (cut off, client gone,
	// read timeout): such a request is refused, never served from the part that arrived.
	BodyErr error
	// Claims are the JWT authorizer's claims (deployed); nil when there is no authorizer.
	Claims map[string]string
	// AuthorizerScopes are the scopes the JWT authorizer lists beside the claims, when it does.
	AuthorizerScopes []string
	// RequestID is the platform's request id (Lambda), for logs.
	RequestID string
	// TraceID is the X-Ray trace header of the invocation (Lambda), for logs.
	TraceID string
}

// Response is a transport-neutral HTTP response.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
}

// Handler serves the routes of docs/openapi.yaml.
type Handler struct {
	svc    Lookup
	status Status
	sync   Sync
	auth   AuthMode
	log    *slog.Logger
	routes []route
	now    func() time.Time
	warm   atomic.Bool // false until the first request: cold_start in the request log

	mcpServer MCPServer // POST, GET and DELETE /mcp; nil where the function serves no MCP
	tracer    Tracer    // nil: no spans
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

type route struct {
	method string
	path   string   // relative to BasePath; a trailing "/{}" matches one path segment
	scopes []string // any one of them admits the actor
	serve  func(ctx context.Context, c *call) (any, *Error)
}

// publicRoutes, "METHOD /path" relative to BasePath, also serve a request without credentials,
// with the zero actor: the route answers it what anyone may know (GET /health, the uptime
// probe: the status alone). Credentials, when a request has them, are checked as anywhere.
var publicRoutes = map[string]bool{http.MethodGet + " /health": true}

func (r route) public() bool { return publicRoutes[r.method+" "+r.path] }

// call is one request in flight.
type call struct {
	req           Request
	correlationID string
	actor         port.Actor
	param         string   // the {} segment of the route
	allow         []string // methods the path takes, when the request's method is not one
	status        int      // success status, 200 unless set
}

// New builds the handler. Every route of docs/openapi.yaml is known, so that a wrong method gets its 405
// with the right Allow header whichever function receives it; only the routes of the services
// given are served, the others answer 404.
func New(s Services, auth AuthMode, log *slog.Logger) *Handler {
	h := &Handler{svc: s.Lookup, status: s.Status, sync: s.Sync, mcpServer: s.MCP, auth: auth, log: log, now: time.Now}
	when := func(on bool, f func(context.Context, *call) (any, *Error)) func(context.Context, *call) (any, *Error) {
		if on {
			return f
		}
		return nil
	}
	h.routes = []route{
		{http.MethodPost, "/lookup", []string{ScopeRead}, when(s.Lookup != nil, h.lookup)},
		{http.MethodPost, "/ask", []string{ScopeRead}, when(s.Lookup != nil, h.ask)},
		// Own invocations need knowledge:read; knowledge:admin reads any (the service checks which).
		{http.MethodGet, "/invocations/{}", []string{ScopeRead, ScopeAdmin}, when(s.Lookup != nil, h.invocation)},
		{http.MethodGet, "/status", []string{ScopeRead}, when(s.Status != nil, h.getStatus)},
		// Public (publicRoutes): without credentials, the status alone.
		{http.MethodGet, "/health", []string{ScopeRead}, when(s.Status != nil, h.health)},
		{http.MethodPost, "/sync", []string{ScopeSync}, when(s.Sync != nil, h.postSync)},
		{http.MethodPost, "/sync-reports", []string{ScopeSyncReport}, when(s.Sync != nil, h.postSyncReport)},
		// The MCP server answers GET and DELETE itself (405, stateless), after the same authorisation.
		{http.MethodPost, "/mcp", []string{ScopeRead}, when(s.MCP != nil, h.mcp)},
		{http.MethodGet, "/mcp", []string{ScopeRead}, when(s.MCP != nil, h.mcp)},
		{http.MethodDelete, "/mcp", []string{ScopeRead}, when(s.MCP != nil, h.mcp)},
	}
	return h
}

// Routes lists the handler's routes as "METHOD /path" under BasePath, path parameters written
// "{}", for checks against the deployment template.
func (h *Handler) Routes() []string {
	out := make([]string, 0, len(h.routes))
	for _, r := range h.routes {
		if r.serve != nil {
			out = append(out, r.method+" "+BasePath+r.path)
		}
	}
	return out
}

// PublicRoutes lists the served routes, written as Routes writes them, that also answer a
// request without credentials: the only routes the gateway may let through without a token.
func (h *Handler) PublicRoutes() []string {
	var out []string
	for _, r := range h.routes {
		if r.serve != nil && r.public() {
			out = append(out, r.method+" "+BasePath+r.path)
		}
	}
	return out
}

// RouteScopes maps each served route, written as Routes writes it, to the scopes that admit an
// actor (any one of them), for checks against the gateway's route scopes.
func (h *Handler) RouteScopes() map[string][]string {
	out := make(map[string][]string, len(h.routes))
	for _, r := range h.routes {
		if r.serve != nil {
			out[r.method+" "+BasePath+r.path] = slices.Clone(r.scopes)
		}
	}
	return out
}

// correlationPattern is the alphabet of a caller's correlation id; validCorrelationID adds the
// length limit. A bounded repetition ({1,64}) would compile to 64 copies of the class, a
// tenth of a millisecond of every cold start.
var correlationPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// validCorrelationID reports whether id matches ^[A-Za-z0-9._-]{1,64}$.
func validCorrelationID(id string) bool { return len(id) <= 64 && correlationPattern.MatchString(id) }

// Serve handles one request. It never returns a Go error: every failure is a response in the
// contract's error shape, and panics become 500s with the details only in the log.
func (h *Handler) Serve(ctx context.Context, req Request) (resp Response) {
	start := h.now()
	// Lambda's trace header first: deployed, the request's own is the gateway's, the parent of
	// the invocation's.
	ctx, end := h.span(ctx, "handler", cmp.Or(req.TraceID, req.Header["x-amzn-trace-id"]))
	defer end() // last: after the request's log line, before the response leaves
	c := &call{req: req, correlationID: req.Header["x-correlation-id"], status: http.StatusOK}
	if !validCorrelationID(c.correlationID) {
		c.correlationID = rand.Text()
	}
	log := h.log.With("correlation_id", c.correlationID, "request_id", req.RequestID,
		"xray_trace_id", req.TraceID, "cold_start", !h.warm.Swap(true))
	defer func() {
		if p := recover(); p != nil {
			log.ErrorContext(ctx, "panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp = h.errorResponse(c, errInternal)
		}
		log.InfoContext(ctx, "request", "method", req.Method, "path", req.Path, "status", resp.Status,
			"actor_id", c.actor.ID, "duration_ms", float64(h.now().Sub(start).Microseconds())/1000)
	}()
	var out any
	var apiErr *Error
	if req.BodyErr != nil {
		log.WarnContext(ctx, "request body not received whole", "error", req.BodyErr)
		apiErr = invalid("", "the request body was not received whole (cut off, or too slow); send it again")
	} else {
		out, apiErr = h.dispatch(ctx, c)
	}
	if apiErr != nil {
		if apiErr.Status >= 500 {
			log.ErrorContext(ctx, "request failed", "code", apiErr.Code)
		}
		return h.errorResponse(c, apiErr)
	}
	if r, ok := out.(Response); ok { // the MCP server's own response
		r.Header["X-Correlation-Id"], r.Header["Cache-Control"] = c.correlationID, "no-store"
		return r
	}
	resp = h.jsonResponse(c, c.status, out)
	if _, ok := out.(optionsResponse); ok {
		resp.Header["Allow"] = strings.Join(c.allow, ", ")
	}
	return resp
}

func (h *Handler) dispatch(ctx context.Context, c *call) (any, *Error) {
	rel, ok := strings.CutPrefix(c.req.Path, BasePath)
	if !ok {
		return nil, &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no such route; routes are under " + BasePath}
	}
	for _, r := range h.routes {
		param, ok := match(r.path, rel)
		if !ok {
			continue
		}
		if r.method != c.req.Method {
			c.allow = append(c.allow, r.method)
			continue
		}
		if r.serve == nil {
			return nil, &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no such route here"}
		}
		c.param = param
		if r.public() && !h.credentials(c) {
			return r.serve(ctx, c)
		}
		if err := h.authorize(c, r.scopes); err != nil {
			return nil, err
		}
		return r.serve(ctx, c)
	}
	if len(c.allow) > 0 && c.req.Method == http.MethodOptions {
		// OPTIONS (a preflight carries no token) on the local API: the methods of the path,
		// nothing else. Deployed, no route takes OPTIONS: the gateway answers preflights itself
		// when CORS is configured, and refuses OPTIONS with its own 404 otherwise.
		c.allow = append(c.allow, http.MethodOptions)
		return optionsResponse{Allow: c.allow, CorrelationID: c.correlationID}, nil
	}
	if len(c.allow) > 0 {
		return nil, &Error{Status: http.StatusMethodNotAllowed, Code: request.CodeMethodNotAllowed,
			Message: "method " + c.req.Method + " is not allowed here; use " + strings.Join(c.allow, ", ")}
	}
	return nil, &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no such route"}
}

// optionsResponse answers OPTIONS on a known path.
type optionsResponse struct {
	Allow         []string `json:"allow"`
	CorrelationID string   `json:"correlation_id"`
}

// match matches a route pattern against a path relative to BasePath.
func match(pattern, rel string) (string, bool) {
	prefix, ok := strings.CutSuffix(pattern, "{}")
	if !ok {
		return "", rel == pattern
	}
	param, ok := strings.CutPrefix(rel, prefix)
	if !ok || param == "" || strings.Contains(param, "/") {
		return "", false
	}
	return param, true
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
		return strings.TrimSpace(c.req.Header["x-actor-id"]) != "" || strings.TrimSpace(c.req.Header["x-actor-scope"]) != ""
	}
	return c.req.Claims != nil
}

// authorize resolves the actor from the transport's authentication, never from the body, and
// checks that it holds one of the route's scopes.
func (h *Handler) authorize(c *call, scopes []string) *Error {
	var id string
	var held []string
	switch h.auth {
	case AuthLocalHeaders:
		id, held = c.req.Header["x-actor-id"], strings.Fields(c.req.Header["x-actor-scope"])
	default:
		id, held = c.req.Claims["sub"], claimScopes(c.req.Claims, c.req.AuthorizerScopes)
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
