package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Lambda adapts the handler to API Gateway HTTP API events (payload format 2.0).
func (h *Handler) Lambda(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	req := Request{
		Method: ev.RequestContext.HTTP.Method,
		Path:   ev.RawPath,
		Header: make(map[string]string, len(ev.Headers)),
	}
	if req.Path == "" {
		req.Path = ev.RequestContext.HTTP.Path
	}
	// A named stage prefixes the raw path ("/prod/api/..."); the $default stage does not.
	if st := ev.RequestContext.Stage; st != "" && st != "$default" {
		req.Path = strings.TrimPrefix(req.Path, "/"+st)
	}
	for k, v := range ev.Headers {
		req.Header[strings.ToLower(k)] = v
	}
	if a := ev.RequestContext.Authorizer; a != nil && a.JWT != nil {
		req.Claims, req.AuthorizerScopes = a.JWT.Claims, a.JWT.Scopes
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		req.RequestID = lc.AwsRequestID
	}
	// aws-lambda-go puts the invocation's X-Ray trace header under this plain string key.
	if v, ok := ctx.Value("x-amzn-trace-id").(string); ok {
		req.TraceID = v
	}
	req.Query, _ = url.ParseQuery(ev.RawQueryString) // a malformed pair is dropped, as net/http does
	req.RawQuery = ev.RawQueryString
	if ev.IsBase64Encoded {
		body, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			req.Body = []byte(ev.Body) // served as given: the JSON checks reject it
		} else {
			req.Body = body
		}
	} else {
		req.Body = []byte(ev.Body)
	}
	resp := h.Serve(ctx, req)
	return events.APIGatewayV2HTTPResponse{StatusCode: resp.Status, Headers: resp.Header, Body: string(resp.Body)}, nil
}

// HTTP adapts the handler to net/http, for the local API. It reads at most MaxBody+1 bytes of a
// body, so that an oversized body is refused without being read whole, and gives the body
// requestTimeout to arrive. A body that could not be read whole (cut off, client gone, too slow)
// is not served: the request gets 400 invalid_request, if the client is still there to read it.
func (h *Handler) HTTP(requestTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		req := Request{Method: r.Method, Path: r.URL.Path, Header: map[string]string{}, Query: r.URL.Query(), RawQuery: r.URL.RawQuery}
		for k, v := range r.Header {
			req.Header[strings.ToLower(k)] = strings.Join(v, ",")
		}
		req.Header["host"] = r.Host // net/http keeps it apart; the MCP server checks it
		// The body must arrive within requestTimeout whatever server runs the handler, unless the
		// server's own read timeout is shorter: a deadline set here would replace it.
		srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
		if srv == nil || srv.ReadTimeout <= 0 || srv.ReadTimeout > requestTimeout {
			err := http.NewResponseController(w).SetReadDeadline(start.Add(requestTimeout))
			if err != nil && !errors.Is(err, http.ErrNotSupported) {
				h.log.DebugContext(ctx, "set body read deadline", "error", err)
			}
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		if err != nil {
			req.BodyErr = err
		}
		req.Body = body
		resp := h.Serve(ctx, req)
		for k, v := range resp.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.Status)
		if _, err := w.Write(resp.Body); err != nil {
			h.log.DebugContext(ctx, "write response", "error", err)
		}
	})
}

// ScheduleFunc runs the work of a scheduled event; its result is the invocation's result.
type ScheduleFunc func(ctx context.Context, eventID string) (any, error)

// LambdaWithSchedule adapts the handler to a function that receives both API Gateway HTTP API
// events and EventBridge scheduled events: the latter go to onSchedule. Anything else is refused
// with an error, which the runtime reports, since no HTTP client waits for it.
func (h *Handler) LambdaWithSchedule(onSchedule ScheduleFunc) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var probe struct {
			Version    string `json:"version"`
			Source     string `json:"source"`
			DetailType string `json:"detail-type"`
			ID         string `json:"id"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, errors.New("event is not a JSON object")
		}
		switch {
		case probe.Source == "aws.events" && probe.DetailType == "Scheduled Event":
			header, _ := ctx.Value("x-amzn-trace-id").(string)
			ctx, end := h.span(ctx, "schedule", header)
			defer end()
			return onSchedule(ctx, probe.ID)
		case probe.Version == "2.0":
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, errors.New("API Gateway event does not decode")
			}
			return h.Lambda(ctx, ev)
		}
		h.log.ErrorContext(ctx, "unknown event", "source", probe.Source, "detail_type", probe.DetailType)
		return nil, errors.New("unknown event: expected an API Gateway HTTP API (2.0) or EventBridge scheduled event")
	}
}
