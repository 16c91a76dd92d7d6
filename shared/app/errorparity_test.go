package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/mcp"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// failing stands for the lookup and status services: every call fails with err, wrapped as the
// services wrap it.
type failing struct {
	// Embedded, so that an operation added to api.Lookup or api.Status needs no change here.
	//lint:ignore U1000 embedded for its methods, which an operation added to the interface brings along
	lookupService
	//lint:ignore U1000 embedded for its methods, which an operation added to the interface brings along
	statusService
	err error
}

// The services' interfaces under names that are not their methods', for failing to embed.
type (
	lookupService = api.Lookup
	statusService = api.Status
)

func (f failing) wrapped() error { return fmt.Errorf("failing service: %w", f.err) }

func (f failing) Lookup(context.Context, lookup.LookupRequest) (lookup.Result, error) {
	return lookup.Result{}, f.wrapped()
}

func (f failing) Ask(context.Context, lookup.AskRequest) (lookup.Answer, error) {
	return lookup.Answer{}, f.wrapped()
}

func (f failing) Invocation(context.Context, string, port.Actor) (lookup.Trace, error) {
	return lookup.Trace{}, f.wrapped()
}

func (f failing) Status(context.Context, string, port.Call) (domain.Status, error) {
	return domain.Status{}, f.wrapped()
}

func (f failing) CheckHealth(context.Context, port.Call) domain.Health { return domain.Health{} }

// TestErrorClassesMatchAcrossAdapters: every class of error (validation, not found, unavailable,
// internal, and the scope check in front of both) reaches a caller of an HTTP route and a caller
// of the matching MCP tool with the same code, message and field; HTTP adds its status, MCP its
// tool error. An internal error's text reaches neither, nor the log.
func TestErrorClassesMatchAcrossAdapters(t *testing.T) {
	// An HTTP client's failure names the URL, which could carry a token, and the internal host.
	secret := &url.Error{Op: "Post", URL: "https://ragcore.internal.example/v1/retrieve?token=s3cr3t",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}
	pairs := []struct{ tool, method, path, body, args string }{
		{lookup.ToolLookup, http.MethodPost, "/lookup", `{"question":"flat tyre","language":"en"}`, `{"question":"flat tyre","language":"en"}`},
		{mcp.ToolAsk, http.MethodPost, "/ask", `{"question":"flat tyre","language":"en"}`, `{"question":"flat tyre","language":"en"}`},
		{mcp.ToolStatus, http.MethodGet, "/status?language=en", "", `{"language":"en"}`},
	}
	for _, tc := range []struct {
		class  string
		err    error
		scope  string
		status int
		code   string
	}{
		{"validation", domain.ErrUnsupportedLanguage, "knowledge:read", 400, "unsupported_language"},
		{"not found", domain.ErrNotFound, "knowledge:read", 404, "not_found"},
		{"unavailable", port.ErrUnavailable, "knowledge:read", 503, "unavailable"},
		{"internal", secret, "knowledge:read", 500, "internal"},
		{"auth", nil, "knowledge:sync", 403, "forbidden"},
	} {
		logs := &strings.Builder{}
		log := slog.New(slog.NewJSONHandler(logs, nil))
		f := failing{err: tc.err}
		srv := mcp.New(mcp.Services{Lookup: f, Ask: f, Status: f}, "test", log)
		h := api.New(api.Services{Lookup: f, Status: f, MCP: srv}, api.AuthLocalHeaders, log)
		web := httptest.NewServer(h.HTTP(5 * time.Second))
		send := func(method, path, body string) (int, []byte) {
			t.Helper()
			req, _ := http.NewRequest(method, web.URL+"/api/v1/knowledge"+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-Actor-Id", "agent-7")
			req.Header.Set("X-Actor-Scope", tc.scope)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b
		}
		for _, p := range pairs {
			status, body := send(p.method, p.path, p.body)
			var want apiError
			if err := json.Unmarshal(body, &want); err != nil || status != tc.status || want.Error.Code != tc.code {
				t.Fatalf("%s: %s %s: %d %s, want %d %s", tc.class, p.method, p.path, status, body, tc.status, tc.code)
			}
			call := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, p.tool, p.args)
			mstatus, mbody := send(http.MethodPost, "/mcp", call)
			got, isTool := rpcToolError(t, mbody)
			if tc.class == "auth" {
				// Refused before any tool runs: the HTTP error itself.
				isTool = json.Unmarshal(mbody, &got) == nil && mstatus == tc.status
			}
			if !isTool || got.Error != want.Error {
				t.Errorf("%s: %s answers %d %s; %s answers %s", tc.class, p.tool, mstatus, mbody, p.path, body)
			}
			if strings.Contains(string(body)+string(mbody), "s3cr3t") {
				t.Errorf("%s: the internal error's text reached a caller", tc.class)
			}
		}
		web.Close()
		if strings.Contains(logs.String(), "s3cr3t") || strings.Contains(logs.String(), "ragcore.internal") {
			t.Errorf("%s: the raw error reached the log: %s", tc.class, logs)
		}
		if tc.class == "internal" && !strings.Contains(logs.String(), "unexpected error") {
			t.Errorf("internal: the error was not logged: %s", logs)
		}
	}
}
