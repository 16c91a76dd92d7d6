package docs_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/app"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

// origin and basePath make the URL of the spec's first server (the local API).
const (
	origin   = "http://127.0.0.1:3000"
	basePath = "/api/v1/knowledge"
)

// service is the real HTTP handler with its route table.
type service struct {
	http http.Handler
	// routes are the handler's served routes, "METHOD /base/path/{}", and the scopes of each.
	routes map[string][]string
}

// newService builds the service the way the local API (cmd/local) does: a configuration read
// from env, the embedded procedures, the in-memory store unless DYNAMODB_ENDPOINT is set, and
// local-headers auth. It is the one place that knows the service's packages.
func newService(t *testing.T, env map[string]string) service {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	full := map[string]string{"AUTH_MODE": "local-headers", "LOG_LEVEL": "error"}
	for k, v := range env {
		full[k] = v
	}
	cfg, err := config.FromEnv(func(k string) string { return full[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return service{http: a.Handler.HTTP(app.RequestTimeout), routes: a.Handler.RouteScopes()}
}

func loadSpec(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi.yaml is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, router
}

// exchange is one request to the service and the status it must get.
type exchange struct {
	name        string
	method      string
	path        string // under basePath, with a query string if any
	body        string
	contentType string // application/json when a body is given and this is empty
	actor       string // X-Actor-Id; none when empty
	scope       string // X-Actor-Scope
	correlation string // X-Correlation-Id sent, if any
	want        int
	// request says what the spec says of the request: "valid" (it must pass), "invalid" (the
	// spec must refuse it too: its limits are the handler's), "" (not checked: the handler
	// refuses what the spec cannot express, such as duplicate keys or a body too large).
	request string
	// outside names the components.responses entry of a request to no documented operation
	// (a wrong method, an unknown path, a preflight).
	outside string
	// mcp: the MCP endpoint's exchange, sent with the Accept header of its transport unless
	// accept says otherwise; a success is a JSON-RPC message (or no body), with the correlation
	// id in the header only.
	mcp    bool
	accept string
}

const (
	reader   = "knowledge:read"
	question = `"question":"The windscreen has a crack in the driver view. Can the car still be rented?"`
)

// driven records which documented statuses the exchanges reached: "METHOD /path status".
type driven map[string]bool

func TestOpenAPIMatchesHandlers(t *testing.T) {
	doc, router := loadSpec(t)
	seen := driven{}

	// The demo provider with the in-memory store: every route, every client error.
	demo := newService(t, nil)
	lookup := run(t, doc, router, demo, seen, exchange{name: "lookup grounded", method: "POST", path: "/lookup",
		body: `{` + question + `,"language":"en","top_k":2}`, actor: "agent-7", scope: reader,
		correlation: "spec-lookup", want: 200, request: "valid"})
	invocationID, _ := lookup["invocation_id"].(string)
	ask := run(t, doc, router, demo, seen, exchange{name: "ask", method: "POST", path: "/ask",
		body: `{` + question + `}`, actor: "agent-7", scope: reader, want: 200, request: "valid"})
	askID, _ := ask["invocation_id"].(string)
	// The clarifying turn and two needs in one question, with their traces.
	clarified := `"question":"car just clicks when he tries to start it, pretty sure its the battery. who sorts that out"`
	clar := run(t, doc, router, demo, seen, exchange{name: "lookup with a clarification", method: "POST", path: "/lookup",
		body: `{` + clarified + `,"top_k":2}`, actor: "agent-7", scope: reader, want: 200, request: "valid"})
	confirmed := run(t, doc, router, demo, seen, exchange{name: "lookup confirmed", method: "POST", path: "/lookup",
		body: `{` + clarified + `,"top_k":2,"procedure":"breakdown-assistance"}`, actor: "agent-7", scope: reader, want: 200, request: "valid"})
	two := run(t, doc, router, demo, seen, exchange{name: "lookup with a complement", method: "POST", path: "/lookup",
		body:  `{"question":"Guy's got a blown tyre on the autobahn and wants to just walk off and leave it, allowed? Also the car was covered in dog hair when he picked it up, what do we bill the person before him?","language":"en","top_k":2}`,
		actor: "agent-7", scope: reader, want: 200, request: "valid"})
	for name, res := range map[string]map[string]any{"clarification": clar, "confirmed": confirmed, "complement": two} {
		rel, _ := res["relevance"].(map[string]any)
		if name == "clarification" && rel["clarification"] == nil || name == "complement" && rel["complements"] == nil ||
			(name == "confirmed") != (rel["basis"] == "confirmed") {
			t.Errorf("%s: relevance %v", name, rel)
		}
		id, _ := res["invocation_id"].(string)
		run(t, doc, router, demo, seen, exchange{name: "trace of the lookup with a " + name, method: "GET", path: "/invocations/" + id,
			actor: "agent-7", scope: reader, want: 200, request: "valid"})
	}
	run(t, doc, router, demo, seen, exchange{name: "ask confirmed", method: "POST", path: "/ask",
		body: `{` + clarified + `,"procedure":"breakdown-assistance"}`, actor: "agent-7", scope: reader, want: 200, request: "valid"})
	run(t, doc, router, demo, seen, exchange{name: "lookup unknown procedure", method: "POST", path: "/lookup",
		body: `{` + clarified + `,"procedure":"battery-service"}`, actor: "agent-7", scope: reader, want: 400, request: "valid"})
	run(t, doc, router, demo, seen, exchange{name: "lookup malformed procedure", method: "POST", path: "/lookup",
		body: `{` + clarified + `,"procedure":"Breakdown Assistance"}`, actor: "agent-7", scope: reader, want: 400, request: "invalid"})
	for _, x := range []exchange{
		{name: "lookup out of domain, language detected", method: "POST", path: "/lookup",
			body: `{"question":"What is the capital of France?","language":null}`, actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "lookup in German", method: "POST", path: "/lookup",
			body:  `{"question":"Kunde hat sein Portemonnaie im Auto liegen lassen, wie lange bewahren wir Fundsachen auf?","top_k":20}`,
			actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "lookup blank question", method: "POST", path: "/lookup", body: `{"question":"   "}`,
			actor: "agent-7", scope: reader, want: 400, request: "invalid"},
		{name: "lookup question too long", method: "POST", path: "/lookup",
			body: `{"question":"` + strings.Repeat("a", 2001) + `"}`, actor: "agent-7", scope: reader, want: 400, request: "invalid"},
		{name: "lookup top_k 21", method: "POST", path: "/lookup", body: `{` + question + `,"top_k":21}`,
			actor: "agent-7", scope: reader, want: 400, request: "invalid"},
		{name: "lookup top_k 0", method: "POST", path: "/lookup", body: `{` + question + `,"top_k":0}`,
			actor: "agent-7", scope: reader, want: 400, request: "invalid"},
		{name: "lookup unsupported language", method: "POST", path: "/lookup", body: `{` + question + `,"language":"fr"}`,
			actor: "agent-7", scope: reader, want: 400, request: "invalid"},
		{name: "lookup duplicate key", method: "POST", path: "/lookup", body: `{` + question + `,` + question + `}`,
			actor: "agent-7", scope: reader, want: 400},
		{name: "lookup not JSON", method: "POST", path: "/lookup", body: `{"question":`,
			actor: "agent-7", scope: reader, want: 400, request: "invalid"},
		{name: "lookup without actor", method: "POST", path: "/lookup", body: `{` + question + `}`, want: 401, request: "invalid"},
		{name: "lookup without scope", method: "POST", path: "/lookup", body: `{` + question + `}`,
			actor: "agent-7", scope: "knowledge:sync", want: 403, request: "invalid"},
		{name: "lookup too large", method: "POST", path: "/lookup",
			body: `{"question":"` + strings.Repeat("a", 70000) + `"}`, actor: "agent-7", scope: reader, want: 413},
		{name: "lookup as text", method: "POST", path: "/lookup", body: `{` + question + `}`, contentType: "text/plain",
			actor: "agent-7", scope: reader, want: 415, request: "invalid"},

		{name: "ask detected German", method: "POST", path: "/ask",
			body:  `{"question":"Die Windschutzscheibe hat einen Riss, wie melde ich den Schaden?","language":null}`,
			actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "ask out of domain", method: "POST", path: "/ask", body: `{"question":"What is the capital of France?"}`,
			actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "ask unsupported language", method: "POST", path: "/ask", body: `{` + question + `,"language":"it"}`,
			actor: "agent-7", scope: reader, want: 400, request: "invalid"},
		{name: "ask without actor", method: "POST", path: "/ask", body: `{` + question + `}`, want: 401, request: "invalid"},
		{name: "ask without scope", method: "POST", path: "/ask", body: `{` + question + `}`,
			actor: "ops-1", scope: "knowledge:sync:report", want: 403, request: "invalid"},
		{name: "ask too large", method: "POST", path: "/ask",
			body: `{"question":"` + strings.Repeat("b", 70000) + `"}`, actor: "agent-7", scope: reader, want: 413},
		{name: "ask as form", method: "POST", path: "/ask", body: `question=x`, contentType: "application/x-www-form-urlencoded",
			actor: "agent-7", scope: reader, want: 415, request: "invalid"},

		{name: "status before a report", method: "GET", path: "/status?language=en", actor: "agent-7", scope: reader,
			correlation: "spec-status", want: 200, request: "valid"},
		{name: "status default language", method: "GET", path: "/status", actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "status unsupported language", method: "GET", path: "/status?language=fr", actor: "agent-7", scope: reader,
			want: 400, request: "invalid"},
		{name: "status without actor", method: "GET", path: "/status", want: 401, request: "invalid"},
		{name: "status without scope", method: "GET", path: "/status", actor: "ops-1", scope: "knowledge:sync", want: 403, request: "invalid"},

		{name: "health", method: "GET", path: "/health", actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "health without actor", method: "GET", path: "/health", want: 200, request: "valid"},
		{name: "health with an actor id that is not one", method: "GET", path: "/health", actor: "agent 7", scope: reader, want: 401},
		// Credentials without the scope are refused, which a security requirement that also
		// admits no credentials cannot say: not checked against the spec.
		{name: "health without scope", method: "GET", path: "/health", actor: "ops-1", scope: "knowledge:admin", want: 403},

		{name: "sync", method: "POST", path: "/sync", body: `{"language":"en"}`, actor: "ops-1", scope: "knowledge:sync",
			want: 200, request: "valid"},
		{name: "sync all", method: "POST", path: "/sync", body: `{"language":"all"}`, actor: "ops-1", scope: "knowledge:sync",
			want: 200, request: "valid"},
		{name: "sync without language", method: "POST", path: "/sync", body: `{}`, actor: "ops-1", scope: "knowledge:sync",
			want: 400, request: "invalid"},
		{name: "sync unsupported language", method: "POST", path: "/sync", body: `{"language":"fr"}`, actor: "ops-1",
			scope: "knowledge:sync", want: 400, request: "invalid"},
		{name: "sync without actor", method: "POST", path: "/sync", body: `{"language":"en"}`, want: 401, request: "invalid"},
		{name: "sync without scope", method: "POST", path: "/sync", body: `{"language":"en"}`, actor: "agent-7", scope: reader,
			want: 403, request: "invalid"},
		{name: "sync too large", method: "POST", path: "/sync", body: `{"language":"en","pad":"` + strings.Repeat("c", 70000) + `"}`,
			actor: "ops-1", scope: "knowledge:sync", want: 413},
		{name: "sync as text", method: "POST", path: "/sync", body: `{"language":"en"}`, contentType: "text/plain",
			actor: "ops-1", scope: "knowledge:sync", want: 415, request: "invalid"},

		{name: "sync report", method: "POST", path: "/sync-reports", body: report("run-spec-1", "2026-11-29T18:00:00Z", 11),
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 202, request: "valid"},
		{name: "sync report again", method: "POST", path: "/sync-reports", body: report("run-spec-1", "2026-11-29T18:00:00Z", 11),
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 200, request: "valid"},
		{name: "sync report again, other figures", method: "POST", path: "/sync-reports",
			body: report("run-spec-1", "2026-11-29T18:00:00Z", 10), actor: "sync-workflow", scope: "knowledge:sync:report",
			want: 200, request: "valid"},
		{name: "sync report older", method: "POST", path: "/sync-reports", body: report("run-spec-0", "2026-11-28T18:00:00Z", 9),
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 202, request: "valid"},
		{name: "sync report bad run_id", method: "POST", path: "/sync-reports", body: report("run spec", "2026-11-29T18:00:00Z", 11),
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 400, request: "invalid"},
		{name: "sync report bad time", method: "POST", path: "/sync-reports", body: report("run-spec-2", "yesterday", 11),
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 400, request: "invalid"},
		{name: "sync report negative count", method: "POST", path: "/sync-reports", body: report("run-spec-2", "2026-11-29T18:00:00Z", -1),
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 400, request: "invalid"},
		{name: "sync report without actor", method: "POST", path: "/sync-reports", body: report("run-spec-3", "2026-11-29T18:00:00Z", 11),
			want: 401, request: "invalid"},
		{name: "sync report without scope", method: "POST", path: "/sync-reports", body: report("run-spec-3", "2026-11-29T18:00:00Z", 11),
			actor: "ops-1", scope: "knowledge:sync", want: 403, request: "invalid"},
		{name: "sync report too large", method: "POST", path: "/sync-reports", body: `{"pad":"` + strings.Repeat("d", 70000) + `"}`,
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 413},
		{name: "sync report as text", method: "POST", path: "/sync-reports", body: report("run-spec-3", "2026-11-29T18:00:00Z", 11),
			contentType: "text/plain", actor: "sync-workflow", scope: "knowledge:sync:report", want: 415, request: "invalid"},
		{name: "status after a report", method: "GET", path: "/status?language=en", actor: "agent-7", scope: reader,
			want: 200, request: "valid"},

		{name: "own lookup trace", method: "GET", path: "/invocations/" + invocationID, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "own ask trace", method: "GET", path: "/invocations/" + askID, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "another actor's trace as admin", method: "GET", path: "/invocations/" + invocationID, actor: "auditor-1",
			scope: "knowledge:admin", want: 200, request: "valid"},
		{name: "another actor's trace", method: "GET", path: "/invocations/" + invocationID, actor: "agent-8", scope: reader,
			want: 404, request: "valid"},
		{name: "no such trace", method: "GET", path: "/invocations/NOSUCHINVOCATION", actor: "agent-7", scope: reader,
			want: 404, request: "valid"},
		{name: "trace without actor", method: "GET", path: "/invocations/" + invocationID, want: 401, request: "invalid"},
		{name: "trace without scope", method: "GET", path: "/invocations/" + invocationID, actor: "ops-1", scope: "knowledge:sync",
			want: 403, request: "invalid"},

		{name: "wrong method", method: "GET", path: "/lookup", actor: "agent-7", scope: reader, want: 405, outside: "MethodNotAllowed"},
		{name: "wrong method on a trace", method: "DELETE", path: "/invocations/" + invocationID, actor: "agent-7", scope: reader,
			want: 405, outside: "MethodNotAllowed"},
		{name: "unknown path", method: "GET", path: "/nothing", actor: "agent-7", scope: reader, want: 404, outside: "NoSuchRoute"},
		{name: "preflight", method: "OPTIONS", path: "/sync-reports", want: 200, outside: "Preflight"},

		{name: "mcp initialize", method: "POST", path: "/mcp", mcp: true, correlation: "spec-mcp",
			body:  `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"spec","version":"1"}}}`,
			actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "mcp tool call", method: "POST", path: "/mcp", mcp: true,
			body:  `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_knowledge","arguments":{` + question + `}}}`,
			actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "mcp notification", method: "POST", path: "/mcp", mcp: true, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			actor: "agent-7", scope: reader, want: 202, request: "valid"},
		{name: "mcp without the stream media type", method: "POST", path: "/mcp", mcp: true, accept: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, actor: "agent-7", scope: reader, want: 400},
		{name: "mcp without actor", method: "POST", path: "/mcp", mcp: true, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			want: 401, request: "invalid"},
		{name: "mcp without scope", method: "POST", path: "/mcp", mcp: true, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			actor: "agent-7", scope: "knowledge:sync", want: 403, request: "invalid"},
		{name: "mcp too large", method: "POST", path: "/mcp", mcp: true,
			body:  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("e", 70000) + `"}}`,
			actor: "agent-7", scope: reader, want: 413},
		{name: "mcp as text", method: "POST", path: "/mcp", mcp: true, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			contentType: "text/plain", actor: "agent-7", scope: reader, want: 415, request: "invalid"},
		{name: "mcp stream", method: "GET", path: "/mcp", mcp: true, actor: "agent-7", scope: reader, want: 405, request: "valid"},
		{name: "mcp stream without actor", method: "GET", path: "/mcp", mcp: true, want: 401, request: "invalid"},
		{name: "mcp stream without scope", method: "GET", path: "/mcp", mcp: true, actor: "agent-7", scope: "knowledge:sync",
			want: 403, request: "invalid"},
		{name: "mcp end session", method: "DELETE", path: "/mcp", mcp: true, actor: "agent-7", scope: reader, want: 405, request: "valid"},
		{name: "mcp end session without actor", method: "DELETE", path: "/mcp", mcp: true, want: 401, request: "invalid"},
		{name: "mcp end session without scope", method: "DELETE", path: "/mcp", mcp: true, actor: "agent-7", scope: "knowledge:admin",
			want: 403, request: "invalid"},
	} {
		run(t, doc, router, demo, seen, x)
	}

	// RAGcore (the fake) up, then failing: semantic scores, generated answers, per-document sync
	// failures, verification that does not complete, 503 when it cannot be reached.
	const token = "spec-test-token"
	corpus, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fake := ragcorefake.New(ragcorefake.Options{Token: token})
	fake.LoadCorpus(corpus, "mobilityops-procedures")
	fake.Remove("mobilityops-procedures-en", "lost-and-found")
	rc := httptest.NewServer(fake)
	defer rc.Close()
	rag := newService(t, map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": rc.URL,
		"RAGCORE_TOKEN": token, "RAGCORE_TIMEOUT_MS": "400", "RAGCORE_BREAKER_FAILURES": "2"})
	for _, x := range []exchange{
		{name: "ragcore lookup", method: "POST", path: "/lookup", body: `{` + question + `}`, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "ragcore ask", method: "POST", path: "/ask", body: `{` + question + `}`, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "ragcore status, one source missing", method: "GET", path: "/status?language=en", actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "ragcore health", method: "GET", path: "/health", actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "ragcore sync", method: "POST", path: "/sync", body: `{"language":"de"}`, actor: "ops-1", scope: "knowledge:sync",
			want: 200, request: "valid"},
	} {
		run(t, doc, router, rag, seen, x)
	}
	fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/sources/"}, ErrorRate: 1, ErrorStatus: 400})
	run(t, doc, router, rag, seen, exchange{name: "ragcore sync, uploads refused", method: "POST", path: "/sync",
		body: `{"language":"en"}`, actor: "ops-1", scope: "knowledge:sync", want: 200, request: "valid"})
	fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents", "/v1/retrieve", "/v1/health"}, ErrorRate: 1, ErrorStatus: 500})
	for _, x := range []exchange{
		{name: "ragcore failing: status", method: "GET", path: "/status?language=de", actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "ragcore failing: lookup", method: "POST", path: "/lookup", body: `{` + question + `}`, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "ragcore failing: health", method: "GET", path: "/health", actor: "agent-7", scope: reader, want: 200, request: "valid"},
	} {
		run(t, doc, router, rag, seen, x)
	}
	rc.Close()
	for _, x := range []exchange{
		{name: "ragcore down: sync", method: "POST", path: "/sync", body: `{"language":"en"}`, actor: "ops-1", scope: "knowledge:sync",
			want: 503, request: "valid"},
		{name: "ragcore down: lookup", method: "POST", path: "/lookup", body: `{"question":"What is the capital of France?"}`,
			actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "ragcore down: ask", method: "POST", path: "/ask", body: `{` + question + `}`, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "ragcore down: health", method: "GET", path: "/health", actor: "agent-7", scope: reader, want: 200, request: "valid"},
	} {
		run(t, doc, router, rag, seen, x)
	}

	// A trace store that cannot be reached: lookups still answer, the store's routes say 503.
	down := newService(t, map[string]string{"DYNAMODB_ENDPOINT": closedURL(t), "DYNAMODB_TIMEOUT_MS": "300"})
	for _, x := range []exchange{
		{name: "store down: lookup", method: "POST", path: "/lookup", body: `{` + question + `}`, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "store down: trace", method: "GET", path: "/invocations/ANYINVOCATION", actor: "agent-7", scope: reader,
			want: 503, request: "valid"},
		{name: "store down: sync report", method: "POST", path: "/sync-reports", body: report("run-spec-9", "2026-11-29T18:00:00Z", 11),
			actor: "sync-workflow", scope: "knowledge:sync:report", want: 503, request: "valid"},
		{name: "store down: status", method: "GET", path: "/status", actor: "agent-7", scope: reader, want: 200, request: "valid"},
		{name: "store down: health", method: "GET", path: "/health", actor: "agent-7", scope: reader, want: 200, request: "valid"},
	} {
		run(t, doc, router, down, seen, x)
	}

	// The sidecar (a fake Bedrock knowledge base) on: its results and comparison in a lookup.
	side := newService(t, map[string]string{"SIDECAR_ENABLED": "true", "BEDROCK_KNOWLEDGE_BASE_ID": "KB1",
		"BEDROCK_ENDPOINT": fakeBedrock(t)})
	for _, x := range []exchange{
		{name: "sidecar lookup", method: "POST", path: "/lookup", body: `{` + question + `}`, actor: "agent-7", scope: reader,
			want: 200, request: "valid"},
		{name: "sidecar health", method: "GET", path: "/health", actor: "agent-7", scope: reader, want: 200, request: "valid"},
	} {
		run(t, doc, router, side, seen, x)
	}

	checkCoverage(t, doc, seen)
}

// notDriven are documented statuses no request can reach: the gateway's own refusals (marked
// x-gateway-only in the spec) aside, a 500 only follows a panic or a response that does not
// encode, which no request causes.
var notDriven = map[int]string{http.StatusInternalServerError: "only after a panic or an encoding failure"}

// checkCoverage fails for every documented status of an operation that no exchange reached.
func checkCoverage(t *testing.T, doc *openapi3.T, seen driven) {
	t.Helper()
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code, ref := range op.Responses.Map() {
				if ref.Value != nil && ref.Value.Extensions["x-gateway-only"] == true {
					continue
				}
				var status int
				fmt.Sscan(code, &status)
				if _, ok := notDriven[status]; ok {
					continue
				}
				if key := method + " " + path + " " + code; !seen[key] {
					t.Errorf("%s: documented, but no request of the test gets it", key)
				}
			}
		}
	}
}

