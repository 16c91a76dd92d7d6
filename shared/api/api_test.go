package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/indexsync"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

func newHandler(t testing.TB, mode api.AuthMode) (*api.Handler, *bytes.Buffer) {
	t.Helper()
	s, log, logs := newServices(t)
	return api.New(s, mode, log), logs
}

// newServices builds the real services over the embedded corpus (the demo provider, the memory
// store) and the logger they and the handler log to.
func newServices(t testing.TB) (api.Services, *slog.Logger, *bytes.Buffer) {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := lexical.Build(c)
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	records := store.NewMemory()
	p := demo.New(ix)
	svc := retrieval.New(ix, p, records, retrieval.DefaultOptions(), log)
	st := status.New(c, p, p, records, status.Options{Namespace: testNS}, log)
	sy := indexsync.New(c, p, records, st, testNS, log)
	return api.Services{Lookup: svc, Status: st, Sync: sy}, log, logs
}

// recordingLookup records the requests the routes hand the lookup service. A lookup answers
// result when it is set, else the embedded service's answer, as do the other calls (embedded, an
// operation added to api.Lookup needs no change here).
type recordingLookup struct {
	lookupService
	result  *lookup.Result
	lookups []lookup.LookupRequest
	asks    []lookup.AskRequest
}

func (r *recordingLookup) Lookup(ctx context.Context, req lookup.LookupRequest) (lookup.Result, error) {
	r.lookups = append(r.lookups, req)
	if r.result != nil {
		return *r.result, nil
	}
	return r.lookupService.Lookup(ctx, req)
}

func (r *recordingLookup) Ask(ctx context.Context, req lookup.AskRequest) (lookup.Answer, error) {
	r.asks = append(r.asks, req)
	return r.lookupService.Ask(ctx, req)
}

// The services' interfaces under names that are not their methods', for fakes to embed.
type (
	lookupService = api.Lookup
	statusService = api.Status
	syncService   = api.Sync
)

var testNS = domain.Namespace{Tenant: "northstar-mobility-demo", Workspace: "mobilityops", Collection: "internal-procedures"}

// event builds an API Gateway HTTP API (payload 2.0) request as the JWT authorizer delivers it.
func event(method, path, body string, claims map[string]string, headers map[string]string) events.APIGatewayV2HTTPRequest {
	h := map[string]string{}
	if body != "" {
		h["content-type"] = "application/json"
	}
	for k, v := range headers {
		h[k] = v
	}
	ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: path, Headers: h, Body: body}
	ev.RequestContext.HTTP.Method = method
	ev.RequestContext.HTTP.Path = path
	ev.RequestContext.Stage = "$default"
	if claims != nil {
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims}}
	}
	return ev
}

var reader = map[string]string{"sub": "agent-7", "scope": "knowledge:read"}

type errorBody struct {
	Error struct {
		Code, Message, Field string
	}
	CorrelationID string `json:"correlation_id"`
}

