package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// services is a mock of the three domain services: each returns err, or panics when told.
type services struct {
	err   error
	panic bool
	last  lookup.LookupRequest
	ask   lookup.AskRequest
}

func (m *services) Lookup(_ context.Context, r lookup.LookupRequest) (lookup.Result, error) {
	if m.panic {
		panic("boom")
	}
	m.last = r
	return lookup.Result{EvidenceState: port.StateInsufficient, InvocationID: "INV1"}, m.err
}

func (m *services) Ask(_ context.Context, r lookup.AskRequest) (lookup.Answer, error) {
	m.ask = r
	return lookup.Answer{Answer: "a", EvidenceState: port.StateGrounded}, m.err
}

func (m *services) Status(_ context.Context, lang string, _ port.Call) (domain.Status, error) {
	return domain.Status{Language: lang}, m.err
}

func session(t *testing.T, m *services) *sdk.ClientSession {
	t.Helper()
	srv := New(Services{Lookup: m, Ask: m, Status: m}, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	call := port.Call{Actor: port.Actor{ID: "agent-1", Scopes: []string{"knowledge:read"}}, CorrelationID: "corr-1"}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { srv.ServeMCP(w, r, call) }))
	t.Cleanup(hs.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func errorOf(t *testing.T, res *sdk.CallToolResult) toolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("not a tool error: %+v", res)
	}
	var b struct {
		Error         toolError `json:"error"`
		CorrelationID string    `json:"correlation_id"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &b); err != nil || b.CorrelationID != "corr-1" {
		t.Fatalf("error body %v: %v", res.Content[0], err)
	}
	return b.Error
}

// Service failures map to the HTTP routes' codes and messages; a panic is an internal tool error,
// and the server goes on serving.
func TestToolErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		m    *services
		code string
	}{
		{"provider down", &services{err: port.ErrUnavailable}, request.CodeUnavailable},
		{"unsupported", &services{err: domain.ErrUnsupportedLanguage}, request.CodeUnsupportedLanguage},
		{"unexpected", &services{err: errors.New("dynamodb: arn:aws:secret")}, request.CodeInternal},
		{"panic", &services{panic: true}, request.CodeInternal},
	} {
		cs := session(t, tc.m)
		for _, tool := range []string{lookup.ToolLookup, ToolAsk, ToolStatus} {
			if tc.m.panic && tool != lookup.ToolLookup {
				continue
			}
			args := map[string]any{"question": "q", "language": "en"}
			if tool == ToolStatus {
				args = map[string]any{"language": "en"}
			}
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s %s: a transport failure: %v", tc.name, tool, err)
			}
			e := errorOf(t, res)
			if e.Code != tc.code || strings.Contains(e.Message, "arn:") {
				t.Errorf("%s %s: %+v", tc.name, tool, e)
			}
		}
	}
}

// The actor and correlation id of the authorised call reach the services, never the arguments;
// the ask trace is named after the tool; a missing language is detected.
func TestCallReachesServices(t *testing.T) {
	t.Parallel()
	m := &services{}
	cs := session(t, m)
	// A member the tool does not define is refused, an actor among them: never taken, never ignored.
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: lookup.ToolLookup,
		Arguments: map[string]any{"question": "Die Windschutzscheibe hat einen Riss", "actor": "someone-else"}})
	if err != nil {
		t.Fatal(err)
	}
	if e := errorOf(t, res); e.Code != "invalid_request" || e.Field != "actor" || m.last.Question != "" {
		t.Fatalf("an unknown member: %+v, service saw %+v", e, m.last)
	}
	// Every tool names the member it does not define (a typo of top_k among them).
	for tool, args := range map[string]map[string]any{
		lookup.ToolLookup: {"question": "flat tyre", "topk": 2},
		ToolAsk:           {"question": "flat tyre", "topk": 2},
		ToolStatus:        {"lang": "de"},
	} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		want := "topk"
		if tool == ToolStatus {
			want = "lang"
		}
		if e := errorOf(t, res); e.Code != "invalid_request" || e.Field != want || e.Message != `"`+want+`" is not a member of this request` {
			t.Errorf("%s %v: %+v, want %s named", tool, args, e, want)
		}
	}
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: lookup.ToolLookup,
		Arguments: map[string]any{"question": "Die Windschutzscheibe hat einen Riss"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if m.last.Actor.ID != "agent-1" || m.last.CorrelationID != "corr-1" || m.last.Language != "de" || m.last.TopK != request.DefaultTopK {
		t.Errorf("lookup request %+v", m.last)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "general knowledge") {
		t.Errorf("insufficient text %q", text)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolAsk,
		Arguments: map[string]any{"question": "q", "language": "en"}}); err != nil || m.ask.Tool != ToolAsk {
		t.Errorf("ask request %+v, %v", m.ask, err)
	}
}

// FuzzToolArguments: any arguments give a valid request or a tool error of the contract, never
// a panic; a valid request holds text within the limits.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{`{"question":"a","top_k":3}`, `{"question":7}`, `null`, `[]`, `{"question":"\u0000"}`,
		`{"language":"fr","question":"x"}`, `{"question":"x","top_k":1e99}`, `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var a request.LookupBody
		if e := decodeArgs(json.RawMessage(raw), &a); e != nil {
			if e.Code != request.CodeInvalidRequest {
				t.Fatalf("decode error code %s", e.Code)
			}
			return
		}
		req, _, e := request.Lookup(a)
		q, lang := req.Question, req.Language
		if e != nil {
			if e.Code != request.CodeInvalidRequest && e.Code != request.CodeUnsupportedLanguage {
				t.Fatalf("code %s", e.Code)
			}
			return
		}
		if strings.TrimSpace(q) == "" || utf8.RuneCountInString(q) > request.MaxQuestionChars || (lang != "en" && lang != "de") {
			t.Fatalf("accepted %q %q", q, lang)
		}
	})
}
