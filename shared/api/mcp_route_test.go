package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// stubMCP stands in for the MCP server: it records what reached it and answers a JSON-RPC result.
type stubMCP struct {
	mu      sync.Mutex
	body    []byte
	argErr  *request.Error
	reached int
}

func (s *stubMCP) ServeMCP(w http.ResponseWriter, r *http.Request, _ port.Call) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.body, s.argErr = b, request.ArgumentsError(r.Context())
	s.reached++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
}

func mcpHandler() (*api.Handler, *stubMCP) {
	s := &stubMCP{}
	return api.New(api.Services{MCP: s}, api.AuthJWT, slog.New(slog.NewTextHandler(io.Discard, nil))), s
}

var mcpHeaders = map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream"}

// mcpCall sends a POST /mcp through the Lambda handler.
func mcpCall(t *testing.T, h *api.Handler, body string, headers map[string]string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	resp, err := h.Lambda(t.Context(), event("POST", "/api/v1/knowledge/mcp", body, reader, headers))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func lookupCall(args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_knowledge","arguments":` + args + `}}`
}

// A fault in a tool call's arguments reaches the MCP server as the call's arguments error, named
// and worded as /lookup names and words the same member of its body; a fault anywhere else, a
// batch, or anything after the message is a 400 that never reaches it.
func TestMCPMessageChecks(t *testing.T) {
	h, stub := mcpHandler()
	routes, _ := newHandler(t, api.AuthJWT)
	for args, want := range map[string]request.Error{
		`{"question":"a","question":"b"}`:      {Code: "invalid_request", Field: "question", Message: `the key "question" occurs more than once`},
		`{"question":"a","x":{"y":1,"y":2}}`:   {Code: "invalid_request", Field: "x", Message: `the key "y" occurs more than once in an object of "x"`},
		`{"question":"a\ud800"}`:               {Code: "invalid_request", Field: "question", Message: `question must be text: it holds a lone UTF-16 surrogate (\ud800)`},
		"{\"question\":\"a\xff\"}":             {Code: "invalid_request", Field: "question", Message: "question must be text: it holds bytes that are not UTF-8"},
		`{"language":"\u0000","question":"a"}`: {Code: "invalid_request", Field: "language", Message: "language must be text: it holds a NUL character"},
	} {
		stub.reached = 0
		resp := mcpCall(t, h, lookupCall(args), mcpHeaders)
		if resp.StatusCode != 200 || stub.reached != 1 || stub.argErr == nil || *stub.argErr != want {
			t.Errorf("%s: %d, reached %d, arguments error %+v", args, resp.StatusCode, stub.reached, stub.argErr)
		}
		// /lookup says the same of the same body.
		resp, _ = call(t, routes, event("POST", "/api/v1/knowledge/lookup", args, reader, nil))
		var e errorBody
		json.Unmarshal([]byte(resp.Body), &e)
		if e.Error.Message != want.Message || e.Error.Field != want.Field {
			t.Errorf("%s: /lookup says %+v", args, e.Error)
		}
	}
	for name, body := range map[string]string{
		"batch":                 "[" + lookupCall(`{"question":"a"}`) + "]",
		"empty batch":           " []",
		"a string":              `"tools/call"`,
		"two messages":          lookupCall(`{"question":"a"}`) + lookupCall(`{"question":"b"}`),
		"garbage after":         lookupCall(`{"question":"a"}`) + "\n}",
		"duplicate method":      `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`,
		"arguments twice":       `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_knowledge","arguments":{"question":"a"},"arguments":{"question":"b"}}}`,
		"fault after arguments": strings.TrimSuffix(lookupCall(`{"question":"a\ud800"}`), "}}") + `,"name":"x"}}`,
		"not tools/call":        `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{"a":1,"a":1}}}`,
		"cut off":               lookupCall(`{"question":"a"}`)[:40],
	} {
		stub.reached = 0
		resp := mcpCall(t, h, body, mcpHeaders)
		var e errorBody
		json.Unmarshal([]byte(resp.Body), &e)
		if resp.StatusCode != 400 || e.Error.Code != "invalid_request" || stub.reached != 0 {
			t.Errorf("%s: %d %s, reached %d", name, resp.StatusCode, resp.Body, stub.reached)
		}
	}
	stub.reached = 0
	resp := mcpCall(t, h, lookupCall(`{"question":"a"}`), map[string]string{"content-type": "application/json; charset=utf-16"})
	if resp.StatusCode != 415 || stub.reached != 0 {
		t.Errorf("charset utf-16: %d %s", resp.StatusCode, resp.Body)
	}
}

// FuzzMCPMessage: any body gets a 4xx of the contract's shape or reaches the MCP server as one
// JSON-RPC object with nothing after it, whose only faults (a duplicate key, text that is not
// text) lie in a tools/call's arguments and come with it as the arguments error.
func FuzzMCPMessage(f *testing.F) {
	h, stub := mcpHandler()
	for _, s := range []string{lookupCall(`{"question":"a"}`), lookupCall(`{"question":"a","question":"b"}`),
		lookupCall(`{"question":"\ud800"}`), "[" + lookupCall(`{}`) + "]", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","params":{"arguments":{"a":1,"a":2}},"method":"tools/call"}`, `{"a":1}{"b":2}`, `{}`, `[]`, `1`,
		`{"params":{"arguments":[{"a":1,"a":2}]}}`, "{\"params\":{\"arguments\":{\"\xff\":1}},\"method\":\"tools/call\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		stub.reached, stub.argErr = 0, nil
		resp := mcpCall(t, h, body, mcpHeaders)
		if stub.reached == 0 {
			var e errorBody
			if resp.StatusCode < 400 || resp.StatusCode >= 500 || json.Unmarshal([]byte(resp.Body), &e) != nil || e.Error.Code == "" {
				t.Fatalf("%q: %d %s", body, resp.StatusCode, resp.Body)
			}
			return
		}
		trimmed := bytes.TrimSpace(stub.body)
		if !json.Valid(stub.body) || trimmed[0] != '{' {
			t.Fatalf("reached the server: %q", body)
		}
		if stub.argErr != nil {
			var m struct{ Method string }
			if json.Unmarshal(stub.body, &m); m.Method != "tools/call" || !strings.Contains(body, `"arguments"`) {
				t.Fatalf("an arguments error without arguments: %q", body)
			}
			return
		}
		if p := notText(body); p != "" {
			t.Fatalf("reached the server with %s: %q", p, body)
		}
		if duplicateKey(stub.body) {
			t.Fatalf("reached the server with a duplicate key: %q", body)
		}
	})
}
