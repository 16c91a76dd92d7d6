package api

import (
	"bytes"
	"cmp"
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

// Lambda serves an API Gateway HTTP API event (payload format 2.0): the event becomes an
// *http.Request once, here (EventRequest), the handler serves it like any other, and what it
// writes becomes the event's response.
func (h *Handler) Lambda(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	w := &recorder{header: http.Header{}}
	h.ServeHTTP(w, EventRequest(ctx, ev))
	resp := events.APIGatewayV2HTTPResponse{StatusCode: cmp.Or(w.status, http.StatusOK), Body: w.body.String(),
		Headers: make(map[string]string, len(w.header))}
	for k, v := range w.header {
		resp.Headers[k] = strings.Join(v, ", ")
	}
	return resp, nil
}

// EventRequest is the one conversion of an API Gateway HTTP API event to the *http.Request the
// handler serves: the raw path without a named stage's prefix, the raw query string as sent (the
// routes parse it strictly), the headers, the body (base64-decoded when the gateway encoded it;
// served as given when it does not decode, for the JSON checks to refuse), and in the context
// the JWT authorizer's claims (the actor's only source deployed) and what the Lambda runtime
// told of the invocation (invocation).
func EventRequest(ctx context.Context, ev events.APIGatewayV2HTTPRequest) *http.Request {
	raw := cmp.Or(ev.RawPath, ev.RequestContext.HTTP.Path)
	// A named stage prefixes the raw path ("/prod/api/..."); the $default stage does not.
	if st := ev.RequestContext.Stage; st != "" && st != "$default" {
		raw = strings.TrimPrefix(raw, "/"+st)
	}
	// The raw path is the path the routes match, as sent: an escaped character is not decoded
	// into the one it stands for ("st%61tus" is no route, "a%2Fb" one segment).
	u := &url.URL{Path: raw, RawQuery: ev.RawQueryString}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(ev.Body); err == nil {
			body = b
		}
	}
	if a := ev.RequestContext.Authorizer; a != nil && a.JWT != nil && a.JWT.Claims != nil {
		ctx = context.WithValue(ctx, authorizerKey{}, &authorizer{Claims: a.JWT.Claims, Scopes: a.JWT.Scopes})
	}
	ctx = context.WithValue(ctx, invocationKey{}, invocationIn(ctx))
	r := (&http.Request{Method: ev.RequestContext.HTTP.Method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header, len(ev.Headers)), Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		Host: ev.Headers["host"], RemoteAddr: ev.RequestContext.HTTP.SourceIP, RequestURI: u.RequestURI()}).WithContext(ctx)
	for k, v := range ev.Headers {
		r.Header.Set(k, v)
	}
	return r
}

// invocation is what the Lambda runtime tells of the invocation an event came with, read from
// its context once, here: the request id, and the invocation's X-Ray trace header (deployed,
// the parent of the request's own header, which is the gateway's). Zero for a request the local
// server received.
type invocation struct {
	requestID, traceHeader string
}

type invocationKey struct{}

// invocationIn reads the invocation from the context aws-lambda-go gives the handler: the
// request id in its lambdacontext, the trace header under the plain string key
// "x-amzn-trace-id".
func invocationIn(ctx context.Context) invocation {
	var inv invocation
	inv.traceHeader, _ = ctx.Value("x-amzn-trace-id").(string)
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		inv.requestID = lc.AwsRequestID
	}
	return inv
}

// invocationOf returns the invocation EventRequest put in ctx (zero for the local server).
func invocationOf(ctx context.Context) invocation {
	inv, _ := ctx.Value(invocationKey{}).(invocation)
	return inv
}

// authorizer is what API Gateway's JWT authorizer hands the function: the token's claims and,
// when it lists them, its scopes. A route the gateway serves without its authorizer has none,
// whatever token the request holds.
type authorizer struct {
	Claims map[string]string
	Scopes []string
}

type authorizerKey struct{}

// authorizerOf returns the authorizer EventRequest put in ctx, or nil (the local API, a public
// route).
func authorizerOf(ctx context.Context) *authorizer {
	a, _ := ctx.Value(authorizerKey{}).(*authorizer)
	return a
}

// recorder is the http.ResponseWriter an event's response is written into. The body is a
// strings.Builder sized by the first write (the whole JSON answer, usually): the event's body is
// a string, made without another copy.
type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Len() == 0 {
		w.body.Grow(len(b))
	}
	return w.body.Write(b)
}

// Flush does nothing: the whole response is returned at once.
func (w *recorder) Flush() {}

// HTTP is the handler for the local API: each request bounded by requestTimeout, its body given
// requestTimeout to arrive. A body that could not be read whole (cut off, client gone, too slow)
// is not served: the request gets 400 invalid_request, if the client is still there to read it.
func (h *Handler) HTTP(requestTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		// The body must arrive within requestTimeout whatever server runs the handler, unless the
		// server's own read timeout is shorter: a deadline set here would replace it.
		srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
		if srv == nil || srv.ReadTimeout <= 0 || srv.ReadTimeout > requestTimeout {
			err := http.NewResponseController(w).SetReadDeadline(start.Add(requestTimeout))
			if err != nil && !errors.Is(err, http.ErrNotSupported) {
				h.log.DebugContext(ctx, "set body read deadline", "error", err)
			}
		}
		// The routes match the path as net/http decoded it ("a%2Fb" is two segments).
		r = r.WithContext(ctx)
		u := *r.URL
		u.RawPath = ""
		r.URL = &u
		h.ServeHTTP(w, r)
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
			ctx, end := h.span(ctx, "schedule", invocationIn(ctx).traceHeader)
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