func call(t *testing.T, h *api.Handler, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, map[string]any) {
	t.Helper()
	resp, err := h.Lambda(context.Background(), ev)
	if err != nil {
		t.Fatalf("the handler returned a Go error: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatalf("body is not JSON: %q", resp.Body)
	}
	if resp.Headers["Content-Type"] != "application/json" {
		t.Errorf("content type %q", resp.Headers["Content-Type"])
	}
	id, _ := body["correlation_id"].(string)
	if id == "" || resp.Headers["X-Correlation-Id"] != id {
		t.Errorf("correlation id body %q header %q", id, resp.Headers["X-Correlation-Id"])
	}
	return resp, body
}

// TestLookupOverAPIGatewayV2: the lookup route hands the service the request's fields, the
// actor and the correlation id, and answers the service's result as it is, with the language
// and the correlation id, in the contract's field names.
func TestLookupOverAPIGatewayV2(t *testing.T) {
	category := "damage"
	block := lookup.EvidenceBlock{Source: "procedures/de/stub.md", DocumentID: "stub-procedure", Version: "3",
		EffectiveDate: "2026-01-01", Title: "Stub", Breadcrumb: "Stub > Steps", Section: "Steps", Category: category,
		RetrievalLayer: "l0+l1", Content: "Step one.", HitReasons: []string{"title"}, Rank: 1}
	second := block
	second.DocumentID, second.Rank = "stub-supplement", 2
	stub := &recordingLookup{result: &lookup.Result{EvidenceState: "grounded", Primary: &block,
		Supplement: []lookup.EvidenceBlock{second}, EvidenceBlocks: []lookup.EvidenceBlock{block, second},
		Relevance: lookup.Relevance{Assessment: "strong", Basis: "lexical"},
		Retrieval: lookup.Details{Layer: "l0+l1", L1: lookup.L1Details{Status: "ok", Provider: "stub",
			CategoryFilter: &category, CandidateCount: 4, ScoreKind: "bm25", Calls: 1}},
		Provider: "stub", InvocationID: "inv-stub"}}
	h := api.New(api.Services{Lookup: stub}, api.AuthJWT, slog.New(slog.DiscardHandler))
	question := "Kunde meldet Kratzer an der Tür, wie erfasse ich den Schaden?"
	resp, body := call(t, h, event("POST", "/api/v1/knowledge/lookup",
		`{"question":"`+question+`","language":"de","top_k":3}`, reader,
		map[string]string{"X-Correlation-Id": "agent-call-42"}))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
	}
	if len(stub.lookups) != 1 {
		t.Fatalf("the service got %d lookups", len(stub.lookups))
	}
	if got := stub.lookups[0]; got.Question != question || got.Language != "de" || got.TopK != 3 ||
		got.Actor.ID != "agent-7" || !slices.Equal(got.Actor.Scopes, []string{"knowledge:read"}) || got.CorrelationID != "agent-call-42" {
		t.Errorf("the service got %+v", got)
	}
	if body["correlation_id"] != "agent-call-42" {
		t.Errorf("caller's correlation id not reused: %v", body["correlation_id"])
	}
	for _, k := range []string{"evidence_state", "primary", "supplement", "evidence_blocks", "relevance", "retrieval", "provider", "invocation_id",
		"language", "language_detected"} {
		if _, ok := body[k]; !ok {
			t.Errorf("response lacks %q", k)
		}
	}
	if body["language"] != "de" || body["language_detected"] != false {
		t.Errorf("language %v detected %v, want the given de", body["language"], body["language_detected"])
	}
	// The service's result, passed through.
	want, _ := json.Marshal(stub.result)
	var passed map[string]any
	if err := json.Unmarshal(want, &passed); err != nil {
		t.Fatal(err)
	}
	passed["language"], passed["language_detected"], passed["correlation_id"] = "de", false, "agent-call-42"
	if got, want := asJSON(body), asJSON(passed); got != want {
		t.Errorf("body\n%s\nwant the service's result\n%s", got, want)
	}
	blocks := body["evidence_blocks"].([]any)
	if len(blocks) != 2 {
		t.Fatalf("%d blocks, the service gave 2", len(blocks))
	}
	for _, k := range []string{"source", "document_id", "version", "effective_date", "title", "breadcrumb", "section",
		"category", "retrieval_layer", "content", "hit_reasons", "score", "rank"} {
		if _, ok := blocks[0].(map[string]any)[k]; !ok {
			t.Errorf("evidence block lacks %q", k)
		}
	}
	if p := body["primary"].(map[string]any); p["document_id"] != "stub-procedure" {
		t.Errorf("primary %v, the service's is stub-procedure", p["document_id"])
	}
	l1 := body["retrieval"].(map[string]any)["l1"].(map[string]any)
	for _, k := range []string{"status", "provider", "category_filter", "candidate_count", "score_kind"} {
		if _, ok := l1[k]; !ok {
			t.Errorf("retrieval.l1 lacks %q", k)
		}
	}
}

