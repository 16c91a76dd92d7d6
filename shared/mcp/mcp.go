// Package mcp serves the knowledge tools over the Model Context Protocol (Streamable HTTP,
// stateless, JSON responses) with the official Go SDK: lookup_knowledge, ask_knowledge and
// knowledge_status, the same operations as POST /lookup, POST /ask and GET /status.
//
// The package knows no transport of its own and no route: the API authorises the request (actor,
// scope, correlation id) exactly as for its other routes and hands it to [Server.ServeMCP]. The
// tools call the domain services through the small interfaces declared here.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// Tool names, as clients list and call them, beside lookup.ToolLookup (lookup_knowledge, which
// the /lookup route records in its traces too).
const (
	ToolAsk    = "ask_knowledge"
	ToolStatus = "knowledge_status"
)

// Lookuper runs a validated lookup and records its trace: the lookup service, which composition
// wires in.
type Lookuper interface {
	Lookup(ctx context.Context, req lookup.LookupRequest) (lookup.Result, error)
}

// Asker answers a validated question from evidence and records its trace: the lookup service,
// which composition wires in.
type Asker interface {
	Ask(ctx context.Context, req lookup.AskRequest) (lookup.Answer, error)
}

// StatusReader reports the index status of one language (status.Service).
type StatusReader interface {
	Status(ctx context.Context, lang string, call port.Call) (domain.Status, error)
}

// Services are the operations behind the tools; a nil one leaves its tool out.
type Services struct {
	Lookup Lookuper
	Ask    Asker
	Status StatusReader
}

// Server is the MCP endpoint. It is safe for concurrent use.
type Server struct {
	svc     Services
	log     *slog.Logger
	version string

	// The SDK server and its handler are built on the first request, not at a cold start: the
	// tool schemas are inferred by reflection, and a function that serves no MCP call pays nothing.
	once    sync.Once
	handler http.Handler
}

// New builds the endpoint; version is the implementation version clients are told.
func New(s Services, version string, log *slog.Logger) *Server {
	return &Server{svc: s, log: log, version: version}
}

type callKey struct{}

// callFrom returns the authorised call ServeMCP was given.
func callFrom(ctx context.Context) (port.Call, bool) {
	c, ok := ctx.Value(callKey{}).(port.Call)
	return c, ok
}

// ServeMCP serves one HTTP request of the Streamable HTTP transport for an actor the caller has
// authorised; call carries that actor and the request's correlation id into every tool call.
// Being stateless, it answers GET and DELETE with 405 and Allow: POST, as the transport
// specification says for a server that offers no stream and no session, and a method that
// would need a stream (subscriptions/listen, resources/subscribe) with a JSON-RPC error at once.
// The caller checks the body first: one JSON-RPC message, no batch (api.Handler does).
func (s *Server) ServeMCP(w http.ResponseWriter, r *http.Request, call port.Call) {
	s.once.Do(s.build)
	if answerUnserved(w, r) {
		return
	}
	s.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callKey{}, call)))
}

func (s *Server) build() {
	// The SDK logs every stateless request's session at Info, with no correlation id: only its
	// warnings reach the log; the API logs each request itself. The SDK logs a client's protocol
	// mistakes (a second initialize, a method the negotiated version removed) at Error, but a
	// client's mistake is not the server's failure: the SDK's records are logged at Warn at most.
	// Failures of this service's own code are logged at Error by this package and the API.
	sdkLog := slog.New(levels{Handler: s.log.Handler(), min: slog.LevelWarn, max: slog.LevelWarn})
	srv := sdk.NewServer(&sdk.Implementation{Name: "mobilityops-knowledge", Title: "MobilityOps Knowledge", Version: s.version},
		&sdk.ServerOptions{Instructions: instructions, Logger: sdkLog,
			// Tools, and nothing a stateless server would have to send later: no list_changed
			// notifications (which clients subscribe to), no log messages.
			Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}}})
	srv.AddReceivingMiddleware(servedMethods)
	tools := []struct {
		on      bool
		tool    func() (*sdk.Tool, error)
		handler sdk.ToolHandler
	}{
		{s.svc.Lookup != nil, lookupTool, s.lookup},
		{s.svc.Ask != nil, askTool, s.ask},
		{s.svc.Status != nil, statusTool, s.status},
	}
	for _, t := range tools {
		if !t.on {
			continue
		}
		tool, err := t.tool()
		if err != nil {
			// Fixed at compile time, and every schema is inferred by a test: not expected here.
			s.log.Error("MCP tool schema", "tool", tool.Name, "error", err)
			s.handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "the MCP endpoint is not available", http.StatusInternalServerError)
			})
			return
		}
		srv.AddTool(tool, s.recovering(tool.Name, s.checkedArguments(t.handler)))
	}
	s.handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: sdkLog})
}