func report(runID, finished string, synced int) string {
	return fmt.Sprintf(`{"run_id":%q,"language":"en","synced_document_count":%d,"failed_document_count":0,"finished_at":%q}`,
		runID, synced, finished)
}

// run sends x to the service, validates the request and the response against the spec, and
// returns the response body.
func run(t *testing.T, doc *openapi3.T, router routers.Router, svc service, seen driven, x exchange) map[string]any {
	t.Helper()
	newRequest := func() *http.Request {
		var body io.Reader
		if x.body != "" {
			body = strings.NewReader(x.body)
		}
		req := httptest.NewRequest(x.method, origin+basePath+x.path, body)
		if x.body != "" {
			ct := x.contentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
		}
		if x.actor != "" {
			req.Header.Set("X-Actor-Id", x.actor)
			req.Header.Set("X-Actor-Scope", x.scope)
		}
		if x.correlation != "" {
			req.Header.Set("X-Correlation-Id", x.correlation)
		}
		if x.mcp {
			req.Header.Set("Accept", cmp.Or(x.accept, "application/json, text/event-stream"))
		}
		return req
	}
	rec := httptest.NewRecorder()
	svc.http.ServeHTTP(rec, newRequest())
	res := rec.Result()
	body := rec.Body.Bytes()
	if res.StatusCode != x.want {
		t.Errorf("%s: status %d, want %d: %s", x.name, res.StatusCode, x.want, body)
		return nil
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil && !(x.mcp && len(body) == 0 && x.want == http.StatusAccepted) {
		t.Errorf("%s: body is not a JSON object: %v", x.name, err)
		return nil
	}
	// The correlation id is in the header and the body, and a caller's valid one is reused.
	id := res.Header.Get("X-Correlation-Id")
	inBody := out["correlation_id"] == id || x.mcp && x.want < 300
	if id == "" || !inBody || (x.correlation != "" && id != x.correlation) {
		t.Errorf("%s: X-Correlation-Id %q, correlation_id %v, sent %q", x.name, id, out["correlation_id"], x.correlation)
	}

	if x.outside != "" {
		validateOutside(t, doc, router, x, newRequest(), res, out)
		return out
	}
	req := newRequest()
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Errorf("%s: %s %s is not in the spec: %v", x.name, x.method, x.path, err)
		return out
	}
	seen[route.Method+" "+route.Path+" "+fmt.Sprint(res.StatusCode)] = true
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: localAuth, MultiError: true}}
	err = openapi3filter.ValidateRequest(context.Background(), in)
	switch {
	case x.request == "valid" && err != nil:
		t.Errorf("%s: the spec refuses a request the service serves: %v", x.name, err)
	case x.request == "invalid" && err == nil:
		t.Errorf("%s: the spec accepts a request the service refuses with %d", x.name, res.StatusCode)
	}
	in.Request = newRequest() // the validation read the body
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.StatusCode, Header: res.Header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		t.Errorf("%s: the response does not match the spec: %v\n%s", x.name, err, clip(body))
	}
	return out
}