// asJSON is v as canonical JSON (map keys sorted).
func asJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestLanguageDetection: a missing or null language is detected from the question and the
// response says so; a given language always wins, whatever the question's language.
func TestLanguageDetection(t *testing.T) {
	s, log, _ := newServices(t)
	rec := &recordingLookup{lookupService: s.Lookup}
	s.Lookup = rec
	h := api.New(s, api.AuthJWT, log)
	german := "Karre springt nicht an, Kunde steht auf dem Standstreifen"
	english := "cust phone died car wont open"
	cases := []struct {
		name, route, body string
		lang              string
		detected          bool
	}{
		{"missing, German question", "lookup", `{"question":"Kunde meldet Kratzer an der Tür, wie erfasse ich den Schaden?"}`, "de", true},
		{"missing, chatty German", "lookup", `{"question":"` + german + `"}`, "de", true},
		{"missing, English question", "lookup", `{"question":"` + english + `"}`, "en", true},
		{"null, German question", "lookup", `{"question":"` + german + `","language":null}`, "de", true},
		{"null, English question", "lookup", `{"question":"windscreen chip","language":null,"top_k":2}`, "en", true},
		{"missing, cannot be told", "lookup", `{"question":"12345"}`, "en", true},
		{"explicit en, German text", "lookup", `{"question":"` + german + `","language":"en"}`, "en", false},
		{"explicit de, English text", "lookup", `{"question":"` + english + `","language":"de"}`, "de", false},
		{"explicit de", "lookup", `{"question":"` + german + `","language":"de"}`, "de", false},
		{"ask, missing, German question", "ask", `{"question":"Wie schnell muss ein SEV1-Vorfall bestätigt werden?"}`, "de", true},
		{"ask, null, English question", "ask", `{"question":"How fast must a SEV2 incident be acknowledged?","language":null}`, "en", true},
		{"ask, explicit en, German text", "ask", `{"question":"Wie schnell muss ein SEV1-Vorfall bestätigt werden?","language":"en"}`, "en", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, h, event("POST", "/api/v1/knowledge/"+tc.route, tc.body, reader, nil))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
			}
			if body["language"] != tc.lang || body["language_detected"] != tc.detected {
				t.Errorf("language %v detected %v, want %s %v", body["language"], body["language_detected"], tc.lang, tc.detected)
			}
			// The service is asked in that language.
			var b struct{ Question string }
			if err := json.Unmarshal([]byte(tc.body), &b); err != nil {
				t.Fatal(err)
			}
			var question, lang string
			if tc.route == "lookup" {
				question, lang = rec.lookups[len(rec.lookups)-1].Question, rec.lookups[len(rec.lookups)-1].Language
			} else {
				question, lang = rec.asks[len(rec.asks)-1].Question, rec.asks[len(rec.asks)-1].Language
			}
			if question != b.Question || lang != tc.lang {
				t.Errorf("the service got %q in %q, want %q in %s", question, lang, b.Question, tc.lang)
			}
			// The trace records the language the question was answered in.
			_, tr := call(t, h, event("GET", "/api/v1/knowledge/invocations/"+body["invocation_id"].(string), "", reader, nil))
			if tr["language"] != tc.lang {
				t.Errorf("trace language %v, want %s", tr["language"], tc.lang)
			}
		})
	}
	for _, route := range []string{"lookup", "ask"} {
		for _, lang := range []string{`"fr"`, `"EN"`, `"de-DE"`, `""`} {
			resp, _ := call(t, h, event("POST", "/api/v1/knowledge/"+route, `{"question":"Kunde steht auf dem Standstreifen","language":`+lang+`}`, reader, nil))
			var e errorBody
			if err := json.Unmarshal([]byte(resp.Body), &e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 || e.Error.Code != "unsupported_language" || e.Error.Field != "language" || !strings.Contains(e.Error.Message, "en, de") {
				t.Errorf("%s language %s: %d %+v", route, lang, resp.StatusCode, e.Error)
			}
		}
	}
}

