package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/mcp"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

const mcpPath = "/api/v1/knowledge/mcp"

// headerTransport sends every request with the given headers: the local actor headers, or a
// caller's correlation id.
type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.header {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

// lambdaTransport serves each request with the lookup function's Lambda handler: the request
// becomes an API Gateway HTTP API (2.0) event with the JWT authorizer's claims, the handler's
// event response becomes the HTTP response.
type lambdaTransport struct {
	t      *testing.T
	h      func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	claims map[string]string
}

func (lt lambdaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: r.Method + " " + r.URL.Path, RawPath: r.URL.Path,
		Headers: map[string]string{}, Body: string(body)}
	for k, v := range r.Header {
		ev.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	ev.RequestContext.Stage = "$default"
	ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = r.Method, r.URL.Path
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: lt.claims}}
	// Through the event's JSON, as the runtime delivers it.
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	var decoded events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil, err
	}
	resp, err := lt.h(r.Context(), decoded)
	if err != nil {
		lt.t.Errorf("the Lambda handler returned an error: %v", err)
		return nil, err
	}
	out := &http.Response{StatusCode: resp.StatusCode, Header: http.Header{}, Request: r,
		Body: io.NopCloser(strings.NewReader(resp.Body)), ContentLength: int64(len(resp.Body))}
	for k, v := range resp.Headers {
		out.Header.Set(k, v)
	}
	return out, nil
}

func connect(t *testing.T, endpoint string, hc *http.Client) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func structured[T any](t *testing.T, res *sdk.CallToolResult) T {
	t.Helper()
	var v T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

func toolError(t *testing.T, res *sdk.CallToolResult) (code, message, field string) {
	t.Helper()
	if !res.IsError || len(res.Content) != 1 {
		t.Fatalf("want one tool error, got isError=%v content=%d", res.IsError, len(res.Content))
	}
	var body struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &body); err != nil {
		t.Fatal(err)
	}
	return body.Error.Code, body.Error.Message, body.Error.Field
}

const (
	grounded     = "A customer found a deep scratch on the rear door before starting the trip. Does she need to upload photos of the damage?"
	insufficient = "What is the capital of France?"
	// clarified is covered by the procedures but not decided: its answer offers a clarification.
	clarified = "car just clicks when he tries to start it, pretty sure its the battery. who sorts that out"
)

