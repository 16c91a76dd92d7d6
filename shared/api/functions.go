package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
)

// Function names a Lambda function of the API. Which function serves a route is said once, in
// the route tables (lookupRoutes in routes.go, statusRoutes in status_routes.go, syncRoutes in
// sync_routes.go): the functions' mains build their handlers from it (NewFunction), the local
// app serves every function's routes, and the template test compares template.yaml's events
// with it.
type Function string

// The Lambda functions of the API.
const (
	FunctionLookup Function = "lookup" // POST /lookup, POST /ask, GET /invocations/{invocation_id}, /mcp
	FunctionStatus Function = "status" // GET /status, GET /health
	FunctionSync   Function = "sync"   // POST /sync, POST /sync-reports, the schedule
)

// Scheduled reports whether the EventBridge schedule invokes f (Handler.Entry then takes the
// schedule's events too).
func (f Function) Scheduled() bool { return f == FunctionSync }

// Route is a declared route as the deployment template writes it.
type Route struct {
	Function Function
	Method   string
	// Path is the full path, under BasePath, its parameter named ("{invocation_id}").
	Path string
	// Scopes admit an actor, any one of them.
	Scopes []string
	// Public routes also answer a request without credentials (GET /health, the uptime probe):
	// the only routes the gateway may let through without a token.
	Public bool
}

// Routes lists the declared routes of the functions given (every function's when none is).
func Routes(functions ...Function) []Route {
	var out []Route
	for _, r := range routeTable {
		if len(functions) == 0 || slices.Contains(functions, r.function) {
			out = append(out, r.declared())
		}
	}
	return out
}

// route is one row of a route table: the function that serves it, its ServeMux pattern relative
// to BasePath ("POST /lookup"), the scopes that admit an actor (any one of them), whether it
// also serves a request without credentials (with the zero actor: the route answers it what
// anyone may know), the service it needs, and what serves it.
type route struct {
	function Function
	pattern  string
	scopes   []string
	public   bool
	needs    func(Services) bool
	serve    func(h *Handler, w http.ResponseWriter, c *call)
}

// routeTable is every route of the API, function by function.
var routeTable = slices.Concat(lookupRoutes, statusRoutes, syncRoutes)

// method and path split the route's pattern; path is under BasePath.
func (r *route) method() string { m, _, _ := strings.Cut(r.pattern, " "); return m }
func (r *route) path() string   { _, p, _ := strings.Cut(r.pattern, " "); return BasePath + p }

func (r *route) declared() Route {
	return Route{Function: r.function, Method: r.method(), Path: r.path(), Scopes: slices.Clone(r.scopes), Public: r.public}
}

// The services the routes need.
func lookupService(s Services) bool { return s.Lookup != nil }
func mcpService(s Services) bool    { return s.MCP != nil }
func statusService(s Services) bool { return s.Status != nil }
func syncService(s Services) bool   { return s.Sync != nil }

// jsonRoute serves a route whose answer is a JSON body (or an error of the contract's shape).
func jsonRoute(f func(h *Handler, ctx context.Context, c *call) (any, *Error)) func(*Handler, http.ResponseWriter, *call) {
	return func(h *Handler, w http.ResponseWriter, c *call) {
		out, err := f(h, c.r.Context(), c)
		if err != nil {
			h.fail(w, c, err)
			return
		}
		h.writeJSON(w, c, c.status, out)
	}
}