// localAuth checks a request against the spec's security schemes as the local auth mode does:
// localActor needs X-Actor-Id, localScope one of the requirement's scopes in X-Actor-Scope; jwt
// needs a bearer token (the test sends none).
func localAuth(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header
	switch in.SecuritySchemeName {
	case "localActor":
		if h.Get("X-Actor-Id") == "" {
			return errors.New("no X-Actor-Id")
		}
		return nil
	case "localScope":
		held := strings.Fields(h.Get("X-Actor-Scope"))
		for _, s := range in.Scopes {
			if slices.Contains(held, s) {
				return nil
			}
		}
		return fmt.Errorf("none of the scopes %v", in.Scopes)
	case "jwt":
		if !strings.HasPrefix(h.Get("Authorization"), "Bearer ") {
			return errors.New("no bearer token")
		}
		return nil
	}
	return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
}

// validateOutside checks a response to a request no operation documents against the
// components.responses entry x.outside: the router must not know the method, the body must
// match the entry's schema and its required headers must be there.
func validateOutside(t *testing.T, doc *openapi3.T, router routers.Router, x exchange, req *http.Request, res *http.Response,
	body map[string]any) {
	t.Helper()
	if _, _, err := router.FindRoute(req); err == nil {
		t.Errorf("%s: %s %s is documented as an operation; expected it outside the spec's operations", x.name, x.method, x.path)
	}
	ref := doc.Components.Responses[x.outside]
	if ref == nil || ref.Value == nil {
		t.Fatalf("%s: components.responses.%s is missing", x.name, x.outside)
	}
	for name, h := range ref.Value.Headers {
		if h.Value.Required && res.Header.Get(name) == "" {
			t.Errorf("%s: header %s missing", x.name, name)
		}
		if v := res.Header.Get(name); v != "" && h.Value.Schema != nil {
			if err := h.Value.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
				t.Errorf("%s: header %s: %v", x.name, name, err)
			}
		}
	}
	if x.want == http.StatusMethodNotAllowed || x.outside == "Preflight" {
		// The Allow header names the methods the spec lists for the path (and OPTIONS, for a preflight).
		want := methodsOf(doc, x.path)
		if x.outside == "Preflight" {
			want = append(want, http.MethodOptions)
		}
		got := strings.Split(res.Header.Get("Allow"), ", ")
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Allow %v, the spec lists %v", x.name, got, want)
		}
	}
	media := ref.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		t.Fatalf("%s: components.responses.%s has no application/json schema", x.name, x.outside)
	}
	if err := media.Schema.Value.VisitJSON(any(body), openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s: the response does not match components.responses.%s: %v", x.name, x.outside, err)
	}
}