// exerciseTools initialises, lists the tools and calls each one through cs; it returns the
// lookup's structured content for comparison with POST /lookup.
func exerciseTools(t *testing.T, a *App, cs *sdk.ClientSession, actor string) mcp.LookupOutput {
	t.Helper()
	ctx := context.Background()
	if got := cs.InitializeResult().ServerInfo.Name; got != "mobilityops-knowledge" {
		t.Errorf("server name %q", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema == nil || tl.InputSchema == nil || !strings.Contains(tl.Description, "general knowledge") && tl.Name != mcp.ToolStatus {
			t.Errorf("tool %s: schemas or description missing: %+v", tl.Name, tl)
		}
	}
	slices.Sort(names)
	if want := []string{mcp.ToolAsk, mcp.ToolStatus, lookup.ToolLookup}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	valid := outputValidator(t, tools.Tools)

	// as_of: a day echoed, and anything but an ISO date refused naming it, as POST /lookup does.
	for _, tool := range []string{lookup.ToolLookup, mcp.ToolAsk} {
		res := callTool(t, cs, tool, map[string]any{"question": grounded, "as_of": "2026-06-01"})
		valid(tool, res)
		if got := res.StructuredContent.(map[string]any)["as_of"]; res.IsError || got != "2026-06-01" {
			t.Errorf("%s as_of: isError %v, as_of %v", tool, res.IsError, got)
		}
		if code, _, field := toolError(t, callTool(t, cs, tool, map[string]any{"question": grounded, "as_of": "2026-02-30"})); code != "invalid_request" || field != "as_of" {
			t.Errorf("%s as_of 2026-02-30: %s %s", tool, code, field)
		}
	}

	res := callTool(t, cs, lookup.ToolLookup, map[string]any{"question": grounded, "language": "en", "top_k": 3})
	if res.IsError {
		t.Fatalf("lookup: %+v", res.Content)
	}
	valid(lookup.ToolLookup, res)
	look := structured[mcp.LookupOutput](t, res)
	if look.EvidenceState != port.StateGrounded || look.Primary == nil {
		t.Fatalf("lookup: state %s primary %+v", look.EvidenceState, look.Primary)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "evidence_state: grounded") ||
		!strings.Contains(text, look.Primary.Content) {
		t.Errorf("lookup text: %q", text)
	}
	tr, err := a.Service.Invocation(ctx, look.InvocationID, port.Actor{ID: actor})
	if err != nil || tr.Tool != lookup.ToolLookup || tr.ActorID != actor {
		t.Errorf("lookup trace: %+v, %v", tr, err)
	}

	res = callTool(t, cs, lookup.ToolLookup, map[string]any{"question": insufficient})
	valid(lookup.ToolLookup, res)
	if st := structured[mcp.LookupOutput](t, res).EvidenceState; res.IsError || st == port.StateGrounded {
		t.Errorf("out-of-domain lookup: isError %v, state %s", res.IsError, st)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "general knowledge") {
		t.Errorf("insufficient lookup text does not warn: %q", text)
	}

	res = callTool(t, cs, mcp.ToolAsk, map[string]any{"question": grounded, "language": "en"})
	valid(mcp.ToolAsk, res)
	valid(mcp.ToolAsk, callTool(t, cs, mcp.ToolAsk, map[string]any{"question": insufficient}))
	ans := structured[mcp.AskOutput](t, res)
	if res.IsError || ans.Answer.Answer == "" || len(ans.Sources) == 0 {
		t.Fatalf("ask: %+v", ans)
	}
	if tr, err := a.Service.Invocation(ctx, ans.InvocationID, port.Actor{ID: actor}); err != nil || tr.Tool != mcp.ToolAsk {
		t.Errorf("ask trace: %+v, %v", tr, err)
	}

	res = callTool(t, cs, mcp.ToolStatus, map[string]any{"language": "de"})
	valid(mcp.ToolStatus, res)
	if st := structured[mcp.StatusOutput](t, res); res.IsError || st.Language != "de" || st.SourceDocumentCount == 0 {
		t.Errorf("status: %+v", st)
	}

	for _, tc := range []struct {
		tool              string
		args              map[string]any
		code, field, text string
	}{
		{lookup.ToolLookup, map[string]any{}, "invalid_request", "question", "question is required and must not be blank"},
		{lookup.ToolLookup, map[string]any{"question": grounded, "top_k": 21}, "invalid_request", "top_k", "top_k must be an integer from 1 to 20"},
		{lookup.ToolLookup, map[string]any{"question": "a\x00b"}, "invalid_request", "question", "question must be text: it holds a NUL character"},
		{lookup.ToolLookup, map[string]any{"question": strings.Repeat("a", 2001)}, "invalid_request", "question", "question has 2001 characters; the limit is 2000"},
		{mcp.ToolAsk, map[string]any{"question": grounded, "language": "fr"}, "unsupported_language", "language", `language "fr" is not supported; supported languages: en, de`},
		{mcp.ToolStatus, map[string]any{"language": "xx"}, "unsupported_language", "language", `language "xx" is not supported; supported languages: en, de`},
		{lookup.ToolLookup, map[string]any{"question": 7}, "invalid_request", "question", `field "question" must be a JSON string`},
	} {
		code, msg, field := toolError(t, callTool(t, cs, tc.tool, tc.args))
		if code != tc.code || field != tc.field || msg != tc.text {
			t.Errorf("%s %v: got %s %q (%s), want %s %q (%s)", tc.tool, tc.args, code, msg, field, tc.code, tc.text, tc.field)
		}
	}
	return look
}

// outputValidator validates a tool result's structured content against the output schema the
// tool lists, with an independent validator: as published, and closed (no member the schema does
// not describe).
func outputValidator(t *testing.T, tools []*sdk.Tool) func(tool string, res *sdk.CallToolResult) {
	t.Helper()
	type pair struct{ published, closed func(any) error }
	schemas := map[string]pair{}
	for _, tl := range tools {
		schemas[tl.Name] = pair{testutil.JSONSchema(t, tl.OutputSchema, false), testutil.JSONSchema(t, tl.OutputSchema, true)}
	}
	return func(tool string, res *sdk.CallToolResult) {
		t.Helper()
		if res.IsError || res.StructuredContent == nil {
			t.Errorf("%s: no structured content: %+v", tool, res.Content)
			return
		}
		if err := schemas[tool].published(res.StructuredContent); err != nil {
			t.Errorf("%s: the structured content does not match the published output schema: %v", tool, err)
		}
		if err := schemas[tool].closed(res.StructuredContent); err != nil {
			t.Errorf("%s: the structured content holds a member its output schema does not describe: %v", tool, err)
		}
	}
}

// With RAGcore unreachable, every tool still returns structured content that its output schema
// accepts: a lookup and an ask that are unavailable, a status that could not verify.
func TestMCPUnavailableMatchesOutputSchemas(t *testing.T) {
	a := newApp(t, map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": "http://" + testutil.ClosedAddr(t),
		"RAGCORE_TOKEN": "t", "AUTH_MODE": "local-headers"})
	srv := httptest.NewServer(a.Handler.HTTP(5 * time.Second))
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: headerTransport{next: http.DefaultTransport, header: http.Header{
		"X-Actor-Id": {"agent-7"}, "X-Actor-Scope": {"knowledge:read"}}}}
	cs := connect(t, srv.URL+mcpPath, hc)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	valid := outputValidator(t, tools.Tools)
	res := callTool(t, cs, lookup.ToolLookup, map[string]any{"question": insufficient, "language": "en"})
	valid(lookup.ToolLookup, res)
	if st := structured[mcp.LookupOutput](t, res).EvidenceState; st != port.StateUnavailable {
		t.Errorf("lookup with RAGcore down: %s", st)
	}
	res = callTool(t, cs, mcp.ToolAsk, map[string]any{"question": grounded, "language": "en"})
	valid(mcp.ToolAsk, res)
	if st := structured[mcp.AskOutput](t, res).EvidenceState; st != port.StateUnavailable {
		t.Errorf("ask with RAGcore down: %s", st)
	}
	res = callTool(t, cs, mcp.ToolStatus, map[string]any{"language": "en"})
	valid(mcp.ToolStatus, res)
	if st := structured[mcp.StatusOutput](t, res); st.DocumentCount != nil {
		t.Errorf("status with RAGcore down: %+v", st)
	}
}

