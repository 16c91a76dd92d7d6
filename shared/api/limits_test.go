package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/app"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// actorTransport sends every request with the local actor headers.
type actorTransport struct{ next http.RoundTripper }

func (t actorTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Actor-Id", "agent-7")
	r.Header.Set("X-Actor-Scope", "knowledge:read")
	return t.next.RoundTrip(r)
}

// ragcoreApp is the whole API in the local auth mode with the RAGcore provider, its RAGcore the
// fake, which logs every request.
func ragcoreApp(t *testing.T) (*app.App, *ragcorefake.Server) {
	t.Helper()
	fake, rc := testutil.ServeRAGcore(t, "t", nil)
	env := map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": rc.URL, "RAGCORE_TOKEN": "t",
		"AUTH_MODE": "local-headers"}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return a, fake
}

// TestQuestionLimitCountsTheNormalisedText: the question limit counts the text as it is analysed
// and sent on, NFKC-normalised. 2,000 × U+FDFA (6,000 bytes on the wire, 36,000 characters
// normalised) is refused with 400 invalid_request on question by POST /lookup, POST /ask and the
// MCP tools alike, and RAGcore is never asked; a question that normalises to exactly the limit
// is served, and RAGcore receives it normalised, no longer than the limit.
func TestQuestionLimitCountsTheNormalisedText(t *testing.T) {
	a, fake := ragcoreApp(t)
	srv := httptest.NewServer(a.Handler.HTTP(5 * time.Second))
	t.Cleanup(srv.Close)
	hc := &http.Client{Transport: actorTransport{next: http.DefaultTransport}}
	post := func(path string, body any) (int, map[string]any) {
		t.Helper()
		raw, _ := json.Marshal(body)
		resp, err := hc.Post(srv.URL+"/api/v1/knowledge"+path, "application/json", strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "limits-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL + "/api/v1/knowledge/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { cs.Close() })

	fdfa := strings.Repeat("\ufdfa", request.MaxQuestionChars)
	fake.Reset()
	for _, path := range []string{"/lookup", "/ask"} {
		code, body := post(path, map[string]any{"question": fdfa, "language": "en"})
		e, _ := body["error"].(map[string]any)
		if code != http.StatusBadRequest || e["code"] != "invalid_request" || e["field"] != "question" ||
			!strings.Contains(e["message"].(string), "normalised") {
			t.Errorf("%s with 2000 × U+FDFA: %d %v", path, code, body)
		}
	}
	for _, tool := range []string{"lookup_knowledge", "ask_knowledge"} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool,
			Arguments: map[string]any{"question": fdfa, "language": "en"}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		// The error is the HTTP routes' error body, as the result's text.
		var raw string
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok {
				raw = tc.Text
			}
		}
		var out struct {
			Error struct{ Code, Field, Message string }
		}
		if err := json.Unmarshal([]byte(raw), &out); err != nil || !res.IsError || out.Error.Code != "invalid_request" ||
			out.Error.Field != "question" || !strings.Contains(out.Error.Message, "normalised") {
			t.Errorf("%s with 2000 × U+FDFA: error %v, %s", tool, res.IsError, raw)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("RAGcore was asked %d times for questions over the limit", n)
	}

	// 111 × U+FDFA and two letters normalise to exactly 2,000 characters: served, and sent on
	// normalised.
	atLimit := strings.Repeat("\ufdfa", 111) + "ab"
	for _, path := range []string{"/lookup", "/ask"} {
		if code, body := post(path, map[string]any{"question": atLimit, "language": "en"}); code != http.StatusOK {
			t.Errorf("%s at the limit: %d %v", path, code, body)
		}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "lookup_knowledge",
		Arguments: map[string]any{"question": atLimit, "language": "en"}})
	if err != nil || res.IsError {
		t.Fatalf("lookup_knowledge at the limit: %v %+v", err, res)
	}
	asked := 0
	for _, r := range fake.Requests() {
		body, _ := r.Body.(map[string]any)
		var q string
		switch r.Path {
		case "/v1/retrieve":
			q, _ = body["query"].(string)
		case "/v1/answer":
			q, _ = body["question"].(string)
		default:
			continue
		}
		asked++
		if n := utf8.RuneCountInString(q); n > request.MaxQuestionChars || strings.ContainsRune(q, '\ufdfa') {
			t.Errorf("RAGcore %s received %d characters (normalised: %v)", r.Path, n, !strings.ContainsRune(q, '\ufdfa'))
		}
	}
	if asked < 3 {
		t.Errorf("RAGcore was asked %d times for three questions at the limit", asked)
	}
}