// levels drops records below min and logs those above max at max.
type levels struct {
	slog.Handler
	min, max slog.Level
}

func (h levels) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, min(l, h.max))
}

func (h levels) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > h.max {
		r = r.Clone()
		r.Level = h.max
	}
	return h.Handler.Handle(ctx, r)
}

func (h levels) WithAttrs(a []slog.Attr) slog.Handler {
	return levels{Handler: h.Handler.WithAttrs(a), min: h.min, max: h.max}
}

func (h levels) WithGroup(name string) slog.Handler {
	return levels{Handler: h.Handler.WithGroup(name), min: h.min, max: h.max}
}

// served are the methods a stateless server answers: the handshake (initialize, or
// server/discover in the protocol versions that replaced it), ping, and the tools. Notifications
// from the client need no answer and are taken as they come.
var served = map[string]bool{
	"initialize": true, "server/discover": true, "ping": true, "tools/list": true, "tools/call": true,
}

// errNotServed is the JSON-RPC error for a method the endpoint does not serve; the SDK names
// the method in its message ("method not found: \"subscriptions/listen\"").
var errNotServed = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}

// servedMethods answers every request for a method outside served with a JSON-RPC error at
// once: subscriptions/listen, resources/subscribe and the like would need a stream from server
// to client, which a stateless server (one POST, one JSON answer) cannot hold; the SDK would
// otherwise keep such a request open until its deadline.
func servedMethods(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if !served[method] && !strings.HasPrefix(method, "notifications/") {
			return nil, errNotServed
		}
		return next(ctx, method, req)
	}
}

// recovering turns a panic in a tool into an internal tool error, its details only in the log:
// the SDK runs tools outside the HTTP handler's own recovery.
func (s *Server) recovering(name string, h sdk.ToolHandler) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				call, _ := callFrom(ctx)
				s.log.ErrorContext(ctx, "panic in MCP tool", "tool", name, "correlation_id", call.CorrelationID,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = errorResult(errInternal, call.CorrelationID), nil
			}
		}()
		return h(ctx, req)
	}
}

// checkedArguments answers a call whose raw arguments the API found at fault before the SDK
// decoded them (request.ArgumentsError: a duplicate key, a string that is not text) with that
// error, as the HTTP route answers the same member of its body.
func (s *Server) checkedArguments(h sdk.ToolHandler) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if e := request.ArgumentsError(ctx); e != nil {
			return errorResult(fromRequest(e), s.call(ctx).CorrelationID), nil
		}
		return h(ctx, req)
	}
}

// errorBody is the API's error shape, which a tool error carries as its text.
type errorBody struct {
	Error         *toolError `json:"error"`
	CorrelationID string     `json:"correlation_id"`
}

// toolError is an error of the API's contract: the same code, message and field as the HTTP
// route would answer.
type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// errorResult is a tool error (isError): the model sees it and can correct its call; it is
// never a JSON-RPC or HTTP failure.
func errorResult(e *toolError, correlationID string) *sdk.CallToolResult {
	b, _ := marshal(errorBody{Error: e, CorrelationID: correlationID})
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

// result is a successful tool result: structured content, and text for clients that read only
// text.
func result(structured any, text string) (*sdk.CallToolResult, error) {
	b, err := marshal(structured)
	if err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(b), Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
}