func TestMCPLocalHTTP(t *testing.T) {
	a := newApp(t, map[string]string{"AUTH_MODE": "local-headers"})
	srv := httptest.NewServer(a.Handler.HTTP(5 * time.Second))
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: headerTransport{next: http.DefaultTransport, header: http.Header{
		"X-Actor-Id": {"agent-7"}, "X-Actor-Scope": {"knowledge:read"}}}}
	cs := connect(t, srv.URL+mcpPath, hc)
	look := exerciseTools(t, a, cs, "agent-7")

	// The same evidence blocks as POST /lookup for the same question.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/knowledge/lookup",
		strings.NewReader(`{"question":"`+grounded+`","language":"en","top_k":3}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var http200 mcp.LookupOutput
	if err := json.NewDecoder(resp.Body).Decode(&http200); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(look.EvidenceBlocks)
	want, _ := json.Marshal(http200.EvidenceBlocks)
	if !bytes.Equal(got, want) {
		t.Errorf("MCP blocks differ from /lookup's:\n%s\n%s", got, want)
	}
}

func TestMCPLambda(t *testing.T) {
	a := newApp(t, map[string]string{})
	h := a.FunctionHandler(api.FunctionLookup)
	hc := &http.Client{Transport: lambdaTransport{t: t, h: h.Lambda,
		claims: map[string]string{"sub": "agent-9", "scope": "openid knowledge:read"}}}
	exerciseTools(t, a, connect(t, "https://api.example"+mcpPath, hc), "agent-9")
}

// Without the read scope the endpoint refuses before any tool runs: the client cannot
// initialise, and nothing is traced.
func TestMCPWithoutScope(t *testing.T) {
	a := newApp(t, map[string]string{"AUTH_MODE": "local-headers"})
	srv := httptest.NewServer(a.Handler.HTTP(5 * time.Second))
	t.Cleanup(srv.Close)
	for _, scope := range []string{"knowledge:sync", ""} {
		hc := &http.Client{Transport: headerTransport{next: http.DefaultTransport, header: http.Header{
			"X-Actor-Id": {"agent-8"}, "X-Actor-Scope": {scope}}}}
		c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
		_, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + mcpPath, HTTPClient: hc}, nil)
		if err == nil || !strings.Contains(err.Error(), "403") && !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("scope %q: initialize error %v, want 403", scope, err)
		}
		// A tools/call sent as is gets the contract's 403 and leaves no trace.
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_knowledge","arguments":{"question":"` + grounded + `"}}}`
		req, _ := http.NewRequest(http.MethodPost, srv.URL+mcpPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), `"code":"forbidden"`) ||
			resp.Header.Get("X-Correlation-Id") == "" {
			t.Errorf("scope %q: %d %s", scope, resp.StatusCode, b)
		}
	}
	if n := a.Service.TraceFailures(); n != 0 {
		t.Errorf("trace failures %d", n)
	}
}

