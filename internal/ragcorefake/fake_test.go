package ragcorefake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

const testToken = "test-token-3f9a"

var embeddedCorpus = sync.OnceValues(knowledge.Embedded)

func corpus(t testing.TB) *knowledge.Corpus {
	t.Helper()
	c, err := embeddedCorpus()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newFake starts the fake behind a loopback httptest server.
func newFake(t *testing.T, o Options) (*Server, *httptest.Server) {
	t.Helper()
	if o.Token == "" {
		o.Token = testToken
	}
	s := New(o)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// call is one request. body is sent as is when it is a string, JSON-encoded otherwise. header
// overrides the defaults a well-behaved client sends; an empty value removes the header.
type call struct {
	method, path string
	body         any
	header       map[string]string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (c call) build(t *testing.T, ctx context.Context, base string) *http.Request {
	t.Helper()
	var body io.Reader
	switch b := c.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]string{
		"Authorization":       "Bearer " + testToken,
		"X-RAGcore-Tenant":    config.DefaultTenant,
		"X-RAGcore-Workspace": config.DefaultWorkspace,
		"X-Actor-Id":          "agent-7",
		"X-Actor-Scope":       "fleet-ops:read",
		"X-Correlation-Id":    "corr-1",
	}
	if c.body != nil {
		h["Content-Type"] = "application/json"
	}
	maps.Copy(h, c.header)
	for k, v := range h {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	return req
}

func send(t *testing.T, ts *httptest.Server, c call) reply {
	t.Helper()
	resp, err := ts.Client().Do(c.build(t, t.Context(), ts.URL))
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", c.method, c.path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

// wantError checks the contract's error shape, exactly {"error":{"code","message"}}.
func wantError(t *testing.T, r reply, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e map[string]map[string]any
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	if len(e) != 1 || len(e["error"]) != 2 {
		t.Fatalf("error body %s, want exactly {\"error\":{\"code\",\"message\"}}", r.body)
	}
	if got, _ := e["error"]["code"].(string); got != code {
		t.Errorf("code %q, want %q", got, code)
	}
	if msg, _ := e["error"]["message"].(string); msg == "" {
		t.Errorf("empty message in %s", r.body)
	}
}

func retrieveBody(query string, topK int) map[string]any {
	return map[string]any{"collection": config.DefaultCollection, "query": query, "language": "en", "top_k": topK}
}

func answerBody(question string) map[string]any {
	return map[string]any{"collection": config.DefaultCollection, "question": question, "language": "en"}
}

const testMarkdown = `---
id: test-proc
title: Test procedure
frontmatterword: yes
---
# Test procedure

Intro text nobody retrieves.

## 1. Scope

Zebra crossings are covered here.

## 2. Steps

Quokka steps follow.
`

func uploadBody(content, version string) map[string]any {
	return map[string]any{
		"collection":   config.DefaultCollection,
		"content":      content,
		"content_type": "text/markdown",
		"metadata": map[string]any{
			"title": "Test procedure", "version": version, "effective_date": "2026-03-01",
			"language": "en", "category": "testing",
		},
	}
}

const uploadPath = "/v1/sources/mobilityops-procedures-en/documents/test-proc"

func TestEveryRequestIsChecked(t *testing.T) {
	t.Parallel()
	_, ts := newFake(t, Options{})
	retrieve := retrieveBody("damage", 3)
	tests := []struct {
		name   string
		call   call
		status int
		code   string
	}{
		{"no token", call{"GET", "/v1/health", nil, map[string]string{"Authorization": ""}}, 401, "unauthorized"},
		{"wrong token", call{"GET", "/v1/health", nil, map[string]string{"Authorization": "Bearer nope"}}, 401, "unauthorized"},
		{"lower-case scheme", call{"GET", "/v1/health", nil, map[string]string{"Authorization": "bearer " + testToken}}, 401, "unauthorized"},
		{"token without scheme", call{"GET", "/v1/health", nil, map[string]string{"Authorization": testToken}}, 401, "unauthorized"},
		{"401 before 404", call{"GET", "/v1/nope", nil, map[string]string{"Authorization": ""}}, 401, "unauthorized"},
		{"no tenant", call{"GET", "/v1/health", nil, map[string]string{"X-RAGcore-Tenant": ""}}, 400, "missing_header"},
		{"no workspace", call{"POST", "/v1/retrieve", retrieve, map[string]string{"X-RAGcore-Workspace": ""}}, 400, "missing_header"},
		{"no actor id", call{"GET", "/v1/documents?source_id=a&external_id=b", nil, map[string]string{"X-Actor-Id": ""}}, 400, "missing_header"},
		{"blank actor scope", call{"POST", "/v1/answer", answerBody("x"), map[string]string{"X-Actor-Scope": "  "}}, 400, "missing_header"},
		{"no correlation id", call{"PUT", uploadPath, uploadBody(testMarkdown, "1"), map[string]string{"X-Correlation-Id": ""}}, 400, "missing_header"},
		{"other tenant", call{"GET", "/v1/health", nil, map[string]string{"X-RAGcore-Tenant": "acme"}}, 403, "forbidden"},
		{"other workspace", call{"POST", "/v1/retrieve", retrieve, map[string]string{"X-RAGcore-Workspace": "billing"}}, 403, "forbidden"},
		{"unknown path", call{"GET", "/v1/nope", nil, nil}, 404, "not_found"},
		{"trailing slash", call{"GET", "/v1/health/", nil, nil}, 404, "not_found"},
		{"source without document", call{"PUT", "/v1/sources/s/documents", uploadBody(testMarkdown, "1"), nil}, 404, "not_found"},
		{"source path too deep", call{"PUT", "/v1/sources/s/documents/a/b", uploadBody(testMarkdown, "1"), nil}, 404, "not_found"},
		{"GET retrieve", call{"GET", "/v1/retrieve", nil, nil}, 404, "not_found"},
		{"POST health", call{"POST", "/v1/health", map[string]any{}, nil}, 404, "not_found"},
		{"POST upload", call{"POST", uploadPath, uploadBody(testMarkdown, "1"), nil}, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := send(t, ts, tt.call)
			wantError(t, r, tt.status, tt.code)
			if r.status == 405 {
				t.Error("405 is not a status of the contract")
			}
		})
	}
}

func TestEmptyTokenRejectsEverything(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(New(Options{}))
	t.Cleanup(ts.Close)
	r := send(t, ts, call{"GET", "/v1/health", nil, map[string]string{"Authorization": "Bearer "}})
	wantError(t, r, 401, "unauthorized")
}

func TestRequestBodiesAreValidated(t *testing.T) {
	t.Parallel()
	_, ts := newFake(t, Options{PublishUploads: true})
	with := func(base map[string]any, key string, v any) map[string]any {
		m := maps.Clone(base)
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
		return m
	}
	withMeta := func(key string, v any) map[string]any {
		b := uploadBody(testMarkdown, "1")
		meta := maps.Clone(b["metadata"].(map[string]any))
		if v == nil {
			delete(meta, key)
		} else {
			meta[key] = v
		}
		b["metadata"] = meta
		return b
	}
	r := retrieveBody("damage", 5)
	a := answerBody("damage")
	tests := []struct {
		name   string
		call   call
		status int
	}{
		{"retrieve ok", call{"POST", "/v1/retrieve", r, nil}, 200},
		{"charset is fine", call{"POST", "/v1/retrieve", r, map[string]string{"Content-Type": "application/json; charset=utf-8"}}, 200},
		{"no content type", call{"POST", "/v1/retrieve", r, map[string]string{"Content-Type": ""}}, 400},
		{"text/plain", call{"POST", "/v1/answer", a, map[string]string{"Content-Type": "text/plain"}}, 400},
		{"upload as markdown", call{"PUT", uploadPath, uploadBody(testMarkdown, "1"), map[string]string{"Content-Type": "text/markdown"}}, 400},
		{"not JSON", call{"POST", "/v1/retrieve", "collection=internal-procedures", nil}, 400},
		{"empty body", call{"POST", "/v1/retrieve", "", map[string]string{"Content-Type": "application/json"}}, 400},
		{"JSON array", call{"POST", "/v1/retrieve", "[]", nil}, 400},
		{"JSON null", call{"POST", "/v1/retrieve", "null", nil}, 400},
		{"trailing data", call{"POST", "/v1/retrieve", `{"collection":"c","query":"q","language":"en","top_k":1} {}`, nil}, 400},
		{"unknown field", call{"POST", "/v1/retrieve", with(r, "debug", true), nil}, 400},
		{"field name case", call{"POST", "/v1/retrieve", with(with(r, "query", nil), "Query", "damage"), nil}, 400},
		{"missing collection", call{"POST", "/v1/retrieve", with(r, "collection", nil), nil}, 400},
		{"blank query", call{"POST", "/v1/retrieve", with(r, "query", "  "), nil}, 400},
		{"query not a string", call{"POST", "/v1/retrieve", with(r, "query", 5), nil}, 400},
		{"missing language", call{"POST", "/v1/retrieve", with(r, "language", nil), nil}, 400},
		{"missing top_k", call{"POST", "/v1/retrieve", with(r, "top_k", nil), nil}, 400},
		{"top_k 0", call{"POST", "/v1/retrieve", with(r, "top_k", 0), nil}, 400},
		{"top_k 1", call{"POST", "/v1/retrieve", with(r, "top_k", 1), nil}, 200},
		{"top_k 100", call{"POST", "/v1/retrieve", with(r, "top_k", 100), nil}, 200},
		{"top_k 101", call{"POST", "/v1/retrieve", with(r, "top_k", 101), nil}, 400},
		{"top_k fraction", call{"POST", "/v1/retrieve", with(r, "top_k", 2.5), nil}, 400},
		{"top_k string", call{"POST", "/v1/retrieve", with(r, "top_k", "5"), nil}, 400},
		{"top_k float literal", call{"POST", "/v1/retrieve", `{"collection":"c","query":"q","language":"en","top_k":5.0}`, nil}, 400},
		{"filters null", call{"POST", "/v1/retrieve", with(r, "filters", json.RawMessage("null")), nil}, 200},
		{"filters empty", call{"POST", "/v1/retrieve", with(r, "filters", map[string]any{}), nil}, 200},
		{"filters category", call{"POST", "/v1/retrieve", with(r, "filters", map[string]any{"category": "damage"}), nil}, 200},
		{"filters blank category", call{"POST", "/v1/retrieve", with(r, "filters", map[string]any{"category": ""}), nil}, 400},
		{"filters unknown key", call{"POST", "/v1/retrieve", with(r, "filters", map[string]any{"language": "en"}), nil}, 400},
		{"filters not an object", call{"POST", "/v1/retrieve", with(r, "filters", "damage"), nil}, 400},
		{"answer ok", call{"POST", "/v1/answer", a, nil}, 200},
		{"answer with query instead of question", call{"POST", "/v1/answer", with(with(a, "question", nil), "query", "damage"), nil}, 400},
		{"answer with top_k", call{"POST", "/v1/answer", with(a, "top_k", 3), nil}, 400},
		{"answer blank question", call{"POST", "/v1/answer", with(a, "question", ""), nil}, 400},
		{"upload missing collection", call{"PUT", uploadPath, with(uploadBody(testMarkdown, "1"), "collection", nil), nil}, 400},
		{"upload empty content", call{"PUT", uploadPath, with(uploadBody(testMarkdown, "1"), "content", ""), nil}, 400},
		{"upload wrong content_type", call{"PUT", uploadPath, with(uploadBody(testMarkdown, "1"), "content_type", "text/plain"), nil}, 400},
		{"upload missing metadata", call{"PUT", uploadPath, with(uploadBody(testMarkdown, "1"), "metadata", nil), nil}, 400},
		{"upload missing title", call{"PUT", uploadPath, withMeta("title", nil), nil}, 400},
		{"upload missing version", call{"PUT", uploadPath, withMeta("version", nil), nil}, 400},
		{"upload numeric version", call{"PUT", uploadPath, withMeta("version", 1.3), nil}, 400},
		{"upload bad date", call{"PUT", uploadPath, withMeta("effective_date", "March 2026"), nil}, 400},
		{"upload missing language", call{"PUT", uploadPath, withMeta("language", nil), nil}, 400},
		{"upload missing category", call{"PUT", uploadPath, withMeta("category", nil), nil}, 400},
		{"upload unknown metadata", call{"PUT", uploadPath, withMeta("owner", "fleet"), nil}, 400},
		{"upload ok", call{"PUT", uploadPath, uploadBody(testMarkdown, "1"), nil}, 202},
		{"lookup without external_id", call{"GET", "/v1/documents?source_id=a", nil, nil}, 400},
		{"lookup without source_id", call{"GET", "/v1/documents?external_id=a", nil, nil}, 400},
		{"lookup without parameters", call{"GET", "/v1/documents", nil, nil}, 400},
		{"body over 1 MiB", call{"POST", "/v1/retrieve", with(r, "query", strings.Repeat("a", maxBodyBytes)), nil}, 400},
		{"upload over 1 MiB", call{"PUT", uploadPath, uploadBody(strings.Repeat("b", maxBodyBytes), "2"), nil}, 400},
	}
	// The contract has no 413 or 415: those cases are 400s with their own codes.
	codeOf := func(name string) string {
		switch {
		case strings.Contains(name, "1 MiB"):
			return "payload_too_large"
		case name == "no content type" || name == "text/plain" || name == "upload as markdown":
			return "unsupported_media_type"
		}
		return "invalid_request"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := send(t, ts, tt.call)
			if tt.status < 300 {
				if got.status != tt.status {
					t.Fatalf("status %d, want %d; body %s", got.status, tt.status, got.body)
				}
				return
			}
			wantError(t, got, tt.status, codeOf(tt.name))
		})
	}
}

// contractKeys are the field names of each JSON object the contract defines.
var contractKeys = map[string][]string{
	"health":         {"status"},
	"documents":      {"documents"},
	"document":       {"active_version", "collection", "document_id", "external_id", "metadata", "source_id", "status", "tenant", "workspace"},
	"active_version": {"content_sha256", "published_at", "status", "version"},
	"metadata":       {"category", "effective_date", "language"},
	"retrieve":       {"candidates", "score_semantics"},
	"candidate":      {"breadcrumb", "category", "content", "document_id", "external_id", "rank", "score", "section", "source_id", "title", "version"},
	"answer":         {"answer", "citations", "evidence_state"},
	"citation":       {"excerpt", "external_id", "section", "source_id", "title", "version"},
	"upload":         {"document_id", "status", "version"},
}

func wantKeys(t *testing.T, what string, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, want an object", what, v)
	}
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, contractKeys[what]) {
		t.Fatalf("%s has keys %v, want %v", what, got, contractKeys[what])
	}
	return m
}

