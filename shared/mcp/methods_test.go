package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// post sends one raw POST to the endpoint within ctx and returns the recorded response once
// ServeMCP has returned. A handler that has not returned after a minute is reported as held
// open: the guard only keeps a broken build from hanging the test run.
func post(t *testing.T, ctx context.Context, srv *Server, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeMCP(w, r, port.Call{Actor: port.Actor{ID: "agent-1"}, CorrelationID: "corr-1"})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s: the request is held open", body)
	}
	return w
}

// rpcError decodes a JSON-RPC error response, sent as JSON or as the one event of an SSE stream;
// ok is false for anything else.
func rpcError(b []byte) (code int, msg string, ok bool) {
	if _, data, sse := strings.Cut(string(b), "\ndata: "); sse {
		b = []byte(data)
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Error == nil || resp.JSONRPC != "2.0" || string(resp.ID) != "1" {
		return 0, "", false
	}
	return resp.Error.Code, resp.Error.Message, true
}

// A method a stateless server cannot serve (a subscription, anything that needs a stream from
// server to client) gets a JSON-RPC error at once: the handler returns well within the request's
// deadline instead of holding the request until it. The tools still answer, and a client's
// notification is still taken (202).
func TestUnservedMethodsAnswerAtOnce(t *testing.T) {
	t.Parallel()
	srv := New(Services{Lookup: &services{}, Ask: &services{}, Status: &services{}}, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name, body string
		header     map[string]string
	}{
		{"listen", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}}}`, nil},
		{"listen, 2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}},
		{"listen without params", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}`, nil},
		{"listen with null params", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":null}`, nil},
		{"listen with empty params", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`, nil},
		{"listen without params, 2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}},
		{"resources/subscribe without params", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe"}`, nil},
		{"resources/subscribe", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///x"}}`, nil},
		{"resources/list", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, nil},
		{"logging/setLevel", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`, nil},
		{"prompts/list", `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`, nil},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		w := post(t, ctx, srv, tc.body, tc.header)
		answeredInTime := ctx.Err() == nil
		cancel()
		if !answeredInTime {
			t.Errorf("%s: the request was held until its deadline", tc.name)
		}
		code, msg, ok := rpcError(w.Body.Bytes())
		method := strings.SplitN(strings.SplitN(tc.body, `"method":"`, 2)[1], `"`, 2)[0]
		// 2026-07-28 answers an unknown method with 404, the versions before it with 200.
		if w.Code != http.StatusOK && w.Code != http.StatusNotFound || !ok || code != -32601 || !strings.Contains(msg, method) {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Body)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := post(t, ctx, srv, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if _, _, isErr := rpcError(w.Body.Bytes()); w.Code != http.StatusOK || isErr || !strings.Contains(w.Body.String(), lookup.ToolLookup) {
		t.Errorf("tools/list: %d %s", w.Code, w.Body)
	}
	w = post(t, ctx, srv, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if strings.Contains(w.Body.String(), "listChanged") || strings.Contains(w.Body.String(), `"logging"`) || !strings.Contains(w.Body.String(), `"tools":{}`) {
		t.Errorf("initialize announces what a stateless server cannot send: %s", w.Body)
	}
	w = post(t, ctx, srv, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	if w.Code != http.StatusAccepted {
		t.Errorf("notification: %d %s", w.Code, w.Body)
	}
}

// A client's protocol mistakes (initialize again and again, initialize in a protocol version
// that removed it, twice in one batch) are answered, and never written to the log as errors: an
// ERROR line is a failure of the service.
func TestClientMistakesAreNotErrors(t *testing.T) {
	t.Parallel()
	out := &testutil.SyncBuffer{}
	srv := New(Services{Lookup: &services{}}, "test", slog.New(slog.NewJSONHandler(out, nil)))
	params := `"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}`
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize",` + params + `}}`
	for range 3 {
		if w := post(t, context.Background(), srv, init, nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"serverInfo"`) {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
	}
	meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	w := post(t, context.Background(), srv, `{"jsonrpc":"2.0","id":1,"method":"initialize",`+params+meta+`}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "initialize"})
	if _, _, ok := rpcError(w.Body.Bytes()); !ok {
		t.Errorf("initialize in 2026-07-28: %d %s", w.Code, w.Body)
	}
	// The API refuses batches before they reach the server; the server still logs none as an error.
	w = post(t, context.Background(), srv, `[`+init+`,`+strings.Replace(init, `"id":1`, `"id":2`, 1)+`]`, nil)
	if !strings.Contains(w.Body.String(), `duplicate`) {
		t.Errorf("initialize twice in a batch: %d %s", w.Code, w.Body)
	}
	if strings.Contains(out.String(), `"level":"ERROR"`) {
		t.Errorf("a client's mistake logged as an error:\n%s", out)
	}
	if n := strings.Count(out.String(), `"level":"WARN"`); n != 2 {
		t.Errorf("%d warnings, want the SDK's report of each of the two mistakes it reports:\n%s", n, out)
	}
}