// GET and DELETE: no stream is offered and there are no sessions, so both answer 405 with
// Allow: POST, in the contract's error shape; POST without the JSON content type is 415.
func TestMCPMethods(t *testing.T) {
	a := newApp(t, map[string]string{"AUTH_MODE": "local-headers"})
	for _, tc := range []struct {
		method, ctype string
		status        int
		code          string
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodDelete, "", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPost, "text/plain", http.StatusUnsupportedMediaType, "unsupported_media_type"},
	} {
		r := httptest.NewRequest(tc.method, mcpPath, strings.NewReader(`{}`))
		r.Header.Set("X-Actor-Id", "agent-7")
		r.Header.Set("X-Actor-Scope", "knowledge:read")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("X-Correlation-Id", "corr-1")
		if tc.ctype != "" {
			r.Header.Set("Content-Type", tc.ctype)
		}
		w := httptest.NewRecorder()
		a.Handler.HTTP(5*time.Second).ServeHTTP(w, r)
		var body struct {
			Error         struct{ Code string } `json:"error"`
			CorrelationID string                `json:"correlation_id"`
		}
		json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != tc.status || body.Error.Code != tc.code || body.CorrelationID != "corr-1" {
			t.Errorf("%s: %d %s", tc.method, w.Code, w.Body)
		}
		if tc.status == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q", tc.method, w.Header().Get("Allow"))
		}
		if strings.Contains(w.Body.String(), "Method Not Allowed") {
			t.Errorf("%s: the MCP SDK's own text reached the client: %s", tc.method, w.Body)
		}
	}
}