func TestResponsesHaveTheContractsFieldNames(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{PublishUploads: true})
	s.LoadCorpus(corpus(t), "mobilityops-procedures")

	wantKeys(t, "health", decode[any](t, send(t, ts, call{"GET", "/v1/health", nil, nil})))

	docs := wantKeys(t, "documents", decode[any](t, send(t, ts, call{"GET", "/v1/documents?source_id=mobilityops-procedures-en&external_id=damage-procedure", nil, nil})))
	doc := wantKeys(t, "document", docs["documents"].([]any)[0])
	wantKeys(t, "active_version", doc["active_version"])
	wantKeys(t, "metadata", doc["metadata"])

	ret := wantKeys(t, "retrieve", decode[any](t, send(t, ts, call{"POST", "/v1/retrieve", retrieveBody("damage photos windscreen", 3), nil})))
	if ret["score_semantics"] != "cosine_similarity" {
		t.Errorf("score_semantics %v", ret["score_semantics"])
	}
	cands := ret["candidates"].([]any)
	if len(cands) != 3 {
		t.Fatalf("%d candidates, want 3", len(cands))
	}
	wantKeys(t, "candidate", cands[0])

	ans := wantKeys(t, "answer", decode[any](t, send(t, ts, call{"POST", "/v1/answer", answerBody("How do I report damage to a vehicle windscreen?"), nil})))
	if ans["evidence_state"] != "grounded" {
		t.Fatalf("evidence_state %v", ans["evidence_state"])
	}
	wantKeys(t, "citation", ans["citations"].([]any)[0])

	wantKeys(t, "upload", decode[any](t, send(t, ts, call{"PUT", uploadPath, uploadBody(testMarkdown, "1"), nil})))
}

