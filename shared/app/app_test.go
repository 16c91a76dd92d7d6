package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// fakeBedrock answers the Bedrock Agent Runtime Retrieve call (POST /knowledgebases/{id}/retrieve)
// as mode says, counting the calls.
// embeddedRAGcore is a fake RAGcore (token "t") serving the embedded corpus, closed with the test.
func embeddedRAGcore(t *testing.T) (*httptest.Server, *ragcorefake.Server) {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fake := ragcorefake.New(ragcorefake.Options{Token: "t"})
	fake.LoadCorpus(c, "mobilityops-procedures")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return srv, fake
}

func fakeBedrock(t *testing.T, mode string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/retrieve") {
			http.Error(w, "unexpected", http.StatusNotFound)
			return
		}
		switch mode {
		case "hang":
			<-r.Context().Done()
			return
		case "throttle":
			w.Header().Set("X-Amzn-ErrorType", "ThrottlingException")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"message":"Rate exceeded"}`))
			return
		case "500":
			w.Header().Set("X-Amzn-ErrorType", "InternalServerException")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message":"boom"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"retrievalResults": []any{
			map[string]any{"content": map[string]any{"text": "Photograph the damage before the trip starts."},
				"location": map[string]any{"type": "S3", "s3Location": map[string]any{"uri": "s3://kb/procedures/en/damage-procedure.md"}},
				"metadata": map[string]any{"document_id": "damage-procedure", "title": "Damage handling procedure",
					"section": "2. Immediate actions", "category": "damage", "language": "en"},
				"score": 0.71},
			map[string]any{"content": map[string]any{"text": "A wiki page outside the corpus."},
				"location": map[string]any{"type": "WEB", "webLocation": map[string]any{"url": "https://wiki.internal.example/page"}},
				"metadata": map[string]any{"title": "Internal wiki"},
				"score":    0.5},
			map[string]any{"content": map[string]any{"text": "Other text."},
				"location": map[string]any{"type": "S3", "s3Location": map[string]any{"uri": "s3://kb/procedures/en/ev-charging.md"}},
				"metadata": map[string]any{"document_id": "ev-charging", "title": "EV charging", "section": "1. Scope",
					"category": "charging", "language": "en"},
				"score": 0.32},
		}})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func newApp(t *testing.T, env map[string]string) *App {
	t.Helper()
	return newAppLog(t, env, io.Discard)
}

var questions = []string{
	"A customer found a deep scratch on the rear door before starting the trip. Does she need to upload photos of the damage?",
	"The battery is at 8 percent and the customer is stuck at a charging station",
	"Die Windschutzscheibe hat einen Riss, wie melde ich den Schaden?",
	"How do I bake a chocolate cake?",
}

func lookupOn(t *testing.T, a *App, q string) lookup.Result {
	t.Helper()
	lang := "en"
	if strings.HasPrefix(q, "Die ") {
		lang = "de"
	}
	res, err := a.Service.Lookup(context.Background(), lookup.LookupRequest{Question: q, Language: lang, TopK: 5,
		Actor: port.Actor{ID: "agent-7"}, CorrelationID: "side-1"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSidecarOffMakesNoCall: with SIDECAR_ENABLED unset, even a configured knowledge base and
// endpoint are never called, and the lookup says the sidecar is disabled.
func TestSidecarOffMakesNoCall(t *testing.T) {
	srv, calls := fakeBedrock(t, "ok")
	a := newApp(t, map[string]string{"BEDROCK_KNOWLEDGE_BASE_ID": "KB1", "BEDROCK_ENDPOINT": srv.URL})
	for _, q := range questions {
		if r := lookupOn(t, a, q); r.Retrieval.Sidecar.Enabled || r.Retrieval.Sidecar.Status != "disabled" {
			t.Errorf("sidecar %+v", r.Retrieval.Sidecar)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d sidecar calls with the sidecar off", n)
	}
	if h := a.Status.SidecarHealth(); h.Enabled || h.Status != "disabled" {
		t.Errorf("health %+v", h)
	}
}

func TestSidecarOnComparesWithoutChangingTheAnswer(t *testing.T) {
	srv, calls := fakeBedrock(t, "ok")
	off := newApp(t, nil)
	on := newApp(t, map[string]string{"SIDECAR_ENABLED": "true", "BEDROCK_KNOWLEDGE_BASE_ID": "KB1", "BEDROCK_ENDPOINT": srv.URL})
	q := questions[0]
	a, b := lookupOn(t, off, q), lookupOn(t, on, q)
	if calls.Load() != 1 {
		t.Fatalf("%d sidecar calls for one lookup", calls.Load())
	}
	if a.Primary == nil || b.Primary == nil || a.Primary.Source != b.Primary.Source || a.EvidenceState != b.EvidenceState ||
		len(a.EvidenceBlocks) != len(b.EvidenceBlocks) {
		t.Errorf("the sidecar changed the main result: %+v / %+v", a.Primary, b.Primary)
	}
	sc := b.Retrieval.Sidecar
	if !sc.Enabled || sc.Status != "ok" || sc.ScoreKind != "bedrock_relevance" || sc.Comparison == nil || sc.Results == nil {
		t.Fatalf("sidecar report %+v", sc)
	}
	raw, _ := json.Marshal(sc)
	for _, want := range []string{`"overlap_at_k"`, `"rank_agreement"`, `"only_sidecar"`, `"score_semantics"`, `"bedrock_relevance"`,
		`"procedures/en/damage-procedure.md#2-immediate-actions"`, `"unmanaged:2"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("sidecar report lacks %s: %s", want, raw)
		}
	}
	for _, leak := range []string{"wiki.internal.example", "Internal wiki", "outside the corpus"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("an unmanaged result leaks %q: %s", leak, raw)
		}
	}
	tr, err := on.Service.Invocation(context.Background(), b.InvocationID, port.Actor{ID: "agent-7"})
	if err != nil || tr.RetrievalDetails.Sidecar.Status != "ok" || tr.RetrievalDetails.Sidecar.Comparison == nil {
		t.Errorf("trace sidecar %+v, %v", tr.RetrievalDetails.Sidecar, err)
	}
}