// Accept must admit both application/json and text/event-stream (the transport's rule, the SDK's
// check): a wildcard admits them (curl's default */*, application/*, text/*); an Accept that
// admits one of them, or none, is 400 in the contract's error shape. docs/mcp.md says so.
func TestMCPAccept(t *testing.T) {
	a := newApp(t, map[string]string{"AUTH_MODE": "local-headers"})
	for accept, status := range map[string]int{
		"application/json, text/event-stream": http.StatusOK,
		"*/*":                                 http.StatusOK,
		"application/*, text/*":               http.StatusOK,
		"application/json":                    http.StatusBadRequest,
		"text/event-stream":                   http.StatusBadRequest,
		"":                                    http.StatusBadRequest,
	} {
		r := httptest.NewRequest(http.MethodPost, mcpPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		r.Header.Set("X-Actor-Id", "agent-7")
		r.Header.Set("X-Actor-Scope", "knowledge:read")
		r.Header.Set("Content-Type", "application/json")
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		a.Handler.HTTP(5*time.Second).ServeHTTP(w, r)
		if w.Code != status {
			t.Errorf("Accept %q: %d %s, want %d", accept, w.Code, w.Body, status)
		}
		if status == http.StatusBadRequest && (!strings.Contains(w.Body.String(), `"code":"invalid_request"`) || strings.Contains(w.Body.String(), "Accept must contain")) {
			t.Errorf("Accept %q: %s, want the contract's error shape", accept, w.Body)
		}
	}
}

// A tool error carries the same code, message and field as the HTTP route answers for the same
// input, and a tool call is counted in the same metrics as the route.
func TestMCPErrorsAndMetricsMatchHTTP(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "eu-central-1")
	cfg, err := config.FromEnv(func(k string) string { return map[string]string{"AUTH_MODE": "local-headers"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	out := &testutil.SyncBuffer{}
	a, err := New(context.Background(), cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler.HTTP(5 * time.Second))
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: headerTransport{next: http.DefaultTransport, header: http.Header{
		"X-Actor-Id": {"agent-7"}, "X-Actor-Scope": {"knowledge:read"}}}}
	cs := connect(t, srv.URL+mcpPath, hc)
	for _, tc := range []struct{ tool, route, body string }{
		{lookup.ToolLookup, "/lookup", `{}`},
		{lookup.ToolLookup, "/lookup", `{"question":"   "}`},
		{lookup.ToolLookup, "/lookup", `{"question":"x","top_k":0}`},
		{lookup.ToolLookup, "/lookup", `{"question":"x","top_k":"3"}`},
		{lookup.ToolLookup, "/lookup", `{"question":"x","language":"it"}`},
		{lookup.ToolLookup, "/lookup", `{"question":"a\u0007b"}`},
		{lookup.ToolLookup, "/lookup", `{"question":"x","language":"e\u0000n"}`},
		{lookup.ToolLookup, "/lookup", `{"question":"` + strings.Repeat("ü", 2001) + `"}`},
		{mcp.ToolAsk, "/ask", `{"question":""}`},
		{mcp.ToolAsk, "/ask", `{"question":"x","language":"EN"}`},
		{mcp.ToolAsk, "/ask", `{"question":["x"]}`},
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.body), &args); err != nil {
			t.Fatal(err)
		}
		code, msg, field := toolError(t, callTool(t, cs, tc.tool, args))
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/knowledge"+tc.route, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&want)
		resp.Body.Close()
		if code != want.Error.Code || msg != want.Error.Message || field != want.Error.Field {
			t.Errorf("%s %s: MCP %s %q (%s), HTTP %s %q (%s)", tc.tool, tc.body, code, msg, field,
				want.Error.Code, want.Error.Message, want.Error.Field)
		}
	}

	before := strings.Count(out.String(), `"Lookups":1`)
	if res := callTool(t, cs, lookup.ToolLookup, map[string]any{"question": grounded}); res.IsError {
		t.Fatal(res.Content)
	}
	if got := strings.Count(out.String(), `"Lookups":1`); got != before+1 {
		t.Errorf("Lookups metric lines %d -> %d, want one more", before, got)
	}
	if !strings.Contains(out.String(), `"tool":"lookup_knowledge"`) {
		t.Error("no evidence metric with the tool dimension")
	}
}