// passage builds a test passage whose only scored text is content.
func passage(source, external, section, content string) Passage {
	return Passage{
		SourceID: source, ExternalID: external, DocumentID: "rc-" + external, Version: "1",
		Section: section, Category: "damage", Language: "en", Content: content,
	}
}

// candidateMembers are a retrieve candidate's members in the contract, sorted.
var candidateMembers = []string{"breadcrumb", "category", "content", "document_id", "external_id", "rank", "score",
	"section", "source_id", "title", "version"}

func TestRetrieveScoresFiltersAndOrders(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{})
	// Sections are "§" and "§§": no words, so only the content is scored.
	fuel := passage("s-0", "e9", "§", "damage damage damage")
	fuel.Category = "fuel"
	german := passage("s-a", "e6", "§", "damage")
	german.Language = "de"
	otherCollection := passage("s-a", "e7", "§", "damage")
	otherCollection.Collection = "other-collection"
	otherTenant := passage("s-a", "e8", "§", "damage")
	otherTenant.Tenant = "acme"
	for _, p := range []Passage{
		passage("s-b", "e3", "§", "damage photo"),  // 1/√2, last of the ties by source_id
		passage("s-a", "e2", "§§", "damage photo"), // 1/√2, after section "§" of the same document
		passage("s-a", "e1", "§", "damage, DAMAGE"),
		passage("s-a", "e2", "§", "photo damage"), // 1/√2
		passage("s-a", "e5", "§", "photo only"),   // 0: never a candidate
		fuel, german, otherCollection, otherTenant,
	} {
		s.AddPassage(p)
	}

	type want struct {
		external, section string
		score             float64
	}
	tests := []struct {
		name     string
		query    string
		topK     int
		category string
		want     []want
	}{
		{"all", "Damage!", 10, "", []want{{"e9", "§", 1}, {"e1", "§", 1}, {"e2", "§", 0.7071}, {"e2", "§§", 0.7071}, {"e3", "§", 0.7071}}},
		{"category", "damage", 10, "damage", []want{{"e1", "§", 1}, {"e2", "§", 0.7071}, {"e2", "§§", 0.7071}, {"e3", "§", 0.7071}}},
		{"top_k", "damage", 2, "damage", []want{{"e1", "§", 1}, {"e2", "§", 0.7071}}},
		{"rounded", "damage zzz qqq", 1, "fuel", []want{{"e9", "§", 0.5774}}},
		{"no match", "weather", 10, "", nil},
		{"unknown category", "damage", 10, "tyres", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := retrieveBody(tt.query, tt.topK)
			if tt.category != "" {
				body["filters"] = map[string]any{"category": tt.category}
			}
			r := send(t, ts, call{"POST", "/v1/retrieve", body, nil})
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if !bytes.Contains(r.body, []byte(`"candidates":[`)) {
				t.Errorf("candidates is not a list: %s", r.body)
			}
			got := decode[retrieveResponse](t, r).Candidates
			if len(got) > 0 {
				// A candidate has exactly the contract's members.
				members := decode[struct{ Candidates []map[string]any }](t, r).Candidates[0]
				if keys := slices.Sorted(maps.Keys(members)); !slices.Equal(keys, candidateMembers) {
					t.Errorf("candidate members %v, want %v", keys, candidateMembers)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d candidates, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, c := range got {
				w := tt.want[i]
				if c.ExternalID != w.external || c.Section != w.section || c.Score != w.score || c.Rank != i+1 {
					t.Errorf("candidate %d = %s §%s score %v rank %d, want %s §%s score %v rank %d",
						i, c.ExternalID, c.Section, c.Score, c.Rank, w.external, w.section, w.score, i+1)
				}
			}
		})
	}
}

func TestRetrieveScoresTitleSectionAndUnicodeWords(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{})
	s.AddPassage(Passage{SourceID: "s", ExternalID: "titled", Title: "Unfallmeldung", Section: "2. Sofortmaßnahmen", Language: "de", Content: "Schäden am Fahrzeug"})
	tests := []struct {
		query string
		score float64
	}{
		{"SCHÄDEN", 0.4082},         // 1 of 6 words: 1/√6
		{"sofortmaßnahmen", 0.4082}, // the section heading counts
		{"unfallmeldung", 0.4082},   // so does the title
		{"schäden-fahrzeug", 0.5774},
		{"schaden", 0}, // no stemming: a different word
	}
	for _, tt := range tests {
		body := retrieveBody(tt.query, 5)
		body["language"] = "de"
		got := decode[retrieveResponse](t, send(t, ts, call{"POST", "/v1/retrieve", body, nil})).Candidates
		var score float64
		if len(got) > 0 {
			score = got[0].Score
		}
		if score != tt.score {
			t.Errorf("query %q: score %v, want %v", tt.query, score, tt.score)
		}
	}
}

type answerJSON struct {
	Answer        string         `json:"answer"`
	EvidenceState string         `json:"evidence_state"`
	Citations     []citationJSON `json:"citations"`
}

type citationJSON struct {
	SourceID   string `json:"source_id"`
	ExternalID string `json:"external_id"`
	Title      string `json:"title"`
	Version    string `json:"version"`
	Section    string `json:"section"`
	Excerpt    string `json:"excerpt"`
}