// TestFailingSidecarNeverChangesOrDelaysTheAnswer: with the sidecar on
// against a failing or hanging endpoint, every lookup returns the primary block it returns with
// the sidecar off, within the sidecar deadline plus a small margin.
func TestFailingSidecarNeverChangesOrDelaysTheAnswer(t *testing.T) {
	off := newApp(t, nil)
	for _, mode := range []string{"hang", "throttle", "500"} {
		srv, _ := fakeBedrock(t, mode)
		on := newApp(t, map[string]string{"SIDECAR_ENABLED": "true", "BEDROCK_KNOWLEDGE_BASE_ID": "KB1",
			"BEDROCK_ENDPOINT": srv.URL, "SIDECAR_TIMEOUT_MS": "300"})
		for _, q := range questions {
			want := lookupOn(t, off, q)
			start := time.Now()
			got := lookupOn(t, on, q)
			took := time.Since(start)
			if (want.Primary == nil) != (got.Primary == nil) || want.Primary != nil && want.Primary.Source != got.Primary.Source ||
				want.EvidenceState != got.EvidenceState {
				t.Errorf("%s, %q: primary %+v, want %+v", mode, q, got.Primary, want.Primary)
			}
			// The hanging endpoint never answers, so a lookup that waited for it would never end:
			// a generous bound (ten times the deadline, for a loaded machine under -race) tells
			// the two apart without timing the deadline itself.
			if took > 10*300*time.Millisecond {
				t.Errorf("%s: lookup took %v with a 300 ms sidecar deadline", mode, took)
			}
			sc := got.Retrieval.Sidecar
			if !sc.Enabled || sc.Status != "failed" || sc.ErrorClass == "" || got.Retrieval.L1.Status == lookup.L1Failed {
				t.Errorf("%s: sidecar %+v, l1 %+v: a sidecar failure is the sidecar's status only", mode, sc, got.Retrieval.L1)
			}
		}
	}
	// A sidecar that cannot be built (no knowledge base) is reported, never fatal.
	broken := newApp(t, map[string]string{"SIDECAR_ENABLED": "true"})
	if r := lookupOn(t, broken, questions[0]); r.Retrieval.Sidecar.Status != "failed" || r.Retrieval.Sidecar.ErrorClass != "invalid_config" || r.Primary == nil {
		t.Errorf("broken sidecar: %+v", r.Retrieval.Sidecar)
	}
	if h := broken.Status.SidecarHealth(); !h.Enabled || h.Status != "failed" {
		t.Errorf("broken sidecar health %+v", h)
	}
}

