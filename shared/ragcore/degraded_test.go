package ragcore_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// service is the lookup_knowledge flow over the RAGcore provider and a fake RAGcore.
type service struct {
	*env
	svc    *retrieval.Service
	traces *store.Memory
	logs   *bytes.Buffer
}

// providerTimeout bounds every provider call of the service. It is generous, so that a loaded
// machine under -race never turns a good answer of the fake into a timeout; the faults that must
// time out hang far longer (hang, below).
const providerTimeout = 2 * time.Second

func newService(t *testing.T, load bool) *service {
	t.Helper()
	e := newEnv(t, load, nil)
	o := retrieval.DefaultOptions()
	o.ProviderTimeout = providerTimeout
	traces := store.NewMemory()
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	e.provider = ragcore.NewProvider(e.provider.Client(), e.corpus, ragcore.ProviderOptions{Log: log})
	svc := retrieval.New(lexical.Build(e.corpus), e.provider, traces, o, log)
	return &service{env: e, svc: svc, traces: traces, logs: logs}
}

func (s *service) lookup(t *testing.T, question, lang string) lookup.Result {
	t.Helper()
	res, err := s.svc.Lookup(context.Background(), lookup.LookupRequest{Question: question, Language: lang, TopK: 5,
		Actor: actor, CorrelationID: "corr-9"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLookupCooperatesWithRAGcore(t *testing.T) {
	t.Parallel()
	s := newService(t, true)
	for _, tc := range []struct{ lang, question, doc string }{
		{"en", "The windscreen has a crack after a stone hit it, how do I report the damage?", "damage-procedure"},
		{"de", "Die Windschutzscheibe hat einen Riss, wie melde ich den Schaden?", "damage-procedure"},
	} {
		res := s.lookup(t, tc.question, tc.lang)
		r := res.Retrieval
		if r.Layer != lookup.LayerBoth || r.L1.Status != lookup.L1OK || r.L1.Provider != "ragcore" ||
			r.L1.ScoreKind != "cosine_similarity" || r.L1.CandidateCount == 0 {
			t.Errorf("%s: retrieval = %+v", tc.lang, r)
		}
		if r.L1.CategoryFilter == nil || *r.L1.CategoryFilter != "damage" {
			t.Errorf("%s: category filter = %v, want damage", tc.lang, r.L1.CategoryFilter)
		}
		if res.Primary == nil || res.Primary.DocumentID != tc.doc || !res.Relevance.SemanticSupport {
			t.Errorf("%s: primary %+v, relevance %+v", tc.lang, res.Primary, res.Relevance)
		}
		l1 := 0
		for _, b := range res.EvidenceBlocks {
			if b.RetrievalLayer != lookup.LayerL0 {
				l1++
				if b.Score.Kind != "cosine_similarity" {
					t.Errorf("%s: L1 block scored as %q", tc.lang, b.Score.Kind)
				}
			}
		}
		if l1 == 0 {
			t.Errorf("%s: no block carries L1 evidence", tc.lang)
		}
	}
	// The category filter reached RAGcore.
	body, _ := s.fake.Requests()[0].Body.(map[string]any)
	if f, _ := body["filters"].(map[string]any); f["category"] != "damage" {
		t.Errorf("filters sent = %v", body["filters"])
	}
}

func TestLookupWithUnmanagedCandidatesOnlyHasNoSemanticSupport(t *testing.T) {
	t.Parallel()
	s := newService(t, false)
	s.fake.AddPassage(ragcorefake.Passage{SourceID: "wiki-en", ExternalID: "damage-procedure", DocumentID: "rc-1",
		Version: "9", Title: "Wiki", Breadcrumb: []string{"Wiki"}, Section: "Cracks", Category: "damage", Language: "en",
		Content: "windscreen crack damage report photos"})
	res := s.lookup(t, "windscreen crack damage report photos", "en")
	if res.Retrieval.L1.Status != lookup.L1Empty || res.Relevance.SemanticSupport || res.Retrieval.Layer != lookup.LayerL0 {
		t.Fatalf("retrieval %+v relevance %+v", res.Retrieval, res.Relevance)
	}
	for _, b := range res.EvidenceBlocks {
		if strings.Contains(b.Content, "windscreen crack damage report photos") {
			t.Errorf("an unmanaged passage reached the blocks: %+v", b)
		}
	}
	if !strings.Contains(s.logs.String(), "dropped by the allow-list") {
		t.Errorf("the drop was not logged: %s", s.logs)
	}
}

// TestDegradedMode injects each RAGcore failure and checks that lookup answers from L0 with the
// l1 status ("unavailable" when RAGcore cannot be reached at all, else "failed") and the error
// class, and that ask answers "unavailable" and invents nothing.
func TestDegradedMode(t *testing.T) {
	t.Parallel()
	// hang is far longer than any bound below: a lookup that waited for RAGcore would show.
	const hang = time.Minute
	cases := []struct {
		name   string
		faults ragcorefake.Faults
		stop   bool
		status lookup.L1Status
		class  string
	}{
		{name: "stopped", stop: true, status: lookup.L1Unavailable, class: "unavailable"},
		{name: "slow", faults: ragcorefake.Faults{Latency: hang}, status: lookup.L1Failed, class: "timeout"},
		{name: "500", faults: ragcorefake.Faults{ErrorRate: 1, ErrorStatus: 500}, status: lookup.L1Failed, class: "unavailable"},
		{name: "503 until the deadline", faults: ragcorefake.Faults{FailNext: 100, FailStatus: 503}, status: lookup.L1Unavailable, class: "unavailable"},
		{name: "429 with a long Retry-After", faults: ragcorefake.Faults{FailNext: 100, FailStatus: 429, RetryAfter: "60"}, status: lookup.L1Failed, class: "unavailable"},
		{name: "401", faults: ragcorefake.Faults{FailNext: 100, FailStatus: 401}, status: lookup.L1Failed, class: "unauthorized"},
		{name: "malformed", faults: ragcorefake.Faults{Malformed: true}, status: lookup.L1Failed, class: "bad_response"},
		{name: "wrong shape", faults: ragcorefake.Faults{WrongShape: true}, status: lookup.L1Failed, class: "bad_response"},
		{name: "slow body", faults: ragcorefake.Faults{SlowBody: hang}, status: lookup.L1Failed, class: "timeout"},
		{name: "huge body", faults: ragcorefake.Faults{HugeBody: 5 << 20}, status: lookup.L1Failed, class: "bad_response"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newService(t, true)
			s.fake.SetFaults(tc.faults)
			if tc.stop {
				s.srv.Close()
			}
			start := time.Now()
			res := s.lookup(t, "The windscreen has a crack, how do I report the damage?", "en")
			took := time.Since(start)
			if res.Retrieval.L1.Status != tc.status || res.Retrieval.L1.ErrorClass != tc.class {
				t.Errorf("l1 = %+v, want %s/%s", res.Retrieval.L1, tc.status, tc.class)
			}
			if res.Primary == nil || res.Primary.DocumentID != "damage-procedure" || res.Primary.RetrievalLayer != lookup.LayerL0 ||
				res.Retrieval.Layer != lookup.LayerL0 || res.Relevance.SemanticSupport || res.EvidenceState == port.StateUnavailable {
				t.Errorf("lookup did not fall back to L0: primary %+v, retrieval %+v, relevance %+v", res.Primary, res.Retrieval, res.Relevance)
			}
			// The deadline holds whatever RAGcore does: a generous bound (ten times the provider
			// timeout, for a loaded machine under -race), far below the minute a hang would take.
			if took > 10*providerTimeout {
				t.Errorf("lookup took %v with a provider timeout of %v", took, providerTimeout)
			}
			tr, err := s.traces.GetTrace(context.Background(), res.InvocationID)
			if err != nil || tr.RetrievalDetails.L1.Status != tc.status || tr.RetrievalDetails.L1.ErrorClass != tc.class ||
				len(tr.RetrievalDetails.L0.Domains) == 0 {
				t.Errorf("trace = %+v, %v: the L0 hints and the failure must be kept", tr.RetrievalDetails, err)
			}

			ans, err := s.svc.Ask(context.Background(), lookup.AskRequest{Question: "How do I report windscreen damage?",
				Language: "en", Actor: actor, CorrelationID: "corr-10"})
			if err != nil || ans.EvidenceState != port.StateUnavailable || len(ans.Sources) != 0 ||
				!strings.Contains(ans.Answer, "No procedure has been inferred") {
				t.Errorf("ask = %+v, %v", ans, err)
			}
			hctx, cancel := context.WithTimeout(context.Background(), providerTimeout)
			h := s.provider.Health(hctx, port.Call{Actor: actor})
			cancel()
			if h.Status == "ok" && tc.faults.Paths == nil {
				t.Errorf("health = %+v while RAGcore fails every request", h)
			}
			for _, leak := range []string{token, "127.0.0.1"} {
				if strings.Contains(s.logs.String(), leak) {
					t.Errorf("logs contain %q: %s", leak, s.logs)
				}
			}
		})
	}
}

func TestAskThroughRAGcoreIsTraced(t *testing.T) {
	t.Parallel()
	s := newService(t, true)
	sec := s.corpus.Document("de", "ev-charging").Sections[0]
	ans, err := s.svc.Ask(context.Background(), lookup.AskRequest{Question: sec.Heading + " " + sec.Content,
		Language: "de", Actor: actor, CorrelationID: "corr-11"})
	if err != nil || ans.EvidenceState != port.StateGrounded || ans.AnswerKind != "generated" || ans.Provider != "ragcore" {
		t.Fatalf("ask = %+v, %v", ans, err)
	}
	tr, err := s.traces.GetTrace(context.Background(), ans.InvocationID)
	if err != nil || tr.Tool != lookup.ToolAsk || len(tr.RetrievalDetails.EvidenceSummaries) == 0 {
		t.Fatalf("trace = %+v, %v", tr, err)
	}
	var answers int
	for _, r := range s.fake.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/answer" {
			answers++
			if r.CorrelationID != "corr-11" {
				t.Errorf("correlation id %q", r.CorrelationID)
			}
		}
	}
	if answers != 1 {
		t.Errorf("%d answer requests", answers)
	}
}