func TestAnswerGroundedOrInsufficient(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{})
	best := Passage{
		SourceID: "mobilityops-procedures-en", ExternalID: "damage-procedure", Version: "1.3",
		Title: "Damage handling procedure", Section: "2. Immediate actions", Language: "en",
		Content: "When damage is reported, act at once. Then block the vehicle.\nSecond line.",
	}
	long := Passage{
		SourceID: "someone-elses-source", ExternalID: "foreign", Version: "9", Title: "Foreign",
		Section: "1. Damage", Language: "en", Content: "damage " + strings.Repeat("ä", 400),
	}
	s.AddPassage(best)
	s.AddPassage(long)
	for i := range 3 {
		s.AddPassage(Passage{SourceID: "s", ExternalID: "filler-" + strconv.Itoa(i), Title: "Filler", Language: "en", Content: "damage and many other words here " + strings.Repeat("x ", i+1)})
	}
	// 25 distinct words, one of them in the passage: exactly 1/5 = 0.2; 26 words: 0.1961.
	vocab := make([]string, 26)
	for i := range vocab {
		vocab[i] = "w" + strconv.Itoa(i)
	}
	s.AddPassage(Passage{SourceID: "s", ExternalID: "threshold", Title: "", Language: "en", Content: "w0"})

	t.Run("grounded", func(t *testing.T) {
		t.Parallel()
		a := decode[answerJSON](t, send(t, ts, call{"POST", "/v1/answer", answerBody("damage reported act"), nil}))
		if a.EvidenceState != "grounded" {
			t.Fatalf("evidence_state %q", a.EvidenceState)
		}
		for _, part := range []string{best.Title, best.Section, "When damage is reported, act at once."} {
			if !strings.Contains(a.Answer, part) {
				t.Errorf("answer %q lacks %q", a.Answer, part)
			}
		}
		if strings.Contains(a.Answer, "block the vehicle") {
			t.Errorf("answer %q goes past the first sentence", a.Answer)
		}
		if len(a.Citations) != answerPassages {
			t.Fatalf("%d citations, want %d", len(a.Citations), answerPassages)
		}
		c := a.Citations[0]
		if c.SourceID != best.SourceID || c.ExternalID != best.ExternalID || c.Title != best.Title ||
			c.Version != best.Version || c.Section != best.Section || c.Excerpt != best.Content {
			t.Errorf("first citation %+v does not match the best passage", c)
		}
		i := slices.IndexFunc(a.Citations, func(c citationJSON) bool { return c.SourceID == long.SourceID })
		if i < 0 {
			t.Fatalf("the foreign source is not cited: %+v", a.Citations)
		}
		if ex := a.Citations[i].Excerpt; utf8.RuneCountInString(ex) != 300 || !utf8.ValidString(ex) || !strings.HasPrefix(long.Content, ex) {
			t.Errorf("excerpt has %d runes, want the first 300 of the content", utf8.RuneCountInString(ex))
		}
	})

	tests := []struct {
		name     string
		question string
		language string
		state    string
		answer   string
	}{
		{"score exactly 0.2", strings.Join(vocab[:25], " "), "en", "grounded", ""},
		{"score just below 0.2", strings.Join(vocab, " "), "en", "insufficient", "The indexed documents do not cover this question."},
		{"nothing matches", "weather forecast", "en", "insufficient", "The indexed documents do not cover this question."},
		{"nothing in that language", "damage", "de", "insufficient", "Die indexierten Dokumente decken diese Frage nicht ab."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := answerBody(tt.question)
			body["language"] = tt.language
			r := send(t, ts, call{"POST", "/v1/answer", body, nil})
			a := decode[answerJSON](t, r)
			if a.EvidenceState != tt.state {
				t.Fatalf("evidence_state %q, want %q (%s)", a.EvidenceState, tt.state, r.body)
			}
			if tt.state == "insufficient" {
				if a.Answer != tt.answer {
					t.Errorf("answer %q, want %q", a.Answer, tt.answer)
				}
				if !bytes.Contains(r.body, []byte(`"citations":[]`)) {
					t.Errorf("citations must be an empty list: %s", r.body)
				}
			}
		})
	}
}

func TestFirstSentence(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"One. Two.", "One."},
		{"Steps:\n\n1. Ask the customer.", "Steps:"},
		{"1. Ask the customer. Then wait.", "1. Ask the customer."},
		{"v1.3 is current", "v1.3 is current"},
		{"Ready? Go.", "Ready?"},
		{"  \n spaced out.  ", "spaced out."},
		{"", ""},
	}
	for _, tt := range tests {
		if got := firstSentence(tt.in); got != tt.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

type documentsJSON struct {
	Documents []struct {
		DocumentID    string `json:"document_id"`
		SourceID      string `json:"source_id"`
		ExternalID    string `json:"external_id"`
		Tenant        string `json:"tenant"`
		Workspace     string `json:"workspace"`
		Collection    string `json:"collection"`
		Status        string `json:"status"`
		ActiveVersion *struct {
			Version       string  `json:"version"`
			Status        string  `json:"status"`
			ContentSHA256 string  `json:"content_sha256"`
			PublishedAt   *string `json:"published_at"`
		} `json:"active_version"`
		Metadata struct {
			Language      string `json:"language"`
			Category      string `json:"category"`
			EffectiveDate string `json:"effective_date"`
		} `json:"metadata"`
	} `json:"documents"`
}

func lookup(t *testing.T, ts *httptest.Server, source, external string) (documentsJSON, []byte) {
	t.Helper()
	r := send(t, ts, call{"GET", "/v1/documents?source_id=" + source + "&external_id=" + external, nil, nil})
	if r.status != 200 {
		t.Fatalf("lookup: status %d: %s", r.status, r.body)
	}
	return decode[documentsJSON](t, r), r.body
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestUploadThenUnchangedThenRetrievable(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{PublishUploads: true})

	r := send(t, ts, call{"PUT", uploadPath, uploadBody(testMarkdown, "1.0"), nil})
	if r.status != 202 {
		t.Fatalf("first upload: status %d: %s", r.status, r.body)
	}
	first := decode[map[string]string](t, r)
	if first["status"] != "processing" || first["version"] != "1.0" || first["document_id"] == "" {
		t.Fatalf("first upload: %s", r.body)
	}

	docs, _ := lookup(t, ts, "mobilityops-procedures-en", "test-proc")
	if len(docs.Documents) != 1 {
		t.Fatalf("%d documents after upload", len(docs.Documents))
	}
	d := docs.Documents[0]
	if d.DocumentID != first["document_id"] || d.Status != StatusActive || d.Tenant != config.DefaultTenant ||
		d.Workspace != config.DefaultWorkspace || d.Collection != config.DefaultCollection ||
		d.Metadata.Language != "en" || d.Metadata.Category != "testing" || d.Metadata.EffectiveDate != "2026-03-01" {
		t.Errorf("document %+v", d)
	}
	v := d.ActiveVersion
	if v == nil || v.Version != "1.0" || v.Status != VersionPublished || v.PublishedAt == nil {
		t.Fatalf("active version %+v", v)
	}
	if _, err := time.Parse(time.RFC3339, *v.PublishedAt); err != nil {
		t.Errorf("published_at: %v", err)
	}
	if v.ContentSHA256 == sha(testMarkdown) || v.ContentSHA256 != sha("parsed:"+testMarkdown) {
		t.Errorf("content_sha256 %s must be the parsed artifact's hash, not the upload's", v.ContentSHA256)
	}

	r = send(t, ts, call{"PUT", uploadPath, uploadBody(testMarkdown, "1.0"), nil})
	if again := decode[map[string]string](t, r); r.status != 200 || again["status"] != "unchanged" || again["document_id"] != first["document_id"] {
		t.Fatalf("second upload: status %d: %s", r.status, r.body)
	}

	c := decode[retrieveResponse](t, send(t, ts, call{"POST", "/v1/retrieve", retrieveBody("zebra", 5), nil})).Candidates
	if len(c) != 1 || c[0].Section != "1. Scope" || !slices.Equal(c[0].Breadcrumb, []string{"Test procedure", "1. Scope"}) ||
		c[0].DocumentID != first["document_id"] || c[0].Version != "1.0" || c[0].Category != "testing" ||
		c[0].Content != "Zebra crossings are covered here." {
		t.Fatalf("candidates for an uploaded section: %+v", c)
	}
	for _, q := range []string{"frontmatterword", "intro nobody"} {
		if c := decode[retrieveResponse](t, send(t, ts, call{"POST", "/v1/retrieve", retrieveBody(q, 5), nil})).Candidates; len(c) != 0 {
			t.Errorf("%q is outside every section but was retrieved: %+v", q, c)
		}
	}

	// A new version replaces the old passages.
	changed := strings.Replace(testMarkdown, "Zebra crossings", "Pelican crossings", 1)
	r = send(t, ts, call{"PUT", uploadPath, uploadBody(changed, "1.1"), nil})
	if r.status != 202 || decode[map[string]string](t, r)["document_id"] != first["document_id"] {
		t.Fatalf("new version: status %d: %s", r.status, r.body)
	}
	if c := decode[retrieveResponse](t, send(t, ts, call{"POST", "/v1/retrieve", retrieveBody("zebra", 5), nil})).Candidates; len(c) != 0 {
		t.Errorf("old version still retrievable: %+v", c)
	}
	if c := decode[retrieveResponse](t, send(t, ts, call{"POST", "/v1/retrieve", retrieveBody("pelican", 5), nil})).Candidates; len(c) != 1 || c[0].Version != "1.1" {
		t.Errorf("new version not retrievable: %+v", c)
	}

	// An archived document is not "unchanged": the upload brings it back.
	s.SetDocumentStatus("mobilityops-procedures-en", "test-proc", StatusArchived)
	if r := send(t, ts, call{"PUT", uploadPath, uploadBody(changed, "1.1"), nil}); r.status != 202 {
		t.Errorf("upload over an archived document: status %d", r.status)
	}
	if docs, _ := lookup(t, ts, "mobilityops-procedures-en", "test-proc"); docs.Documents[0].Status != StatusActive {
		t.Errorf("status after re-upload %q", docs.Documents[0].Status)
	}
}

func TestUploadWithoutPublishingStaysProcessing(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{PublishUploads: false})
	for range 2 {
		if r := send(t, ts, call{"PUT", uploadPath, uploadBody(testMarkdown, "1.0"), nil}); r.status != 202 {
			t.Fatalf("upload of a version still processing: status %d: %s", r.status, r.body)
		}
	}
	docs, raw := lookup(t, ts, "mobilityops-procedures-en", "test-proc")
	if len(docs.Documents) != 1 || docs.Documents[0].ActiveVersion.Status != VersionProcessing {
		t.Fatalf("documents %s", raw)
	}
	if bytes.Contains(raw, []byte("published_at")) {
		t.Errorf("a processing version has published_at: %s", raw)
	}
	s.SetVersionStatus("mobilityops-procedures-en", "test-proc", VersionPublished)
	if r := send(t, ts, call{"PUT", uploadPath, uploadBody(testMarkdown, "1.0"), nil}); r.status != 200 {
		t.Errorf("upload after publishing: status %d, want 200 unchanged", r.status)
	}
}