// TestStatusAndSyncOfRAGcoreStartWithoutTheIndex: the index is built only where it is read.
func TestStatusAndSyncOfRAGcoreStartWithoutTheIndex(t *testing.T) {
	srv, _ := embeddedRAGcore(t)
	env := map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": srv.URL, "RAGCORE_TOKEN": "t"}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []api.Function{api.FunctionStatus, api.FunctionSync, api.FunctionLookup} {
		a, err := NewFunction(context.Background(), cfg, io.Discard, fn)
		if err != nil {
			t.Fatal(err)
		}
		if (a.Service != nil) != (fn == api.FunctionLookup) {
			t.Errorf("%s: lookup service built: %v", fn, a.Service != nil)
		}
		st, err := a.Status.Status(context.Background(), "en", port.Call{Actor: port.Actor{ID: "c", Scopes: []string{"knowledge:read"}}})
		if err != nil || st.DocumentCount == nil || *st.DocumentCount != 11 {
			t.Errorf("%s: status %+v, %v", fn, st, err)
		}
	}
	// The demo provider verifies from the corpus: its status and sync functions need no index
	// either, and still verify every source.
	demo, _ := config.FromEnv(func(string) string { return "" })
	for _, fn := range []api.Function{api.FunctionStatus, api.FunctionSync} {
		a, err := NewFunction(context.Background(), demo, io.Discard, fn)
		if err != nil {
			t.Fatal(err)
		}
		if a.Service != nil || a.parts.Index != nil {
			t.Errorf("demo %s function built the index", fn)
		}
		st, err := a.Status.Status(context.Background(), "de", port.Call{Actor: port.Actor{ID: "c", Scopes: []string{"knowledge:read"}}})
		if err != nil || st.DocumentCount == nil || *st.DocumentCount != 11 {
			t.Errorf("demo %s: status %+v, %v", fn, st, err)
		}
	}
}