func TestBadRequests(t *testing.T) {
	h, logs := newHandler(t, api.AuthJWT)
	long := strings.Repeat("a", 2001)
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		claims                   map[string]string
		status                   int
		code, field              string
	}{
		{"not JSON", "POST", "/lookup", `{"question": `, nil, reader, 400, "invalid_request", ""},
		{"array body", "POST", "/lookup", `["windscreen"]`, nil, reader, 400, "invalid_request", ""},
		{"two objects", "POST", "/lookup", `{"question":"a"}{"question":"b"}`, nil, reader, 400, "invalid_request", ""},
		{"wrong type", "POST", "/lookup", `{"question": 42}`, nil, reader, 400, "invalid_request", "question"},
		{"fractional top_k", "POST", "/lookup", `{"question":"tyre","top_k":2.5}`, nil, reader, 400, "invalid_request", "top_k"},
		{"missing question", "POST", "/lookup", `{"language":"en"}`, nil, reader, 400, "invalid_request", "question"},
		{"blank question", "POST", "/lookup", `{"question":"   "}`, nil, reader, 400, "invalid_request", "question"},
		{"question too long", "POST", "/lookup", `{"question":"` + long + `"}`, nil, reader, 400, "invalid_request", "question"},
		{"top_k zero", "POST", "/lookup", `{"question":"tyre","top_k":0}`, nil, reader, 400, "invalid_request", "top_k"},
		{"top_k too big", "POST", "/lookup", `{"question":"tyre","top_k":21}`, nil, reader, 400, "invalid_request", "top_k"},
		{"unsupported language", "POST", "/lookup", `{"question":"pneu crevé","language":"fr"}`, nil, reader, 400, "unsupported_language", "language"},
		{"empty language", "POST", "/ask", `{"question":"tyre","language":""}`, nil, reader, 400, "unsupported_language", "language"},
		{"empty body", "POST", "/lookup", ``, map[string]string{"content-type": "application/json"}, reader, 400, "invalid_request", ""},
		{"too large", "POST", "/lookup", `{"question":"` + strings.Repeat("x", api.MaxBody) + `"}`, nil, reader, 413, "payload_too_large", ""},
		{"wrong content type", "POST", "/lookup", `{"question":"tyre"}`, map[string]string{"content-type": "text/plain"}, reader, 415, "unsupported_media_type", ""},
		{"no actor", "POST", "/lookup", `{"question":"tyre"}`, nil, nil, 401, "unauthorized", ""},
		{"missing scope", "POST", "/lookup", `{"question":"tyre"}`, nil, map[string]string{"sub": "agent-9", "scope": "profile"}, 403, "forbidden", ""},
		{"unknown route", "GET", "/nothing", ``, nil, reader, 404, "not_found", ""},
		{"outside the base path", "GET", "/../etc/passwd", ``, nil, reader, 404, "not_found", ""},
		{"wrong method", "GET", "/lookup", ``, nil, reader, 405, "method_not_allowed", ""},
		{"unknown invocation", "GET", "/invocations/NOPE", ``, nil, reader, 404, "not_found", ""},
		{"malformed invocation id", "GET", "/invocations/" + strings.Repeat("z", 80), ``, nil, reader, 404, "not_found", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := "/api/v1/knowledge" + tc.path
			if tc.name == "outside the base path" {
				path = tc.path
			}
			resp, _ := call(t, h, event(tc.method, path, tc.body, tc.claims, tc.headers))
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, resp.Body)
			}
			var e errorBody
			if err := json.Unmarshal([]byte(resp.Body), &e); err != nil {
				t.Fatal(err)
			}
			if e.Error.Code != tc.code || e.Error.Field != tc.field || e.Error.Message == "" {
				t.Errorf("error %+v, want code %s field %q", e.Error, tc.code, tc.field)
			}
			if tc.code == "unsupported_language" && !strings.Contains(e.Error.Message, "en, de") {
				t.Errorf("message lacks the supported languages: %q", e.Error.Message)
			}
			if tc.status == 405 && resp.Headers["Allow"] != "POST" {
				t.Errorf("Allow %q", resp.Headers["Allow"])
			}
			if strings.Contains(resp.Body, "goroutine") || strings.Contains(resp.Body, ".go:") {
				t.Errorf("stack trace in the response: %s", resp.Body)
			}
		})
	}
	if strings.Contains(logs.String(), long[:100]) {
		t.Error("the log holds the question text")
	}
}