// methodsOf lists the methods the spec documents for a concrete path under basePath.
func methodsOf(doc *openapi3.T, path string) []string {
	var out []string
	for p, item := range doc.Paths.Map() {
		if templateRegexp(p).MatchString(path) {
			for m := range item.Operations() {
				out = append(out, m)
			}
		}
	}
	return out
}

var paramRegexp = regexp.MustCompile(`\{[^}/]+\}`)

func templateRegexp(p string) *regexp.Regexp {
	parts := paramRegexp.Split(p, -1)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, `[^/]+`) + "$")
}

// TestOpenAPIRoutesMatchHandler compares the spec's operations with the handler's route table,
// both ways, and each operation's x-required-scopes with the scopes the handler admits.
func TestOpenAPIRoutesMatchHandler(t *testing.T) {
	doc, _ := loadSpec(t)
	svc := newService(t, nil)
	// Both local headers are security schemes, so that a generated client sends both.
	for name, header := range map[string]string{"localActor": "X-Actor-Id", "localScope": "X-Actor-Scope"} {
		if s := doc.Components.SecuritySchemes[name]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != header {
			t.Errorf("security scheme %s: want an apiKey in the header %s", name, header)
		}
	}
	spec := map[string][]string{}
	for p, item := range doc.Paths.Map() {
		// The handler writes a path parameter as "{}".
		route := basePath + paramRegexp.ReplaceAllString(p, "{}")
		for method, op := range item.Operations() {
			if op.OperationID == "" || op.Description == "" {
				t.Errorf("%s %s: an operation needs an operationId and a description (agent tool schemas use both)", method, p)
			}
			var scopes []string
			raw, _ := json.Marshal(op.Extensions["x-required-scopes"])
			if err := json.Unmarshal(raw, &scopes); err != nil || len(scopes) == 0 {
				t.Errorf("%s %s: x-required-scopes missing or not a list of strings", method, p)
			}
			spec[method+" "+route] = scopes
			checkSecurity(t, method+" "+p, op, scopes)
		}
	}
	for route, scopes := range svc.routes {
		want, ok := spec[route]
		switch {
		case !ok:
			t.Errorf("the handler serves %s; the spec lacks it", route)
		case !equalSets(want, scopes):
			t.Errorf("%s: the handler admits the scopes %v, the spec says %v", route, scopes, want)
		}
	}
	for route := range spec {
		if _, ok := svc.routes[route]; !ok {
			t.Errorf("the spec documents %s; the handler lacks it", route)
		}
	}
}