func TestUploadOfACorpusFileMatchesLoadCorpus(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{PublishUploads: true})
	c := corpus(t)
	s.LoadCorpus(c, "mobilityops-procedures")
	kd := c.Document("en", "damage-procedure")
	before, _ := lookup(t, ts, "mobilityops-procedures-en", "damage-procedure")

	body := map[string]any{
		"collection": config.DefaultCollection, "content": string(kd.Raw), "content_type": "text/markdown",
		"metadata": map[string]any{
			"title": kd.Title, "version": kd.Version, "effective_date": kd.EffectiveDate,
			"language": kd.Language, "category": kd.Category,
		},
	}
	r := send(t, ts, call{"PUT", "/v1/sources/mobilityops-procedures-en/documents/damage-procedure", body, nil})
	if r.status != 200 || decode[map[string]string](t, r)["status"] != "unchanged" {
		t.Fatalf("upload of a preloaded version: status %d: %s", r.status, r.body)
	}
	if got := splitSections(string(kd.Raw)); len(got) != len(kd.Sections) {
		t.Fatalf("upload splitting finds %d sections, the corpus %d", len(got), len(kd.Sections))
	} else {
		for i, sec := range kd.Sections {
			if got[i].heading != sec.Heading || got[i].content != sec.Content {
				t.Errorf("section %d: upload splitting gives %q, the corpus %q", i, got[i].heading, sec.Heading)
			}
		}
	}
	if h := before.Documents[0].ActiveVersion.ContentSHA256; h != artifactHash(string(kd.Raw)) || h == kd.SHA256 {
		t.Errorf("preloaded content_sha256 %s: want the artifact hash, not the file hash", h)
	}
}

func TestLookupReportsEveryMatchingDocument(t *testing.T) {
	t.Parallel()
	const src, ext = "mobilityops-procedures-en", "damage-procedure"
	type wantDoc struct {
		status, versionStatus, tenant string // versionStatus "" means active_version null
	}
	published := wantDoc{StatusActive, VersionPublished, config.DefaultTenant}
	tests := []struct {
		name  string
		setup func(s *Server)
		want  []wantDoc
	}{
		{"preloaded", func(*Server) {}, []wantDoc{published}},
		{"duplicated", func(s *Server) { s.Duplicate(src, ext) }, []wantDoc{published, published}},
		{"archived", func(s *Server) { s.SetDocumentStatus(src, ext, StatusArchived) }, []wantDoc{{StatusArchived, VersionPublished, config.DefaultTenant}}},
		{"deleted", func(s *Server) { s.SetDocumentStatus(src, ext, StatusDeleted) }, []wantDoc{{StatusDeleted, VersionPublished, config.DefaultTenant}}},
		{"processing", func(s *Server) { s.SetVersionStatus(src, ext, VersionProcessing) }, []wantDoc{{StatusActive, VersionProcessing, config.DefaultTenant}}},
		{"failed", func(s *Server) { s.SetVersionStatus(src, ext, VersionFailed) }, []wantDoc{{StatusActive, VersionFailed, config.DefaultTenant}}},
		{"no active version", func(s *Server) { s.SetVersionStatus(src, ext, "") }, []wantDoc{{StatusActive, "", config.DefaultTenant}}},
		{"missing", func(s *Server) { s.Remove(src, ext) }, nil},
		{"other namespace", func(s *Server) { s.MoveToNamespace(src, ext, "acme", "fleet", "procedures") }, []wantDoc{{StatusActive, VersionPublished, "acme"}}},
		{"also in another namespace", func(s *Server) {
			s.AddDocument(Document{SourceID: src, ExternalID: ext, Tenant: "acme", Status: StatusActive,
				ActiveVersion: &Version{Version: "1.3", Status: VersionPublished, PublishedAt: "2026-03-01T08:00:00Z"}})
		}, []wantDoc{published, {StatusActive, VersionPublished, "acme"}}},
		{"duplicate of an archived document", func(s *Server) {
			s.SetDocumentStatus(src, ext, StatusArchived)
			s.Duplicate(src, ext)
		}, []wantDoc{{StatusArchived, VersionPublished, config.DefaultTenant}, published}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ts := newFake(t, Options{})
			s.LoadCorpus(corpus(t), "mobilityops-procedures")
			tt.setup(s)
			docs, raw := lookup(t, ts, src, ext)
			if len(docs.Documents) != len(tt.want) {
				t.Fatalf("%d documents, want %d: %s", len(docs.Documents), len(tt.want), raw)
			}
			if len(tt.want) == 0 && !bytes.Contains(raw, []byte(`"documents":[]`)) {
				t.Errorf("no documents must be an empty list: %s", raw)
			}
			ids := map[string]bool{}
			for i, d := range docs.Documents {
				w := tt.want[i]
				ids[d.DocumentID] = true
				if d.SourceID != src || d.ExternalID != ext || d.Status != w.status || d.Tenant != w.tenant {
					t.Errorf("document %d: %+v, want %+v", i, d, w)
				}
				switch {
				case w.versionStatus == "" && d.ActiveVersion != nil:
					t.Errorf("document %d: active_version %+v, want null", i, d.ActiveVersion)
				case w.versionStatus != "" && (d.ActiveVersion == nil || d.ActiveVersion.Status != w.versionStatus):
					t.Errorf("document %d: active_version %+v, want status %s", i, d.ActiveVersion, w.versionStatus)
				case w.versionStatus == VersionPublished && d.ActiveVersion.PublishedAt == nil,
					w.versionStatus != VersionPublished && d.ActiveVersion != nil && d.ActiveVersion.PublishedAt != nil:
					t.Errorf("document %d: published_at %v with status %s", i, d.ActiveVersion.PublishedAt, w.versionStatus)
				}
			}
			if len(ids) != len(docs.Documents) {
				t.Errorf("document ids repeat: %s", raw)
			}
			// Documents that left the namespace take their passages with them.
			body := retrieveBody("damage report windscreen scratch", 100)
			body["filters"] = map[string]any{"category": "damage"}
			cands := decode[retrieveResponse](t, send(t, ts, call{"POST", "/v1/retrieve", body, nil})).Candidates
			inNamespace := slices.ContainsFunc(tt.want, func(w wantDoc) bool { return w.tenant == config.DefaultTenant })
			if got := len(cands) > 0; got != inNamespace {
				t.Errorf("retrievable %v, want %v", got, inNamespace)
			}
		})
	}
}

