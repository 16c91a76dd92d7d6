package ragcore_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
)

const token = "fake-token-123"

var ns = domain.Namespace{Tenant: "northstar-mobility-demo", Workspace: "mobilityops", Collection: "internal-procedures"}

func corpus(t testing.TB) *knowledge.Corpus {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// env is a provider talking to a fake RAGcore over loopback HTTP.
type env struct {
	fake     *ragcorefake.Server
	srv      *httptest.Server
	provider *ragcore.Provider
	corpus   *knowledge.Corpus
}

func newEnv(t testing.TB, load bool, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	c := corpus(t)
	fake := ragcorefake.New(ragcorefake.Options{Token: token, PublishUploads: true, Seed: 1})
	if load {
		fake.LoadCorpus(c, "mobilityops-procedures")
	}
	var h http.Handler = fake
	if wrap != nil {
		h = wrap(fake)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	// A generous per-attempt timeout: a loaded machine under -race must not fail a good answer.
	client, err := ragcore.New(ragcore.Options{BaseURL: srv.URL, Token: token, Namespace: ns, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &env{fake: fake, srv: srv, corpus: c,
		provider: ragcore.NewProvider(client, c, ragcore.ProviderOptions{UploadConcurrency: 4})}
}

var actor = port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}

func TestRetrieveMapsManagedCandidates(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true, nil)
	for _, tc := range []struct{ lang, question, category, wantDoc string }{
		{"en", "windscreen crack damage photos", "damage", "damage-procedure"},
		{"de", "Ladestation Akku leer", "", "ev-charging"},
	} {
		cands, err := e.provider.Retrieve(context.Background(), port.Query{Question: tc.question, Language: tc.lang,
			TopK: 10, Category: tc.category, Actor: actor, CorrelationID: "c-1"})
		if err != nil {
			t.Fatalf("%s: %v", tc.lang, err)
		}
		if len(cands) == 0 {
			t.Fatalf("%s: no candidates", tc.lang)
		}
		found := false
		for i, c := range cands {
			d := e.corpus.Document(tc.lang, c.DocumentID)
			if d == nil {
				t.Fatalf("%s: candidate of unknown document %q", tc.lang, c.DocumentID)
			}
			if c.Rank != i+1 || c.Version != d.Version || c.EffectiveDate != d.EffectiveDate ||
				c.Anchor != knowledge.Anchor(c.Section) || c.Source != d.Path+"#"+c.Anchor || c.Content == "" {
				t.Errorf("%s: candidate %+v", tc.lang, c)
			}
			if tc.category != "" && c.Category != tc.category {
				t.Errorf("%s: category filter %q let %q through", tc.lang, tc.category, c.Category)
			}
			found = found || c.DocumentID == tc.wantDoc
		}
		if !found {
			t.Errorf("%s: %s not among the candidates", tc.lang, tc.wantDoc)
		}
	}
	// The filter goes to RAGcore only when the query has a category.
	reqs := e.fake.Requests()
	body0, _ := reqs[0].Body.(map[string]any)
	body1, _ := reqs[1].Body.(map[string]any)
	if f, _ := body0["filters"].(map[string]any); f["category"] != "damage" {
		t.Errorf("first request filters = %v", body0["filters"])
	}
	if _, ok := body1["filters"]; ok {
		t.Errorf("second request has filters %v, want none", body1["filters"])
	}
	if reqs[0].ActorID != "agent-7" || reqs[0].CorrelationID != "c-1" || !reqs[0].Authorized {
		t.Errorf("request identity = %+v", reqs[0])
	}
}

func TestAllowListDropsUnmanagedCandidates(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false, nil)
	content := "Windscreen crack: take photos of the damage and report it."
	for _, p := range []ragcorefake.Passage{
		{SourceID: "someone-elses-source-en", ExternalID: "damage-procedure"},                                   // foreign source
		{SourceID: "mobilityops-procedures-en", ExternalID: "how-to-bake-bread"},                                // not a corpus id
		{SourceID: "mobilityops-procedures-de", ExternalID: "damage-procedure"},                                 // other language's source
		{SourceID: "mobilityops-procedures-en", ExternalID: "damage-procedure"},                                 // managed
		{SourceID: "mobilityops-procedures-en", ExternalID: "damage-procedure", Collection: "other-collection"}, // not served
	} {
		p.DocumentID, p.Version, p.Title, p.Section, p.Category, p.Language, p.Content =
			"rc-x", "1.3", "Damage", "2. Immediate actions", "damage", "en", content
		p.Breadcrumb = []string{"Damage", "2. Immediate actions"}
		e.fake.AddPassage(p)
	}
	cands, err := e.provider.Retrieve(context.Background(), port.Query{Question: "windscreen crack photos", Language: "en", TopK: 10, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].DocumentID != "damage-procedure" || cands[0].Rank != 1 {
		t.Fatalf("candidates = %+v, want only the managed one", cands)
	}
	// The version RAGcore holds is not the local one: no effective date is borrowed for it.
	if d := e.corpus.Document("en", "damage-procedure"); d.Version != "1.3" && cands[0].EffectiveDate != "" {
		t.Errorf("effective date %q given to version 1.3 (local %s)", cands[0].EffectiveDate, d.Version)
	}
}

func TestAsk(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true, nil)
	// The fake's cosine similarity needs many shared words; a passage's own words ground the answer.
	sec := e.corpus.Document("en", "damage-procedure").Sections[1]
	question := sec.Heading + " " + strings.Join(strings.Fields(sec.Content)[:25], " ")
	ans, err := e.provider.Ask(context.Background(), port.AskQuery{Question: question, Language: "en", Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	if ans.EvidenceState != port.StateGrounded || !ans.Generated || len(ans.Sources) == 0 {
		t.Fatalf("answer = %+v", ans)
	}
	for _, s := range ans.Sources {
		if e.corpus.Document("en", s.DocumentID) == nil || s.Section == "" || s.Excerpt == "" {
			t.Errorf("source %+v", s)
		}
	}

	ans, err = e.provider.Ask(context.Background(), port.AskQuery{Question: "zzz qqq", Language: "en", Actor: actor})
	if err != nil || ans.EvidenceState != port.StateInsufficient || ans.Generated || len(ans.Sources) != 0 ||
		!strings.Contains(ans.Answer, "no procedure is inferred") {
		t.Fatalf("insufficient answer = %+v, %v", ans, err)
	}
	// The service's own wording in place of RAGcore's is in the language asked.
	ans, err = e.provider.Ask(context.Background(), port.AskQuery{Question: "zzz qqq", Language: "de", Actor: actor})
	if err != nil || ans.EvidenceState != port.StateInsufficient || !strings.Contains(ans.Answer, "kein Verfahren abgeleitet") ||
		strings.Contains(ans.Answer, "procedure") {
		t.Fatalf("German insufficient answer = %+v, %v", ans, err)
	}
}

func TestAskWithOnlyUnmanagedCitationsIsInsufficient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false, nil)
	e.fake.AddPassage(ragcorefake.Passage{SourceID: "wiki-en", ExternalID: "general-knowledge", DocumentID: "rc-9",
		Version: "1", Title: "General advice", Breadcrumb: []string{"General advice"}, Section: "Tyres", Category: "tyres",
		Language: "en", Content: "Flat tyre: call a friend and change the tyre yourself."})
	ans, err := e.provider.Ask(context.Background(), port.AskQuery{Question: "flat tyre change", Language: "en", Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	if ans.EvidenceState != port.StateInsufficient || ans.Generated || len(ans.Sources) != 0 ||
		strings.Contains(ans.Answer, "call a friend") {
		t.Fatalf("answer = %+v: an answer citing nothing managed must not be passed on", ans)
	}
}

func TestScoreSemanticsMustBeCosine(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"score_semantics":"bm25","candidates":[]}`))
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	client, _ := ragcore.New(ragcore.Options{BaseURL: srv.URL, Token: token, Namespace: ns})
	p := ragcore.NewProvider(client, corpus(t), ragcore.ProviderOptions{})
	_, err := p.Retrieve(context.Background(), port.Query{Question: "q", Language: "en", TopK: 5})
	var re *ragcore.Error
	if !errors.As(err, &re) || re.Class != ragcore.ClassBadResponse {
		t.Fatalf("err = %v", err)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false, nil)
	if h := e.provider.Health(context.Background(), port.Call{Actor: actor}); h.Status != "ok" {
		t.Errorf("health = %+v", h)
	}
	e.fake.SetFaults(ragcorefake.Faults{HealthStatus: "degraded"})
	if h := e.provider.Health(context.Background(), port.Call{Actor: actor}); h.Status != "degraded" {
		t.Errorf("degraded health = %+v", h)
	}
	e.fake.SetFaults(ragcorefake.Faults{Malformed: true})
	if h := e.provider.Health(context.Background(), port.Call{}); h.Status != "unavailable" || !strings.Contains(h.Detail, "bad_response") {
		t.Errorf("malformed health = %+v", h)
	}
	// A call no user made names the service as its actor.
	if r := e.fake.Requests(); r[len(r)-1].ActorID != ragcore.ServiceActorID {
		t.Errorf("actor = %q", r[len(r)-1].ActorID)
	}
	e.srv.Close()
	if h := e.provider.Health(context.Background(), port.Call{Actor: actor}); h.Status != "unavailable" || strings.Contains(h.Detail, "127.0.0.1") {
		t.Errorf("health of a stopped server = %+v", h)
	}
}

func refs(c *knowledge.Corpus, lang string) []port.DocumentRef {
	var out []port.DocumentRef
	for _, d := range c.Documents(lang) {
		out = append(out, port.DocumentRef{DocumentID: d.ID, Language: lang, Title: d.Title, Version: d.Version,
			EffectiveDate: d.EffectiveDate, Category: d.Category, SHA256: d.SHA256, Content: d.Raw})
	}
	return out
}

// inflight wraps a handler and records the largest number of requests it served at once.
type inflight struct {
	mu       sync.Mutex
	now, max int
}

func (f *inflight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.now++
		f.max = max(f.max, f.now)
		f.mu.Unlock()
		defer func() { f.mu.Lock(); f.now--; f.mu.Unlock() }()
		h.ServeHTTP(w, r)
	})
}

func TestSyncManifest(t *testing.T) {
	t.Parallel()
	var fl inflight
	e := newEnv(t, false, fl.wrap)
	e.fake.SetFaults(ragcorefake.Faults{Latency: 20 * time.Millisecond})
	docs := refs(e.corpus, "en")
	call := port.Call{Actor: port.Actor{ID: "sync-bot", Scopes: []string{"knowledge:sync"}}, CorrelationID: "sync-1"}
	res, err := e.provider.SyncManifest(context.Background(), call, docs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Documents != len(docs) || res.Uploaded != len(docs) || res.Unchanged != 0 || len(res.Failed) != 0 {
		t.Fatalf("first sync = %+v", res)
	}
	if fl.max > 4 || fl.max < 2 {
		t.Errorf("%d uploads at once, want concurrent and at most 4", fl.max)
	}
	// What was uploaded is now retrievable, and a second sync changes nothing.
	cands, err := e.provider.Retrieve(context.Background(), port.Query{Question: "windscreen crack", Language: "en", TopK: 5, Actor: actor})
	if err != nil || len(cands) == 0 {
		t.Fatalf("after sync: %v, %d candidates", err, len(cands))
	}
	res, _ = e.provider.SyncManifest(context.Background(), call, docs)
	if res.Uploaded != 0 || res.Unchanged != len(docs) || len(res.Failed) != 0 {
		t.Fatalf("second sync = %+v", res)
	}
	// One failing upload is reported by document; the others still go through.
	e.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/sources/"}, FailNext: 1, FailStatus: 500})
	res, _ = e.provider.SyncManifest(context.Background(), call, docs)
	if len(res.Failed) != 1 || res.Failed[0].Reason != "unavailable (HTTP 500)" || res.Unchanged != len(docs)-1 {
		t.Fatalf("sync with a failure = %+v", res)
	}
	for _, r := range e.fake.Requests() {
		if r.Method == http.MethodPut && (r.ActorID != "sync-bot" || r.CorrelationID != "sync-1") {
			t.Fatalf("upload identity = %+v", r)
		}
	}
}

func TestSyncManifestAgainstStoppedServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false, nil)
	e.srv.Close()
	docs := refs(e.corpus, "de")
	// RAGcore cannot be reached for any document: the sync did not happen, and says so as
	// port.ErrUnavailable (the API's 503), not as a result with every document failed.
	res, err := e.provider.SyncManifest(context.Background(), port.Call{Actor: actor}, docs)
	if !errors.Is(err, port.ErrUnavailable) || port.ErrorClass(err) != "unavailable" || res.Documents != 0 {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}

func TestSyncManifestWithSomeUploadsFailing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false, nil)
	e.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/sources/"}, FailNext: 2, FailStatus: 500})
	docs := refs(e.corpus, "de")
	res, err := e.provider.SyncManifest(context.Background(), port.Call{Actor: actor}, docs)
	if err != nil || len(res.Failed) != 2 || res.Failed[0].Reason != "unavailable (HTTP 500)" || res.Uploaded != len(docs)-2 {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}