// serve sends one request through the handler within a context of 10 s, as the local API or a
// Lambda invocation gives it, and returns the response and whether it came before the deadline.
// A handler that has not returned after a minute is reported as held open: the guard only keeps
// a broken build from hanging the test run.
func serve(t *testing.T, a *App, method, path, body string, header map[string]string) (response, bool) {
	t.Helper()
	h := map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream",
		"x-actor-id": "agent-7", "x-actor-scope": "knowledge:read", "x-correlation-id": "corr-raw"}
	for k, v := range header {
		if v == "" {
			delete(h, k)
			continue
		}
		h[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	for k, v := range h {
		r.Header.Set(k, v)
	}
	done := make(chan response, 1)
	go func() {
		w := httptest.NewRecorder()
		a.Handler.ServeHTTP(w, r)
		resp := response{Status: w.Code, Header: map[string]string{}, Body: w.Body.Bytes()}
		for k, v := range w.Header() {
			resp.Header[k] = strings.Join(v, ", ")
		}
		done <- resp
	}()
	select {
	case resp := <-done:
		return resp, ctx.Err() == nil
	case <-time.After(time.Minute):
		t.Fatalf("%s %s %q: the request is held open", method, path, body)
		return response{}, false
	}
}

// response is what the handler answered one request.
type response struct {
	Status int
	Header map[string]string
	Body   []byte
}

type apiError struct {
	Error         struct{ Code, Message, Field string } `json:"error"`
	CorrelationID string                                `json:"correlation_id"`
}

// rpcResult decodes the JSON-RPC response to a tools/call: its tool error, if it is one.
func rpcToolError(t *testing.T, b []byte) (apiError, bool) {
	t.Helper()
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	var e apiError
	if err := json.Unmarshal(b, &resp); err != nil || !resp.Result.IsError || len(resp.Result.Content) != 1 ||
		json.Unmarshal([]byte(resp.Result.Content[0].Text), &e) != nil {
		return e, false
	}
	return e, true
}

func toolCall(id int, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lookup_knowledge","arguments":%s}}`, id, args)
}

// /mcp refuses what POST /lookup refuses, with the same code, message and field: in a tool's
// arguments as the tool's own error (isError), which the model can correct; anywhere else in the
// message, and for what follows it, as a 400 of the contract's error shape. Nothing is looked up.
func TestMCPRefusesWhatLookupRefuses(t *testing.T) {
	out := &testutil.SyncBuffer{}
	a := newAppLog(t, map[string]string{"AUTH_MODE": "local-headers"}, out)
	lookupPath := "/api/v1/knowledge/lookup"

	// In the arguments: the tool error is /lookup's 400 for the same body.
	for name, args := range map[string]string{
		"duplicate key":         `{"question":"flat tyre","question":"ignore the first"}`,
		"duplicate key, nested": `{"question":"flat tyre","extra":{"a":1,"b":[{"c":1,"c":2}]}}`,
		"invalid UTF-8":         "{\"question\":\"flat \xff\xfe tyre\"}",
		"truncated UTF-8":       "{\"question\":\"flat tyre \xc3\"}",
		"lone surrogate":        `{"question":"flat \ud800 tyre"}`,
		"lone low surrogate":    `{"question":"flat \udc00 tyre"}`,
		"NUL":                   `{"question":"flat\u0000tyre"}`,
		"control character":     `{"question":"flat tyre","language":"e\u0007n"}`,
		"key not text":          `{"question":"flat tyre","\ud800":1}`,
	} {
		want, _ := serve(t, a, "POST", lookupPath, args, nil)
		var we apiError
		if err := json.Unmarshal(want.Body, &we); err != nil || want.Status != http.StatusBadRequest {
			t.Fatalf("%s: /lookup %d %s", name, want.Status, want.Body)
		}
		got, _ := serve(t, a, "POST", mcpPath, toolCall(1, args), nil)
		ge, ok := rpcToolError(t, got.Body)
		if got.Status != http.StatusOK || !ok || ge.Error != we.Error || ge.CorrelationID != "corr-raw" {
			t.Errorf("%s: /mcp %d %s, /lookup %s", name, got.Status, got.Body, want.Body)
		}
	}

	// The message itself, or what follows it: a 400, as /lookup answers the same fault.
	msg := toolCall(1, `{"question":"flat tyre"}`)
	for _, tc := range []struct {
		name, mcp, lookup string
		header            map[string]string
		status            int
		message, field    string
	}{
		{"trailing garbage", msg + ` x`, `{"question":"flat tyre"} x`, nil, 400, "the body must hold exactly one JSON object", ""},
		{"trailing bracket", msg + `]`, `{"question":"flat tyre"}]`, nil, 400, "the body must hold exactly one JSON object", ""},
		{"two messages", msg + toolCall(2, `{"question":"flat tyre"}`), `{"question":"flat tyre"}{"question":"again"}`, nil, 400, "the body must hold exactly one JSON object", ""},
		{"cut off", `{"jsonrpc":"2.0",`, `{"question":"flat tyre",`, nil, 400, "", ""},
		{"cut off in a string", `{"jsonrpc":"2.0","method":"tools/ca`, `{"question":"flat ty`, nil, 400, "", ""},
		{"not JSON", `{"question":2.0.1}`, `{"question":2.0.1}`, nil, 400, "", ""},
		{"empty", ` `, ` `, nil, 400, "a JSON request body is required", ""},
		{"charset utf-16", msg, `{"question":"flat tyre"}`, map[string]string{"content-type": "application/json; charset=utf-16"}, 415,
			"Content-Type must be application/json; a charset, when given, must be utf-8", ""},
		{"charset latin-1", msg, `{"question":"flat tyre"}`, map[string]string{"content-type": "application/json;charset=ISO-8859-1"}, 415,
			"Content-Type must be application/json; a charset, when given, must be utf-8", ""},
		{"not JSON content", msg, `{"question":"flat tyre"}`, map[string]string{"content-type": "text/plain"}, 415, "Content-Type must be application/json", ""},
		{"duplicate key in the message", strings.Replace(msg, `"id":1,`, `"id":1,"id":2,`, 1), `{"question":"flat tyre","question":"x"}`, nil, 400, `the key "id" occurs more than once`, "id"},
		{"tool name not text", strings.Replace(msg, `lookup_knowledge`, "lookup_\xffknowledge", 1), "{\"question\":\"a\xffb\"}", nil, 400, "params must be text: it holds bytes that are not UTF-8", "params"},
		{"deep", strings.Replace(msg, `"flat tyre"`, `"flat tyre","x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40), 1),
			`{"question":"flat tyre","x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, nil, 400, "the body nests deeper than 32 levels", "x"},
	} {
		got, _ := serve(t, a, "POST", mcpPath, tc.mcp, tc.header)
		want, _ := serve(t, a, "POST", lookupPath, tc.lookup, tc.header)
		var ge, we apiError
		json.Unmarshal(got.Body, &ge)
		json.Unmarshal(want.Body, &we)
		if got.Status != tc.status || want.Status != tc.status || ge.Error.Code != we.Error.Code || ge.CorrelationID != "corr-raw" ||
			tc.message != "" && (ge.Error.Message != tc.message || ge.Error.Field != tc.field) ||
			tc.field == "" && ge.Error.Message != we.Error.Message {
			t.Errorf("%s: /mcp %d %s, /lookup %d %s", tc.name, got.Status, got.Body, want.Status, want.Body)
		}
	}
	// A fault in the arguments of a method that takes none is the message's own.
	got, _ := serve(t, a, "POST", mcpPath, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{"a":1,"a":2}}}`, nil)
	if e := (apiError{}); json.Unmarshal(got.Body, &e) != nil || got.Status != 400 || e.Error.Field != "a" {
		t.Errorf("tools/list with arguments at fault: %d %s", got.Status, got.Body)
	}
	// A charset of UTF-8, in any case, is JSON's own.
	for _, ct := range []string{"application/json; charset=utf-8", "application/json; charset=UTF-8"} {
		got, _ := serve(t, a, "POST", mcpPath, msg, map[string]string{"content-type": ct})
		if _, isErr := rpcToolError(t, got.Body); got.Status != 200 || isErr || !strings.Contains(string(got.Body), `"structuredContent"`) {
			t.Errorf("%s: %d %s", ct, got.Status, got.Body)
		}
	}
	if n := strings.Count(out.String(), `"Lookups":1`); n != 2 {
		t.Errorf("%d lookups ran, want the two valid calls only", n)
	}
}

// A JSON-RPC batch gets a 400 in the contract's error shape whatever protocol version the client
// names, before any method runs: one POST cannot buy a lookup per element.
func TestMCPBatchesAreRefused(t *testing.T) {
	out := &testutil.SyncBuffer{}
	a := newAppLog(t, map[string]string{"AUTH_MODE": "local-headers"}, out)
	calls := make([]string, 60)
	for i := range calls {
		calls[i] = toolCall(i+1, `{"question":"flat tyre on the motorway"}`)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, body := range []string{"[" + strings.Join(calls, ",") + "]", "[" + calls[0] + "]", "[]", " \n[" + init + "," + init + "]"} {
		for _, version := range []string{"", "2025-03-26", "2025-06-18", "2025-11-25"} {
			resp, _ := serve(t, a, "POST", mcpPath, body, map[string]string{"mcp-protocol-version": version})
			var e apiError
			if err := json.Unmarshal(resp.Body, &e); err != nil || resp.Status != 400 || e.Error.Code != "invalid_request" ||
				!strings.Contains(e.Error.Message, "batch") || e.CorrelationID != "corr-raw" || resp.Header["X-Correlation-Id"] != "corr-raw" {
				t.Errorf("batch of %d bytes, version %q: %d %s", len(body), version, resp.Status, resp.Body)
			}
		}
	}
	if strings.Contains(out.String(), `"Lookups"`) || strings.Contains(out.String(), `"level":"ERROR"`) {
		t.Errorf("a batch ran, or was logged as an error:\n%s", out)
	}
}

// Methods a stateless server cannot serve answer a JSON-RPC error at once, before the request's
// deadline; GET, the server-to-client stream, is 405 at once. Initialize again and again writes
// no ERROR line.
func TestMCPAnswersAtOnce(t *testing.T) {
	out := &testutil.SyncBuffer{}
	a := newAppLog(t, map[string]string{"AUTH_MODE": "local-headers"}, out)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourcesListChanged":true}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///procedures"}}`,
	} {
		resp, inTime := serve(t, a, "POST", mcpPath, body, nil)
		if !inTime {
			t.Errorf("%s: held until the deadline", body)
		}
		if resp.Status != 200 || !strings.Contains(string(resp.Body), `"error":{"code":-32601`) || resp.Header["Connection"] != "" {
			t.Errorf("%s: %d %v %s", body, resp.Status, resp.Header, resp.Body)
		}
	}
	resp, inTime := serve(t, a, "GET", mcpPath, "", map[string]string{"accept": "text/event-stream", "content-type": ""})
	if !inTime || resp.Status != 405 || resp.Header["Allow"] != "POST" {
		t.Errorf("GET: %d %v %s", resp.Status, resp.Header, resp.Body)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for range 5 {
		if resp, _ := serve(t, a, "POST", mcpPath, init, nil); resp.Status != 200 {
			t.Fatalf("initialize: %d %s", resp.Status, resp.Body)
		}
	}
	if strings.Contains(out.String(), `"level":"ERROR"`) {
		t.Errorf("a client's call logged as an error:\n%s", out)
	}
}

// newAppLog is newApp with its logs and metrics written to out.
func newAppLog(t *testing.T, env map[string]string, out io.Writer) *App {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "eu-central-1")
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