// checkSecurity: each scope of x-required-scopes admits a caller on its own, for the token and
// for the local headers; a local requirement names both headers (X-Actor-Id and X-Actor-Scope),
// with the same scope, so that a client generated from the spec sends both.
func checkSecurity(t *testing.T, name string, op *openapi3.Operation, scopes []string) {
	t.Helper()
	if op.Security == nil {
		t.Errorf("%s: no security requirement", name)
		return
	}
	for _, req := range *op.Security {
		actor, hasActor := req["localActor"]
		scope, hasScope := req["localScope"]
		if hasActor != hasScope || !slices.Equal(actor, scope) {
			t.Errorf("%s: a requirement names localActor %v and localScope %v, want both with the same scope", name, actor, scope)
		}
	}
	for _, scheme := range []string{"jwt", "localActor", "localScope"} {
		var got []string
		for _, req := range *op.Security {
			if s, ok := req[scheme]; ok {
				if len(s) != 1 {
					t.Errorf("%s: each %s requirement names one scope, got %v", name, scheme, s)
				}
				got = append(got, s...)
			}
		}
		if !equalSets(got, scopes) {
			t.Errorf("%s: %s requirements name %v, x-required-scopes %v", name, scheme, got, scopes)
		}
	}
}

func equalSets(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// closedURL is an address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	return "http://" + testutil.ClosedAddr(t)
}

// fakeBedrock answers the Bedrock Agent Runtime Retrieve call with two results.
func fakeBedrock(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/retrieve") {
			http.Error(w, "unexpected", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"retrievalResults": []any{
			map[string]any{"content": map[string]any{"text": "Assess roadworthiness. The vehicle is blocked for rental."},
				"location": map[string]any{"type": "S3", "s3Location": map[string]any{"uri": "s3://kb/procedures/en/damage-procedure.md"}},
				"metadata": map[string]any{"document_id": "damage-procedure", "title": "Damage handling procedure",
					"section": "2. Immediate actions", "category": "damage", "language": "en"},
				"score": 0.71},
			map[string]any{"content": map[string]any{"text": "Other text."},
				"location": map[string]any{"type": "S3", "s3Location": map[string]any{"uri": "s3://kb/procedures/en/ev-charging.md"}},
				"metadata": map[string]any{"document_id": "ev-charging", "title": "EV charging", "section": "1. Scope",
					"category": "charging", "language": "en"},
				"score": 0.32},
		}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