func TestLoadCorpus(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{})
	c := corpus(t)
	s.LoadCorpus(c, "custom-prefix", "de/damage-procedure", "en/lost-and-found")

	for _, lang := range knowledge.Languages {
		for _, kd := range c.Documents(lang) {
			docs, raw := lookup(t, ts, "custom-prefix-"+lang, kd.ID)
			skipped := lang+"/"+kd.ID == "de/damage-procedure" || lang+"/"+kd.ID == "en/lost-and-found"
			if skipped {
				if len(docs.Documents) != 0 {
					t.Errorf("%s/%s was skipped but is indexed: %s", lang, kd.ID, raw)
				}
				continue
			}
			if len(docs.Documents) != 1 {
				t.Fatalf("%s/%s: %s", lang, kd.ID, raw)
			}
			d := docs.Documents[0]
			if d.ActiveVersion.Version != kd.Version || d.Metadata.Category != kd.Category ||
				d.Metadata.EffectiveDate != kd.EffectiveDate || d.Metadata.Language != lang ||
				!strings.HasPrefix(d.DocumentID, "rc-doc-") {
				t.Errorf("%s/%s: %s", lang, kd.ID, raw)
			}
		}
	}

	// One passage per section, with the corpus's breadcrumb.
	kd := c.Document("en", "damage-procedure")
	body := retrieveBody(kd.Title, 100)
	body["filters"] = map[string]any{"category": kd.Category}
	var got []string
	for _, cand := range decode[retrieveResponse](t, send(t, ts, call{"POST", "/v1/retrieve", body, nil})).Candidates {
		if cand.ExternalID != kd.ID {
			continue
		}
		got = append(got, cand.Section)
		if !slices.Equal(cand.Breadcrumb, []string{kd.Title, cand.Section}) || cand.SourceID != "custom-prefix-en" || cand.Title != kd.Title {
			t.Errorf("candidate %+v", cand)
		}
	}
	slices.Sort(got)
	var want []string
	for _, sec := range kd.Sections {
		want = append(want, sec.Heading)
	}
	if !slices.Equal(got, want) {
		t.Errorf("sections %v, want %v", got, want)
	}
}

func TestFailNextWithRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		faults     Faults
		status     int
		code       string
		retryAfter string
	}{
		{"429 with Retry-After", Faults{FailNext: 2, FailStatus: 429, RetryAfter: "7"}, 429, "rate_limited", "7"},
		{"429 always has Retry-After", Faults{FailNext: 2, FailStatus: 429}, 429, "rate_limited", "1"},
		{"503 by default", Faults{FailNext: 2}, 503, "unavailable", ""},
		{"503 with Retry-After", Faults{FailNext: 2, FailStatus: 503, RetryAfter: "2"}, 503, "unavailable", "2"},
		{"409", Faults{FailNext: 2, FailStatus: 409}, 409, "conflict", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ts := newFake(t, Options{})
			tt.faults.Paths = []string{"/v1/retrieve"}
			s.SetFaults(tt.faults)
			retrieve := call{"POST", "/v1/retrieve", retrieveBody("damage", 3), nil}

			// Neither a request to another path nor a rejected one counts.
			if r := send(t, ts, call{"GET", "/v1/health", nil, nil}); r.status != 200 {
				t.Fatalf("health: %d", r.status)
			}
			wantError(t, send(t, ts, call{"POST", "/v1/retrieve", retrieveBody("damage", 3), map[string]string{"Authorization": ""}}), 401, "unauthorized")

			for range 2 {
				r := send(t, ts, retrieve)
				wantError(t, r, tt.status, tt.code)
				if got := r.header.Get("Retry-After"); got != tt.retryAfter {
					t.Errorf("Retry-After %q, want %q", got, tt.retryAfter)
				}
			}
			if r := send(t, ts, retrieve); r.status != 200 {
				t.Errorf("third request: status %d, want 200", r.status)
			}
		})
	}
}

// endpointCalls are one valid request per endpoint.
var endpointCalls = map[string]call{
	"health":    {"GET", "/v1/health", nil, nil},
	"documents": {"GET", "/v1/documents?source_id=a&external_id=b", nil, nil},
	"retrieve":  {"POST", "/v1/retrieve", retrieveBody("damage", 3), nil},
	"answer":    {"POST", "/v1/answer", answerBody("damage"), nil},
	"upload":    {"PUT", uploadPath, uploadBody(testMarkdown, "1"), nil},
}

// typedResponses decode each endpoint's answer into the contract's types, as a client would.
var typedResponses = map[string]func([]byte) error{
	"health": func(b []byte) error {
		var v struct {
			Status string `json:"status"`
		}
		return json.Unmarshal(b, &v)
	},
	"documents": func(b []byte) error { var v documentsJSON; return json.Unmarshal(b, &v) },
	"retrieve":  func(b []byte) error { var v retrieveResponse; return json.Unmarshal(b, &v) },
	"answer":    func(b []byte) error { var v answerJSON; return json.Unmarshal(b, &v) },
	"upload": func(b []byte) error {
		var v struct {
			DocumentID string `json:"document_id"`
			Version    string `json:"version"`
			Status     string `json:"status"`
		}
		return json.Unmarshal(b, &v)
	},
}