func TestCorrelationIDIsReplacedWhenInvalid(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	_, body := call(t, h, event("GET", "/api/v1/knowledge/health", "", reader, map[string]string{"x-correlation-id": "bad id with spaces"}))
	id := body["correlation_id"].(string)
	if id == "bad id with spaces" || !regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`).MatchString(id) {
		t.Fatalf("correlation id %q", id)
	}
}

func TestBodyFieldsNeverOverrideTheActor(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	// A body that names an actor is refused whole: a member the route does not define.
	for _, member := range []string{"actor_id", "scope", "sub"} {
		resp, body := call(t, h, event("POST", "/api/v1/knowledge/lookup",
			`{"question":"flat tyre on the motorway","`+member+`":"ops-lead"}`, reader, nil))
		if e, _ := body["error"].(map[string]any); resp.StatusCode != 400 || e["field"] != member || e["code"] != "invalid_request" {
			t.Fatalf("%s in the body: %d %v", member, resp.StatusCode, body)
		}
	}
	_, body := call(t, h, event("POST", "/api/v1/knowledge/lookup", `{"question":"flat tyre on the motorway"}`, reader, nil))
	id := body["invocation_id"].(string)
	_, tr := call(t, h, event("GET", "/api/v1/knowledge/invocations/"+id, "", reader, nil))
	if tr["actor_id"] != "agent-7" {
		t.Fatalf("trace actor %v, want the authenticated agent-7", tr["actor_id"])
	}
	resp, _ := call(t, h, event("GET", "/api/v1/knowledge/invocations/"+id, "", map[string]string{"sub": "ops-lead", "scope": "knowledge:read"}, nil))
	if resp.StatusCode != 404 {
		t.Fatalf("another actor read the trace: %d", resp.StatusCode)
	}
	for _, scope := range []string{"knowledge:read knowledge:admin", "knowledge:admin"} {
		resp, _ = call(t, h, event("GET", "/api/v1/knowledge/invocations/"+id, "", map[string]string{"sub": "ops-lead", "scope": scope}, nil))
		if resp.StatusCode != 200 {
			t.Fatalf("admin (%s) could not read the trace: %d", scope, resp.StatusCode)
		}
	}
	resp, _ = call(t, h, event("GET", "/api/v1/knowledge/invocations/"+id, "", map[string]string{"sub": "agent-7", "scope": "knowledge:sync"}, nil))
	if resp.StatusCode != 403 {
		t.Fatalf("an actor with neither read nor admin: %d", resp.StatusCode)
	}
}

// A member a route does not define is a 400 naming it, never silently dropped for a default.
func TestUnknownMembersAreRefused(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	for _, tc := range []struct {
		path, body, field string
		claims            map[string]string
	}{
		{"/api/v1/knowledge/lookup", `{"question":"flat tyre","topk":2}`, "topk", reader},
		{"/api/v1/knowledge/ask", `{"question":"flat tyre","top_k":3}`, "top_k", reader},
		{"/api/v1/knowledge/ask", `{"question":"flat tyre","topk":2}`, "topk", reader},
		{"/api/v1/knowledge/lookup", `{"question":"flat tyre","Language":"de"}`, "Language", reader},
		{"/api/v1/knowledge/sync", `{"language":"en","lang":"de"}`, "lang", syncOperator},
		{"/api/v1/knowledge/sync-reports", strings.Replace(report("r-1", "2026-11-29T18:00:00Z", 11), `"language"`, `"synced":11,"language"`, 1),
			"synced", syncWorkflow},
	} {
		resp, body := call(t, h, event("POST", tc.path, tc.body, tc.claims, jsonBody))
		e, _ := body["error"].(map[string]any)
		if resp.StatusCode != 400 || e["code"] != "invalid_request" || e["field"] != tc.field ||
			e["message"] != `"`+tc.field+`" is not a member of this request` {
			t.Errorf("%s %s: %d %v", tc.path, tc.body, resp.StatusCode, body)
		}
	}
}

func TestInvocationTraceShape(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	q := "Customer left a wallet in the car, how long do we keep found items?"
	_, body := call(t, h, event("POST", "/api/v1/knowledge/lookup", `{"question":"`+q+`"}`, reader, nil))
	resp, tr := call(t, h, event("GET", "/api/v1/knowledge/invocations/"+body["invocation_id"].(string), "", reader, nil))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, k := range []string{"invocation_id", "tool", "created_at", "actor_id", "question_sha256", "question_chars", "language", "retrieval_details"} {
		if _, ok := tr[k]; !ok {
			t.Errorf("trace lacks %q", k)
		}
	}
	if strings.Contains(resp.Body, "wallet in the car") {
		t.Error("the trace holds the question")
	}
	d := tr["retrieval_details"].(map[string]any)
	for _, k := range []string{"layer", "l0", "l1", "candidate_count", "final_block_count", "evidence_summaries", "sidecar", "latency_ms"} {
		if _, ok := d[k]; !ok {
			t.Errorf("retrieval_details lacks %q", k)
		}
	}
}

func TestLocalHeadersAuth(t *testing.T) {
	h, _ := newHandler(t, api.AuthLocalHeaders)
	resp, _ := call(t, h, event("GET", "/api/v1/knowledge/health", "", nil, map[string]string{"x-actor-id": "dev", "x-actor-scope": "knowledge:read"}))
	if resp.StatusCode != 200 {
		t.Fatalf("local headers refused: %d %s", resp.StatusCode, resp.Body)
	}
	// In local-headers mode JWT claims are not an actor, and in jwt mode headers are not.
	if resp, _ := call(t, h, event("GET", "/api/v1/knowledge/status", "", reader, nil)); resp.StatusCode != 401 {
		t.Errorf("claims accepted in local-headers mode: %d", resp.StatusCode)
	}
	jwt, _ := newHandler(t, api.AuthJWT)
	if resp, _ := call(t, jwt, event("GET", "/api/v1/knowledge/status", "", nil, map[string]string{"x-actor-id": "dev", "x-actor-scope": "knowledge:admin"})); resp.StatusCode != 401 {
		t.Errorf("headers accepted in jwt mode: %d", resp.StatusCode)
	}
	// On the public GET /health they are no credentials either: the status alone.
	for name, resp := range map[string]events.APIGatewayV2HTTPResponse{
		"claims in local-headers mode": first(call(t, h, event("GET", "/api/v1/knowledge/health", "", reader, nil))),
		"headers in jwt mode": first(call(t, jwt, event("GET", "/api/v1/knowledge/health", "", nil,
			map[string]string{"x-actor-id": "dev", "x-actor-scope": "knowledge:read"}))),
	} {
		if resp.StatusCode != 200 || strings.Contains(resp.Body, "components") {
			t.Errorf("health with %s: %d %s", name, resp.StatusCode, resp.Body)
		}
	}
}

func first[A, B any](a A, _ B) A { return a }

// TestPublicHealth: GET /health without credentials (an uptime probe; deployed, every call, as
// the gateway serves the route without its authorizer) answers the status alone, with the code
// an authorised call gets; with credentials, knowledge:read sees the components and a token
// without it is refused. Among the routes, only GET /health answers without credentials.
func TestPublicHealth(t *testing.T) {
	for _, mode := range []api.AuthMode{api.AuthJWT, api.AuthLocalHeaders} {
		h, _ := newHandler(t, mode)
		anon := event("GET", "/api/v1/knowledge/health", "", nil, map[string]string{"authorization": "Bearer not-checked-here"})
		resp, body := call(t, h, anon)
		if resp.StatusCode != 200 || len(body) != 2 || body["status"] != "ok" || body["correlation_id"] == "" {
			t.Errorf("%s: health without credentials %d %s", mode, resp.StatusCode, resp.Body)
		}
		claims, headers := reader, map[string]string(nil)
		if mode == api.AuthLocalHeaders {
			claims, headers = nil, map[string]string{"x-actor-id": "agent-7", "x-actor-scope": "knowledge:read"}
		}
		if resp, body := call(t, h, event("GET", "/api/v1/knowledge/health", "", claims, headers)); resp.StatusCode != 200 || body["components"] == nil {
			t.Errorf("%s: health with knowledge:read %d %s", mode, resp.StatusCode, resp.Body)
		}
		if !slices.Equal(h.PublicRoutes(), []string{"GET /api/v1/knowledge/health"}) {
			t.Errorf("public routes %v", h.PublicRoutes())
		}
	}
	h, _ := newHandler(t, api.AuthJWT)
	for claims, want := range map[string]int{"knowledge:sync": 403, "": 403} {
		if resp, _ := call(t, h, event("GET", "/api/v1/knowledge/health", "", map[string]string{"sub": "ops-1", "scope": claims}, nil)); resp.StatusCode != want {
			t.Errorf("health with scope %q: %d, want %d", claims, resp.StatusCode, want)
		}
	}
	if resp, _ := call(t, h, event("GET", "/api/v1/knowledge/health", "", map[string]string{"scope": "knowledge:read"}, nil)); resp.StatusCode != 401 {
		t.Errorf("health with claims but no subject: %d, want 401", resp.StatusCode)
	}
	// The provider needs an actor on every call: an uncredentialed check names itself.
	a, fake := ragcoreApp(t)
	resp, body := call(t, a.Handler, event("GET", "/api/v1/knowledge/health", "", nil, nil))
	probes := fake.Requests()
	if resp.StatusCode != 200 || body["status"] != "ok" || len(probes) != 1 || probes[0].Path != "/v1/health" ||
		probes[0].ActorID != api.HealthProbeActorID || probes[0].ActorScope != api.ScopeRead {
		t.Errorf("health without credentials on RAGcore: %d %v, RAGcore asked %+v", resp.StatusCode, body, probes)
	}
	// Every other route still needs credentials.
	for _, r := range h.Routes() {
		method, path, _ := strings.Cut(r, " ")
		if r == "GET /api/v1/knowledge/health" {
			continue
		}
		path = strings.Replace(path, "{}", "ABC", 1)
		if resp, _ := call(t, h, event(method, path, `{}`, nil, nil)); resp.StatusCode != 401 {
			t.Errorf("%s without credentials: %d", r, resp.StatusCode)
		}
	}
}

func TestHealth(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	resp, body := call(t, h, event("GET", "/api/v1/knowledge/health", "", reader, nil))
	if resp.StatusCode != 200 || body["status"] != "ok" || body["provider"] != "demo" {
		t.Fatalf("health %d %v", resp.StatusCode, body)
	}
	if sc := body["sidecar"].(map[string]any); sc["enabled"] != false || sc["status"] != "disabled" {
		t.Errorf("sidecar %v", sc)
	}
	if c, _ := body["components"].(map[string]any); c["provider"] != "ok" || c["store"] != "ok" || body["correlation_id"] == "" {
		t.Errorf("components %v", body)
	}
}

func TestAsk(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	resp, body := call(t, h, event("POST", "/api/v1/knowledge/ask", `{"question":"Wie schnell muss ein SEV1-Vorfall bestätigt werden?","language":"de"}`, reader, nil))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Body)
	}
	for _, k := range []string{"answer", "evidence_state", "sources", "provider", "invocation_id", "language", "language_detected"} {
		if _, ok := body[k]; !ok {
			t.Errorf("ask response lacks %q", k)
		}
	}
	src := body["sources"].([]any)
	if len(src) == 0 {
		t.Fatal("no sources")
	}
	for _, k := range []string{"document_id", "title", "version", "section", "excerpt"} {
		if _, ok := src[0].(map[string]any)[k]; !ok {
			t.Errorf("source lacks %q", k)
		}
	}
}

func TestBase64BodyAndNamedStage(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	ev := event("POST", "/prod/api/v1/knowledge/lookup", base64.StdEncoding.EncodeToString([]byte(`{"question":"flat tyre"}`)), reader, map[string]string{"content-type": "application/json"})
	ev.IsBase64Encoded = true
	ev.RequestContext.Stage = "prod"
	if resp, _ := call(t, h, ev); resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Body)
	}
}

// TestSampleEvents feeds events/*.json, the payloads for `sam local invoke -e`, to the handler.
func TestSampleEvents(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	want := map[string]int{"lookup.json": 200, "lookup-de.json": 200, "lookup-out-of-domain.json": 200, "ask.json": 200,
		"health.json": 200, "lookup-invalid.json": 400, "lookup-no-scope.json": 403, "status.json": 200, "status-de.json": 200,
		"status-bad-language.json": 400, "sync.json": 200, "sync-no-scope.json": 403, "sync-report.json": 202,
		"sync-report-invalid.json": 400, "invocation.json": 404, "status-scope-array.json": 200, "sync-scp-array.json": 200}
	files, _ := filepath.Glob("../../events/*.json")
	if len(files) < len(want) {
		t.Fatalf("found %d sample events", len(files))
	}
	for _, f := range files {
		status, ok := want[filepath.Base(f)]
		if !ok {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		resp, body := call(t, h, ev)
		if resp.StatusCode != status {
			t.Errorf("%s: status %d, want %d: %s", f, resp.StatusCode, status, resp.Body)
		}
		if filepath.Base(f) == "lookup-out-of-domain.json" && body["evidence_state"] != "insufficient" {
			t.Errorf("out-of-domain sample: %v", body["evidence_state"])
		}
	}
}

// awsJWTPayload is the JWT-authorizer payload that ships with aws-lambda-go (in the module cache).
func awsJWTPayload(t *testing.T) []byte {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
	if err != nil {
		t.Fatalf("locate aws-lambda-go: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "events", "testdata", "apigw-v2-request-jwt-authorizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestAWSSamplePayload feeds the JWT-authorizer payload that ships with aws-lambda-go, pointed at
// this API, to the handler.
func TestAWSSamplePayload(t *testing.T) {
	raw := awsJWTPayload(t)
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	// As delivered, the payload has no subject claim and a JSON-less body on an unknown path.
	if resp, _ := call(t, h(t), ev); resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	ev.RawPath = "/api/v1/knowledge/lookup"
	ev.RequestContext.HTTP.Method = "POST"
	if resp, _ := call(t, h(t), ev); resp.StatusCode != 401 {
		t.Errorf("no subject claim: %d", resp.StatusCode)
	}
	ev.RequestContext.Authorizer.JWT.Claims["sub"] = "agent-7"
	ev.RequestContext.Authorizer.JWT.Scopes = []string{"knowledge:read"}
	if resp, _ := call(t, h(t), ev); resp.StatusCode != 415 {
		t.Errorf("no content type: %d", resp.StatusCode)
	}
	ev.Headers["content-type"] = "application/json"
	resp, body := call(t, h(t), ev)
	if resp.StatusCode != 400 || body["error"].(map[string]any)["field"] != "a" { // a member /lookup does not define
		t.Errorf(`body {"a": 1}: %d %s`, resp.StatusCode, resp.Body)
	}
}

func h(t *testing.T) *api.Handler {
	hd, _ := newHandler(t, api.AuthJWT)
	return hd
}

// TestEveryAWSHTTPAPISample feeds each API Gateway HTTP API (2.0) payload that ships with
// aws-lambda-go, raw, through the sync function's entry point (which must recognise them as API
// events, not schedules), then retargeted at GET /status: only the JWT authorizer's payload
// carries an actor; the others (IAM, Lambda authorizer, none) are refused with 401.
func TestEveryAWSHTTPAPISample(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
	if err != nil {
		t.Fatalf("locate aws-lambda-go: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "events", "testdata", "apigw-v2-request-*.json"))
	if len(files) < 4 {
		t.Fatalf("found %d samples", len(files))
	}
	hd := h(t)
	entry := hd.LambdaWithSchedule(func(context.Context, string) (any, error) {
		t.Error("an API payload was taken for a schedule")
		return nil, nil
	})
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := entry(context.Background(), raw)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		if r, ok := res.(events.APIGatewayV2HTTPResponse); !ok || r.StatusCode != 404 {
			t.Errorf("%s as delivered: %+v", filepath.Base(f), res)
		}
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		ev.RawPath, ev.RequestContext.HTTP.Method, ev.Body = "/api/v1/knowledge/status", "GET", ""
		// The samples' query strings (parameter1, parameter2) are no parameters of /status,
		// which refuses them (TestStatusRefusesWhatItDoesNotDefine).
		ev.RawQueryString, ev.QueryStringParameters = "", nil
		want := 401
		if a := ev.RequestContext.Authorizer; a != nil && a.JWT != nil {
			a.JWT.Claims["sub"], a.JWT.Scopes = "console-1", []string{"knowledge:read"}
			want = 200
		}
		if resp, body := call(t, hd, ev); resp.StatusCode != want {
			t.Errorf("%s at /status: %d, want %d: %v", filepath.Base(f), resp.StatusCode, want, body)
		}
	}
	if _, err := entry(context.Background(), []byte(`{"source":"aws.s3","detail-type":"Object Created"}`)); err == nil {
		t.Error("an unknown event was accepted")
	}
}

// TestPreflightNeedsNoToken: a browser's CORS preflight carries no token; OPTIONS on a known path
// answers with its methods, on an unknown one 404, and nothing is served. (Deployed, OPTIONS
// never reaches the handler: the gateway answers it; this is the local API's answer.)
func TestPreflightNeedsNoToken(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	resp, body := call(t, h, event("OPTIONS", "/api/v1/knowledge/lookup", "", nil, nil))
	if resp.StatusCode != 200 || resp.Headers["Allow"] != "POST, OPTIONS" || body["correlation_id"] == "" || resp.Headers["X-Correlation-Id"] == "" {
		t.Fatalf("preflight %d %v %v", resp.StatusCode, resp.Headers, body)
	}
	if resp, _ := call(t, h, event("OPTIONS", "/api/v1/knowledge/invocations/ABC", "", nil, nil)); resp.StatusCode != 200 || resp.Headers["Allow"] != "GET, OPTIONS" {
		t.Fatalf("preflight of an invocation %d %v", resp.StatusCode, resp.Headers)
	}
	if resp, _ := call(t, h, event("OPTIONS", "/api/v1/knowledge/nothing-here", "", nil, nil)); resp.StatusCode != 404 {
		t.Fatalf("preflight of an unknown path: %d", resp.StatusCode)
	}
}

// TestEntryOfEachFunction: the scheduled function's entry point runs Services.Schedule for the
// schedule's events and serves its routes for API events; the other functions' entry points take
// API events alone (Handler.Lambda), and a scheduled function built without the schedule's work
// fails its scheduled events instead of answering them.
func TestEntryOfEachFunction(t *testing.T) {
	s, log, logs := newServices(t)
	ran := ""
	s.Schedule = func(_ context.Context, id string) (any, error) { ran = id; return "done", nil }
	schedule := []byte(`{"version":"0","id":"ev-1","source":"aws.events","detail-type":"Scheduled Event"}`)
	entry, ok := api.NewFunction(api.FunctionSync, s, api.AuthJWT, log).Entry().(func(context.Context, json.RawMessage) (any, error))
	if !ok {
		t.Fatal("the sync function's entry point takes no raw event")
	}
	if res, err := entry(context.Background(), schedule); err != nil || res != "done" || ran != "ev-1" {
		t.Errorf("scheduled event: %v %v, ran %q", res, err, ran)
	}
	for _, f := range []api.Function{api.FunctionLookup, api.FunctionStatus} {
		if _, ok := api.NewFunction(f, s, api.AuthJWT, log).Entry().(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)); !ok {
			t.Errorf("%s: the entry point is not the API Gateway handler", f)
		}
	}
	s.Schedule = nil
	entry = api.NewFunction(api.FunctionSync, s, api.AuthJWT, log).Entry().(func(context.Context, json.RawMessage) (any, error))
	if _, err := entry(context.Background(), schedule); err == nil {
		t.Error("a scheduled event without work succeeded")
	}
	if !strings.Contains(logs.String(), "a scheduled function has no schedule's work") {
		t.Error("the missing work was not logged at start")
	}
}
