package ragcore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// fixedReply answers every request with one status and body, without a network.
type fixedReply struct {
	status int
	body   []byte
}

func (f fixedReply) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: f.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(f.body)), Request: r}, nil
}

var fuzzStatuses = []int{200, 202, 400, 401, 404, 429, 500, 503}

// FuzzResponse feeds untrusted RAGcore responses to the client's decoding (every response type)
// and to the provider's use of them. Nothing panics; a response is either refused with a classed
// *Error whose text never holds the token, or used: every candidate and citation that comes
// through names a managed procedure of the question's language, ranks run 1..n, and a grounded
// answer cites at least one managed source.
func FuzzResponse(f *testing.F) {
	corpus, err := knowledge.Embedded()
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		`{"score_semantics":"cosine_similarity","candidates":[{"source_id":"mobilityops-procedures-en","external_id":"damage-procedure",` +
			`"document_id":"rc-1","version":"1.3","title":"Damage handling procedure","breadcrumb":["Damage handling procedure","2. Immediate actions"],` +
			`"section":"2. Immediate actions","category":"damage","content":"Take photos.","score":0.83,"rank":1}]}`,
		`{"score_semantics":"cosine_similarity","candidates":[{"source_id":"other","external_id":"x","version":"1","section":"s","content":"c","score":1}]}`,
		`{"score_semantics":"bm25","candidates":[]}`,
		`{"answer":"Take photos.","evidence_state":"grounded","citations":[{"source_id":"mobilityops-procedures-en","external_id":"damage-procedure","section":"2. Immediate actions"}]}`,
		`{"answer":"","evidence_state":"grounded","citations":[]}`,
		`{"answer":" \n","evidence_state":"grounded","citations":[{"source_id":"mobilityops-procedures-de","external_id":"damage-procedure"}]}`,
		`{"answer":"x","evidence_state":"insufficient","citations":null}`,
		`{"status":"ok"}`, `{"status":"degraded"}`, `{"documents":[]}`,
		`{"documents":[{"document_id":"d","source_id":"s","external_id":"e","status":"active","active_version":{"version":"1","status":"published"}}]}`,
		`{"document_id":"d","version":"1","status":"processing"}`,
		`{"error":{"code":"rate_limited","message":"slow down"}}`, `{"candidates":null}`, `[]`, `null`, `{} {}`, "\xff", `{"score_semantics":"cosine_similarity","candidates":[{"score":1e999}]}`,
	}
	for i, s := range seeds {
		for op := range 4 { // en and de, retrieve and ask
			f.Add([]byte(s), uint8(op), uint8(0))
		}
		f.Add([]byte(s), uint8(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, raw []byte, op, status uint8) {
		for _, out := range []validator{&HealthResponse{}, &DocumentsResponse{}, &RetrieveResponse{}, &AnswerResponse{}, &UploadResponse{}} {
			if err := decodeStrict(raw, out); err == nil {
				if err := out.validate(); err != nil {
					t.Fatalf("accepted a response validate refuses: %v", err)
				}
			}
		}
		st := fuzzStatuses[int(status)%len(fuzzStatuses)]
		c, err := New(Options{BaseURL: "http://ragcore.test", Token: testToken, Namespace: testNS, MaxAttempts: 1,
			HTTPClient: &http.Client{Transport: fixedReply{status: st, body: raw}}})
		if err != nil {
			t.Fatal(err)
		}
		c.sleep = func(context.Context, time.Duration) error { return nil }
		p := NewProvider(c, corpus, ProviderOptions{})
		ctx := context.Background()
		lang := [...]string{"en", "de"}[op%2]
		var callErr error
		switch op % 4 / 2 {
		case 0:
			var cands []port.Candidate
			cands, callErr = p.Retrieve(ctx, port.Query{Question: "flat tyre", Language: lang, TopK: 5})
			for i, cand := range cands {
				if corpus.Document(lang, cand.DocumentID) == nil || !strings.HasPrefix(cand.Source, "procedures/"+lang+"/"+cand.DocumentID+".md#") {
					t.Fatalf("candidate %d is no managed %s procedure: %+v", i, lang, cand)
				}
				if cand.Rank != i+1 {
					t.Fatalf("candidate %d has rank %d", i, cand.Rank)
				}
			}
		case 1:
			var ans port.GroundedAnswer
			ans, callErr = p.Ask(ctx, port.AskQuery{Question: "flat tyre", Language: lang})
			for _, s := range ans.Sources {
				if corpus.Document(lang, s.DocumentID) == nil {
					t.Fatalf("source %+v is no managed %s procedure", s, lang)
				}
			}
			if callErr == nil && ans.EvidenceState == port.StateGrounded && (len(ans.Sources) == 0 || strings.TrimSpace(ans.Answer) == "") {
				t.Fatalf("a grounded answer without a managed source or without text: %+v", ans)
			}
		}
		if callErr != nil {
			var e *Error
			if !errors.As(callErr, &e) || e.Class == "" {
				t.Fatalf("an error without a class: %v", callErr)
			}
			if strings.Contains(callErr.Error(), testToken) {
				t.Fatalf("the token leaked into an error: %v", callErr)
			}
		}
		if st >= 300 && callErr == nil {
			t.Fatalf("status %d was used", st)
		}
	})
}