// TestUnreachableRAGcoreIs503AndL1Unavailable: with nothing listening at RAGCORE_BASE_URL, the
// wired API answers POST /sync with 503 unavailable (RAGcore cannot be reached at all), lookups
// answer from L0 with l1.status unavailable, and once the breaker opens they carry circuit_open.
func TestUnreachableRAGcoreIs503AndL1Unavailable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	a := newApp(t, map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": dead.URL, "RAGCORE_TOKEN": "t",
		"AUTH_MODE": "local-headers", "RAGCORE_BREAKER_FAILURES": "2"})
	h := a.Handler.HTTP(RequestTimeout)
	send := func(method, path, scope, body string) (int, string) {
		req := httptest.NewRequest(method, "/api/v1/knowledge"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Actor-Id", "op-1")
		req.Header.Set("X-Actor-Scope", scope)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	var classes []string
	for range 3 {
		code, body := send(http.MethodPost, "/lookup", "knowledge:read", `{"question":"flat tyre on the motorway, what now?","language":"en"}`)
		var res lookup.Result
		if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK ||
			res.Retrieval.L1.Status != lookup.L1Unavailable || res.Primary == nil {
			t.Fatalf("lookup: %d %s", code, body)
		}
		classes = append(classes, res.Retrieval.L1.ErrorClass)
	}
	if got := strings.Join(classes, ","); got != "unavailable,unavailable,circuit_open" {
		t.Errorf("l1 error classes %s", got)
	}
	if p, ok := a.Provider.(port.BreakerReporter); !ok || !p.BreakerOpen() {
		t.Error("the provider does not report its open breaker")
	}
	code, body := send(http.MethodPost, "/sync", "knowledge:sync", `{"language":"en"}`)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"unavailable"`) || strings.Contains(body, "127.0.0.1") {
		t.Errorf("sync with RAGcore unreachable: %d %s", code, body)
	}
}

// TestHangingRAGcoreOpensTheBreakerAndRecovers: a RAGcore that hangs past the timeout opens the
// breaker after RAGCORE_BREAKER_FAILURES calls; then lookups answer from L0 without asking it,
// /health says degraded with provider circuit_open, and once RAGcore answers again a probe after
// the cool-down closes the breaker by itself.
func TestHangingRAGcoreOpensTheBreakerAndRecovers(t *testing.T) {
	rc, fake := embeddedRAGcore(t)
	fake.SetFaults(ragcorefake.Faults{Latency: time.Minute})
	a := newApp(t, map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": rc.URL, "RAGCORE_TOKEN": "t",
		"AUTH_MODE": "local-headers", "RAGCORE_TIMEOUT_MS": "200", "RAGCORE_BREAKER_FAILURES": "2",
		// The lookup and the health check after the breaker opens must come within the
		// cool-down, also on a loaded machine; RAGcore hangs for a minute, past any timeout.
		"RAGCORE_BREAKER_COOLDOWN_MS": "3000"})
	h := a.Handler.HTTP(RequestTimeout)
	send := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, "/api/v1/knowledge"+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-Actor-Id", "op-1")
		req.Header.Set("X-Actor-Scope", "knowledge:read")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	post := func() lookup.Result {
		t.Helper()
		code, body := send(http.MethodPost, "/lookup", `{"question":"flat tyre on the motorway, what now?","language":"en"}`)
		var res lookup.Result
		if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK || res.Primary == nil {
			t.Fatalf("lookup: %d %s", code, body)
		}
		return res
	}
	for range 2 {
		if res := post(); res.Retrieval.L1.ErrorClass != "timeout" {
			t.Fatalf("hanging RAGcore: l1 %+v", res.Retrieval.L1)
		}
	}
	before := fake.Count(http.MethodPost, "/v1/retrieve")
	res := post()
	if res.Retrieval.L1.Status != lookup.L1Unavailable || res.Retrieval.L1.ErrorClass != "circuit_open" ||
		res.Primary.RetrievalLayer != lookup.LayerL0 {
		t.Fatalf("open breaker: l1 %+v, primary %s", res.Retrieval.L1, res.Primary.RetrievalLayer)
	}
	if n := fake.Count(http.MethodPost, "/v1/retrieve"); n != before {
		t.Errorf("the open breaker let %d retrieve calls through", n-before)
	}
	var health struct {
		Status     string            `json:"status"`
		Components map[string]string `json:"components"`
	}
	_, body := send(http.MethodGet, "/health", "")
	if err := json.Unmarshal([]byte(body), &health); err != nil || health.Status != "degraded" || health.Components["provider"] != "circuit_open" {
		t.Fatalf("health with the breaker open: %s", body)
	}

	fake.SetFaults(ragcorefake.Faults{})
	deadline := time.Now().Add(time.Minute) // a guard, not a measure: the cool-down is 3 s
	for {
		time.Sleep(100 * time.Millisecond)
		if res := post(); res.Retrieval.L1.Status == lookup.L1OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the breaker did not close after RAGcore recovered")
		}
	}
	_, body = send(http.MethodGet, "/health", "")
	if err := json.Unmarshal([]byte(body), &health); err != nil || health.Components["provider"] != "ok" {
		t.Errorf("health after recovery: %s", body)
	}
}

// TestAnonymousHealthProbesShareOneRAGcoreCheck: 200 anonymous GET /health requests, 50 of them
// at once, make at most a few RAGcore health calls: the provider's check is cached for a few
// seconds and shared by concurrent probes, as the store's is.
func TestAnonymousHealthProbesShareOneRAGcoreCheck(t *testing.T) {
	rc, fake := embeddedRAGcore(t)
	a := newApp(t, map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": rc.URL, "RAGCORE_TOKEN": "t"})
	h := a.Handler.HTTP(RequestTimeout)
	probe := func() {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/knowledge/health", nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"status":"ok"`) {
			t.Errorf("anonymous health: %d %s", w.Code, w.Body.String())
		}
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			probe()
		}()
	}
	wg.Wait()
	for range 150 {
		probe()
	}
	if n := fake.Count(http.MethodGet, "/v1/health"); n < 1 || n > 5 {
		t.Errorf("200 anonymous health probes made %d RAGcore health calls, want 1..5", n)
	}
}