func TestBodyFaults(t *testing.T) {
	t.Parallel()
	for name, c := range endpointCalls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, ts := newFake(t, Options{})

			if r := send(t, ts, c); typedResponses[name](r.body) != nil {
				t.Fatalf("without faults the body does not decode: %s", r.body)
			}

			s.SetFaults(Faults{Malformed: true})
			if r := send(t, ts, c); r.status != 200 || json.Valid(r.body) {
				t.Errorf("Malformed: status %d, valid JSON %v", r.status, json.Valid(r.body))
			}

			s.SetFaults(Faults{WrongShape: true})
			r := send(t, ts, c)
			if r.status != 200 || !json.Valid(r.body) {
				t.Fatalf("WrongShape: status %d, body %s", r.status, r.body)
			}
			if err := typedResponses[name](r.body); err == nil {
				t.Errorf("WrongShape: %s decodes into the contract's types", r.body)
			}

			const huge = 3 << 20
			s.SetFaults(Faults{HugeBody: huge})
			r = send(t, ts, c)
			if r.status != 200 || len(r.body) < huge || !json.Valid(r.body) || typedResponses[name](r.body) != nil {
				t.Errorf("HugeBody: status %d, %d bytes, valid %v", r.status, len(r.body), json.Valid(r.body))
			}
			if r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
				t.Errorf("HugeBody: Content-Length %s for %d bytes", r.header.Get("Content-Length"), len(r.body))
			}

			// Faults do not touch paths they are not for.
			s.SetFaults(Faults{Paths: []string{"/v1/elsewhere"}, Malformed: true})
			if r := send(t, ts, c); typedResponses[name](r.body) != nil {
				t.Errorf("a fault for another path changed %s", r.body)
			}
		})
	}
}

func TestHealthStatus(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{})
	s.SetFaults(Faults{Paths: []string{"/v1/retrieve"}, HealthStatus: "degraded"})
	if r := send(t, ts, call{"GET", "/v1/health", nil, nil}); string(r.body) != `{"status":"degraded"}` {
		t.Errorf("health %s", r.body)
	}
	s.SetFaults(Faults{})
	if r := send(t, ts, call{"GET", "/v1/health", nil, nil}); string(r.body) != `{"status":"ok"}` {
		t.Errorf("health %s", r.body)
	}
}

func TestErrorRateIsSeeded(t *testing.T) {
	t.Parallel()
	run := func(seed int64, f Faults, n int) []int {
		s, ts := newFake(t, Options{Seed: seed})
		s.SetFaults(f)
		statuses := make([]int, n)
		for i := range statuses {
			r := send(t, ts, call{"GET", "/v1/health", nil, nil})
			if r.status != 200 {
				wantError(t, r, orStatus(f.ErrorStatus, 500), errorCodes[orStatus(f.ErrorStatus, 500)])
			}
			statuses[i] = r.status
		}
		return statuses
	}
	half := Faults{ErrorRate: 0.3}
	a, b := run(42, half, 200), run(42, half, 200)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different failures")
	}
	if fails := 200 - countOf(a, 200); fails < 30 || fails > 90 {
		t.Errorf("%d of 200 failed at rate 0.3", fails)
	}
	if slices.Equal(a, run(43, half, 200)) {
		t.Error("another seed gave the same failures")
	}
	if got := run(1, Faults{ErrorRate: 1, ErrorStatus: 503}, 20); countOf(got, 503) != 20 {
		t.Errorf("rate 1: %v", got)
	}
	if got := run(1, Faults{ErrorRate: 0}, 20); countOf(got, 200) != 20 {
		t.Errorf("rate 0: %v", got)
	}
}

func orStatus(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func countOf(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// watched wraps the fake so a test sees when a handler returns and whether it wrote anything.
type watched struct {
	h    http.Handler
	done chan bool // receives "wrote anything" when a handler returns
}

type watchWriter struct {
	http.ResponseWriter
	wrote atomic.Bool
}

func (w *watchWriter) WriteHeader(status int) {
	w.wrote.Store(true)
	w.ResponseWriter.WriteHeader(status)
}
func (w *watchWriter) Write(b []byte) (int, error) {
	w.wrote.Store(true)
	return w.ResponseWriter.Write(b)
}
func (w *watchWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (h *watched) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ww := &watchWriter{ResponseWriter: w}
	h.h.ServeHTTP(ww, r)
	h.done <- ww.wrote.Load()
}

// watchedServer is a fake whose handlers the test can wait for.
type watchedServer struct {
	*httptest.Server
	done  chan bool
	stuck atomic.Bool
}

func newWatched(t *testing.T) (*Server, *watchedServer) {
	t.Helper()
	s := New(Options{Token: testToken})
	w := &watched{h: s, done: make(chan bool, 16)}
	ws := &watchedServer{Server: httptest.NewServer(w), done: w.done}
	t.Cleanup(func() {
		// Close waits for every handler; one stuck for an hour would hang the whole binary.
		if !ws.stuck.Load() {
			ws.Close()
		}
	})
	return s, ws
}

// handlerReturns waits for the next handler to return and reports whether it wrote anything.
// The bound only keeps a broken fake from hanging the tests; it is not a timing assertion.
func (ws *watchedServer) handlerReturns(t *testing.T) bool {
	t.Helper()
	select {
	case wrote := <-ws.done:
		return wrote
	case <-time.After(10 * time.Second):
		ws.stuck.Store(true)
		t.Fatal("the handler did not return after the request ended")
		return false
	}
}

func TestLatencyHonoursCancellation(t *testing.T) {
	t.Parallel()
	s, ws := newWatched(t)
	ts := ws.Server
	s.SetFaults(Faults{Latency: time.Hour, Paths: []string{"/v1/retrieve"}})

	// Other paths are not delayed.
	if r := send(t, ts, call{"GET", "/v1/health", nil, nil}); r.status != 200 {
		t.Fatalf("health: %d", r.status)
	}
	if !ws.handlerReturns(t) {
		t.Fatal("health wrote nothing")
	}

	ctx, cancel := context.WithCancel(t.Context())
	req := call{"POST", "/v1/retrieve", retrieveBody("damage", 3), nil}.build(t, ctx, ts.URL)
	errc := make(chan error, 1)
	go func() {
		resp, err := ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for s.Count(http.MethodPost, "/v1/retrieve") == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("the client got an answer during an hour of latency")
	}
	if ws.handlerReturns(t) {
		t.Error("the handler wrote to a cancelled request")
	}

	s.SetFaults(Faults{Latency: time.Millisecond})
	if r := send(t, ts, endpointCalls["retrieve"]); r.status != 200 || typedResponses["retrieve"](r.body) != nil {
		t.Errorf("after a short latency: status %d, %s", r.status, r.body)
	}
}

func TestSlowBody(t *testing.T) {
	t.Parallel()
	s, ws := newWatched(t)
	ts := ws.Server
	s.LoadCorpus(corpus(t), "mobilityops-procedures")
	c := call{"POST", "/v1/retrieve", retrieveBody("damage windscreen photos", 5), nil}
	normal := send(t, ts, c)
	ws.handlerReturns(t)

	s.SetFaults(Faults{SlowBody: time.Millisecond})
	if slow := send(t, ts, c); slow.status != 200 || !bytes.Equal(slow.body, normal.body) {
		t.Errorf("a short SlowBody changed the answer: %d %s", slow.status, slow.body)
	}
	ws.handlerReturns(t)

	s.SetFaults(Faults{SlowBody: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// If the first half is never flushed, fail instead of waiting for the test timeout.
	bound := time.AfterFunc(10*time.Second, cancel)
	resp, err := ts.Client().Do(c.build(t, ctx, ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(normal.body)) {
		t.Fatalf("status %d, Content-Length %d, want 200 and %d", resp.StatusCode, resp.ContentLength, len(normal.body))
	}
	half := make([]byte, len(normal.body)/2)
	if _, err := io.ReadFull(resp.Body, half); err != nil {
		t.Fatalf("first half: %v", err)
	}
	bound.Stop()
	if !bytes.Equal(half, normal.body[:len(half)]) {
		t.Errorf("first half %q is not the start of the answer", half)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the rest of the body arrived despite an hour of SlowBody")
	}
	ws.handlerReturns(t)
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{})
	send(t, ts, call{"POST", "/v1/retrieve", retrieveBody("damage", 3), map[string]string{"X-Correlation-Id": "corr-42"}})
	send(t, ts, call{"GET", "/v1/documents?source_id=a&external_id=b", nil, nil})
	send(t, ts, call{"GET", "/v1/health", nil, map[string]string{"Authorization": "Bearer wrong-secret"}})

	log := s.Requests()
	if len(log) != 3 {
		t.Fatalf("%d requests logged", len(log))
	}
	first := log[0]
	if first.Method != "POST" || first.Path != "/v1/retrieve" || first.Tenant != config.DefaultTenant ||
		first.Workspace != config.DefaultWorkspace || first.ActorID != "agent-7" || first.ActorScope != "fleet-ops:read" ||
		first.CorrelationID != "corr-42" || !first.Authorized {
		t.Errorf("first request %+v", first)
	}
	if body, _ := first.Body.(map[string]any); body["query"] != "damage" || body["top_k"] != float64(3) {
		t.Errorf("logged body %#v", first.Body)
	}
	if log[1].RawQuery != "source_id=a&external_id=b" || log[1].Body != nil {
		t.Errorf("second request %+v", log[1])
	}
	if log[2].Authorized {
		t.Error("a wrong token is logged as authorized")
	}
	if dump := fmt.Sprintf("%#v", log); strings.Contains(dump, testToken) || strings.Contains(dump, "wrong-secret") {
		t.Error("the log holds a token")
	}

	if n := s.Count("POST", "/v1/retrieve"); n != 1 {
		t.Errorf("Count(POST, /v1/retrieve) = %d", n)
	}
	if n := s.Count("GET", "/v1/"); n != 2 {
		t.Errorf("Count(GET, /v1/) = %d", n)
	}
	if n := s.Count("", "/v1/"); n != 3 {
		t.Errorf("Count(\"\", /v1/) = %d", n)
	}
	s.Reset()
	if n := s.Count("", ""); n != 0 || len(s.Requests()) != 0 {
		t.Errorf("%d requests after Reset", n)
	}
}

// TestConcurrentUse is for the race detector: every method at once.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s, ts := newFake(t, Options{PublishUploads: true, Seed: 3})
	s.LoadCorpus(corpus(t), "mobilityops-procedures")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 10 {
				ext := fmt.Sprintf("doc-%d-%d", i, j%3)
				path := "/v1/sources/mobilityops-procedures-en/documents/" + ext
				for _, c := range []call{
					{"PUT", path, uploadBody(testMarkdown, strconv.Itoa(j)), nil},
					{"POST", "/v1/retrieve", retrieveBody("zebra damage", 10), nil},
					{"POST", "/v1/answer", answerBody("zebra damage"), nil},
					{"GET", "/v1/documents?source_id=mobilityops-procedures-en&external_id=" + ext, nil, nil},
				} {
					if r := send(t, ts, c); r.status >= 300 {
						t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
					}
				}
				s.Duplicate("mobilityops-procedures-en", ext)
				s.SetVersionStatus("mobilityops-procedures-en", ext, VersionPublished)
				s.SetFaults(Faults{Paths: []string{"/v1/health"}, ErrorRate: 0.5})
				_ = s.Requests()
				_ = s.Count("", "/v1/")
			}
		})
	}
	wg.Wait()
}

func TestSplitSections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []section
	}{
		{"front matter and title skipped", testMarkdown, []section{{"1. Scope", "Zebra crossings are covered here."}, {"2. Steps", "Quokka steps follow."}}},
		{"CRLF", "---\r\nid: x\r\n---\r\n# T\r\n## A\r\nbody\r\n", []section{{"A", "body"}}},
		{"no front matter", "# T\n## A\none\n### sub\ntwo", []section{{"A", "one\n### sub\ntwo"}}},
		{"no sections", "---\nid: x\n---\nJust text.", []section{{"", "Just text."}}},
		{"unclosed front matter is text", "---\nid: x\n## A\nbody", []section{{"A", "body"}}},
		{"empty front matter", "---\n---\n## A\nbody", []section{{"A", "body"}}},
		{"only front matter", "---\nid: x\n---", nil},
		{"empty section kept", "## A\n## B\nb", []section{{"A", ""}, {"B", "b"}}},
	}
	for _, tt := range tests {
		if got := splitSections(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func FuzzSplitSections(f *testing.F) {
	f.Add(testMarkdown)
	f.Add("---\n---\n")
	f.Add("## \n")
	f.Fuzz(func(t *testing.T, md string) {
		for _, sec := range splitSections(md) {
			if sec.heading != strings.TrimSpace(sec.heading) || sec.content != strings.TrimSpace(sec.content) {
				t.Errorf("untrimmed section %q", sec)
			}
			if strings.Contains(sec.heading, "\n") {
				t.Errorf("heading spans lines: %q", sec.heading)
			}
		}
	})
}

// FuzzRequestBodies feeds untrusted bodies to every parser: none may panic, and whatever they
// accept must satisfy the contract's rules.
func FuzzRequestBodies(f *testing.F) {
	f.Add([]byte(`{"collection":"c","query":"q","language":"en","top_k":3,"filters":{"category":"d"}}`))
	f.Add([]byte(`{"collection":"c","question":"q","language":"en","filters":null}`))
	raw, _ := json.Marshal(uploadBody(testMarkdown, "1"))
	f.Add(raw)
	f.Fuzz(func(t *testing.T, body []byte) {
		if q, err := parseRetrieve(body); err == nil {
			if q.topK < 1 || q.topK > 100 || strings.TrimSpace(q.text) == "" || strings.TrimSpace(q.collection) == "" || strings.TrimSpace(q.language) == "" {
				t.Errorf("accepted retrieve %+v", q)
			}
		}
		if q, err := parseAnswer(body); err == nil && strings.TrimSpace(q.text) == "" {
			t.Errorf("accepted answer %+v", q)
		}
		if u, err := parseUpload(body); err == nil && (u.title == "" || u.version == "" || u.content == "") {
			t.Errorf("accepted upload %+v", u)
		}
	})
}

func BenchmarkRetrieve(b *testing.B) {
	s := New(Options{Token: testToken})
	s.LoadCorpus(corpus(b), "mobilityops-procedures")
	q := query{collection: config.DefaultCollection, text: "customer reports a cracked windscreen after a stone chip", language: "en", topK: 10}
	b.ReportAllocs()
	for b.Loop() {
		s.mu.Lock()
		s.searchLocked(q)
		s.mu.Unlock()
	}
}
