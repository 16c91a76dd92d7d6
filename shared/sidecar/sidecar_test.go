package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

const (
	equalsEN      = `{"equals":{"key":"language","value":"en"}}`
	equalsENDmg   = `{"andAll":[{"equals":{"key":"language","value":"en"}},{"equals":{"key":"category","value":"damage"}}]}`
	testTimeout   = 2 * time.Second
	damageSection = "2. Immediate actions"
)

// corpusChunks stores every section of the embedded corpus as a chunk, with the metadata the
// package documentation asks the knowledge base to carry.
func corpusChunks(t *testing.T) (*knowledge.Corpus, []chunk) {
	t.Helper()
	corpus, err := knowledge.Embedded()
	if err != nil {
		t.Fatalf("knowledge.Embedded: %v", err)
	}
	var chunks []chunk
	for _, lang := range knowledge.Languages {
		for _, d := range corpus.Documents(lang) {
			for _, s := range d.Sections {
				chunks = append(chunks, chunk{
					Text: s.Content,
					URI:  "s3://northstar-kb/" + d.Path,
					Metadata: map[string]any{
						"language": d.Language, "category": d.Category, "document_id": d.ID,
						"title": d.Title, "section": s.Heading, "version": d.Version,
					},
				})
			}
		}
	}
	return corpus, chunks
}

func TestQuerySendsFilterAndNumberOfResults(t *testing.T) {
	t.Parallel()
	_, chunks := corpusChunks(t)
	tests := []struct {
		name      string
		q         Query
		filter    string
		n         int
		wantCat   string // every result's category, when the filter names one
		wantCount int
	}{
		{"language only", Query{Question: "damage scratch", Language: "en"}, equalsEN, 5, "", 5},
		{"language and category", Query{Question: "damage scratch", Language: "en", Category: "damage"}, equalsENDmg, 5, "damage", 5},
		{"blank category is no filter", Query{Question: "damage", Language: " en ", Category: "  "}, equalsEN, 5, "", 5},
		{"top k as asked", Query{Question: "vehicle", Language: "en", TopK: 3}, equalsEN, 3, "", 3},
		{"top k capped at 20", Query{Question: "vehicle", Language: "en", TopK: 50}, equalsEN, 20, "", 20},
		{"negative top k is the default", Query{Question: "vehicle", Language: "en", TopK: -1}, equalsEN, 5, "", 5},
		{"german", Query{Question: "Schaden", Language: "de", Category: "damage"},
			`{"andAll":[{"equals":{"key":"language","value":"de"}},{"equals":{"key":"category","value":"damage"}}]}`, 5, "damage", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, chunks...)
			res := newSidecar(t, f.srv.URL, testTimeout).Query(context.Background(), tc.q)
			reqs := f.received()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if got := string(r.Filter); got != tc.filter {
				t.Errorf("filter sent\n got %s\nwant %s", got, tc.filter)
			}
			if r.NumberOfResults != tc.n {
				t.Errorf("numberOfResults = %d, want %d", r.NumberOfResults, tc.n)
			}
			if r.Text != tc.q.Question || r.KnowledgeBaseID != testKB || r.ContentType != "application/json" {
				t.Errorf("request: text %q, knowledge base %q, content type %q", r.Text, r.KnowledgeBaseID, r.ContentType)
			}
			if !authPattern.MatchString(r.Auth) {
				t.Errorf("Authorization %q is not SigV4 for bedrock with the static key", r.Auth)
			}
			if res.Status != domain.SidecarOK || len(res.Results) != tc.wantCount {
				t.Fatalf("status %q (%s), %d results; want ok, %d", res.Status, res.ErrorClass, len(res.Results), tc.wantCount)
			}
			lang := strings.TrimSpace(tc.q.Language)
			for _, c := range res.Results {
				if !strings.HasPrefix(c.Source, "procedures/"+lang+"/") || (tc.wantCat != "" && c.Category != tc.wantCat) {
					t.Errorf("result %d (%s, %s) passed the filter", c.Rank, c.Source, c.Category)
				}
			}
		})
	}
}

func TestQueryRequestBody(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	newSidecar(t, f.srv.URL, testTimeout).Query(context.Background(),
		Query{Question: "How do I report a scratch?", Language: "en", Category: "damage", TopK: 4})
	reqs := f.received()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	want := `{"retrievalConfiguration":{"vectorSearchConfiguration":{"filter":` + equalsENDmg +
		`,"numberOfResults":4}},"retrievalQuery":{"text":"How do I report a scratch?"}}`
	if got := string(reqs[0].Body); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

func TestQueryMapsEveryField(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Fleet Ops  checks\n the vehicle. ", 20)
	// Returned in an order that is not the score order: ranks follow the order returned.
	body := `{"retrievalResults":[
	 {"content":{"text":"Block the vehicle.","type":"TEXT"},"location":{"type":"S3","s3Location":{"uri":"s3://kb/procedures/en/damage-procedure.md"}},
	  "metadata":{"language":"en","category":"damage","document_id":"damage-procedure","title":"Damage handling procedure","section":"2. Immediate actions","version":"1.3","x-amz-bedrock-kb-chunk-id":"c1"},"score":0.42},
	 {"content":{"text":` + jsonString(long) + `},"location":{"type":"S3","s3Location":{"uri":"s3://kb/prefix/procedures/de/theft-and-misuse.md"}},
	  "metadata":{"title":"Diebstahl","section":"4. Escalation & follow-up","version":2},"score":0.61},
	 {"content":{"text":"No section here."},"location":{"type":"S3","s3Location":{"uri":"s3://kb/procedures/en/ev-charging.md"}},
	  "metadata":{"document_id":"ev-charging","title":"EV charging"},"score":0.3},
	 {"content":{"text":"Stray file."},"location":{"type":"S3","s3Location":{"uri":"s3://kb/misc/notes.txt"}},
	  "metadata":{"section":"Intro","category":["not","a","string"]},"score":0.2},
	 {"content":{"text":"Bad id."},"location":{"type":"S3","s3Location":{"uri":"s3://kb/other/x.md"}},
	  "metadata":{"document_id":"../../etc#x"},"score":0.1}
	],"nextToken":"more"}`
	f := newFake(t)
	f.setRespond(rawBody(http.StatusOK, body))
	res := newSidecar(t, f.srv.URL, testTimeout).Query(context.Background(), Query{Question: "q", Language: "en", TopK: 5})

	score := func(v float64) port.Score {
		return port.Score{Value: v, Kind: ScoreKind, HigherIsBetter: true}
	}
	want := []port.Comparable{
		{Source: "procedures/en/damage-procedure.md#2-immediate-actions", DocumentID: "damage-procedure",
			Title: "Damage handling procedure", Breadcrumb: "Damage handling procedure > 2. Immediate actions",
			Category: "damage", Version: "1.3", Rank: 1, Preview: "Block the vehicle.", Score: score(0.42)},
		// No document_id: taken from the S3 key, language too; numbers are read by their text.
		{Source: "procedures/de/theft-and-misuse.md#4-escalation--follow-up", DocumentID: "theft-and-misuse",
			Title: "Diebstahl", Breadcrumb: "Diebstahl > 4. Escalation & follow-up", Version: "2", Rank: 2,
			Preview: preview(long), Score: score(0.61)},
		// No section: no anchor, the breadcrumb is the title.
		{Source: "procedures/en/ev-charging.md", DocumentID: "ev-charging", Title: "EV charging",
			Breadcrumb: "EV charging", Rank: 3, Preview: "No section here.", Score: score(0.3)},
		// No document id to be had: kept, with the location URI as source.
		{Source: "s3://kb/misc/notes.txt", Breadcrumb: "Intro", Rank: 4, Preview: "Stray file.", Score: score(0.2)},
		{Source: "s3://kb/other/x.md", Rank: 5, Preview: "Bad id.", Score: score(0.1)},
	}
	if res.Status != domain.SidecarOK || res.ErrorClass != "" || res.ScoreKind != ScoreKind {
		t.Fatalf("status %q class %q kind %q", res.Status, res.ErrorClass, res.ScoreKind)
	}
	if !reflect.DeepEqual(res.Results, want) {
		for i := range max(len(want), len(res.Results)) {
			var g, w port.Comparable
			if i < len(res.Results) {
				g = res.Results[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("result %d\n got %+v\nwant %+v", i+1, g, w)
			}
		}
	}
	if p := res.Results[1].Preview; utf8.RuneCountInString(p) != PreviewRunes || !strings.HasSuffix(p, "…") {
		t.Errorf("long preview has %d runes: %q", utf8.RuneCountInString(p), p)
	}
	if res.LatencyMs <= 0 {
		t.Errorf("latency %v", res.LatencyMs)
	}
}

func TestQueryKeepsAtMostTopK(t *testing.T) {
	t.Parallel()
	one := `{"content":{"text":"t"},"location":{"type":"S3","s3Location":{"uri":"s3://kb/procedures/en/a-b.md"}},"score":0.5}`
	f := newFake(t)
	f.setRespond(rawBody(http.StatusOK, `{"retrievalResults":[`+one+`,`+one+`,`+one+`]}`))
	res := newSidecar(t, f.srv.URL, testTimeout).Query(context.Background(), Query{Question: "q", Language: "en", TopK: 2})
	if len(res.Results) != 2 || res.Results[1].Rank != 2 {
		t.Errorf("%d results, want 2: %+v", len(res.Results), res.Results)
	}
}

// TestSourcesMatchTheCorpus proves that a knowledge base holding the corpus yields the main path's
// own sources and breadcrumbs, so that Compare can match them.
func TestSourcesMatchTheCorpus(t *testing.T) {
	t.Parallel()
	corpus, chunks := corpusChunks(t)
	f := newFake(t, chunks...)
	s := newSidecar(t, f.srv.URL, testTimeout)
	for _, lang := range knowledge.Languages {
		res := s.Query(context.Background(), Query{Question: "der the und and", Language: lang, TopK: MaxTopK})
		if res.Status != domain.SidecarOK {
			t.Fatalf("%s: status %q %q", lang, res.Status, res.ErrorClass)
		}
		for _, c := range res.Results {
			d := corpus.Document(lang, c.DocumentID)
			if d == nil {
				t.Fatalf("%s: unknown document %q", lang, c.DocumentID)
			}
			found := false
			for i := range d.Sections {
				sec := &d.Sections[i]
				if d.Source(sec) == c.Source {
					found = true
					if c.Breadcrumb != d.Breadcrumb(sec) || c.Title != d.Title || c.Category != d.Category || c.Version != d.Version {
						t.Errorf("%s: %+v disagrees with the corpus", c.Source, c)
					}
				}
			}
			if !found {
				t.Errorf("%s: source %q is no corpus section", lang, c.Source)
			}
		}
	}
}

func TestQueryEmpty(t *testing.T) {
	t.Parallel()
	_, chunks := corpusChunks(t)
	tests := []struct {
		name    string
		respond func(http.ResponseWriter, *http.Request)
		q       Query
	}{
		{"no results", rawBody(http.StatusOK, `{"retrievalResults":[]}`), Query{Question: "q", Language: "en"}},
		{"filter matches nothing", nil, Query{Question: "damage", Language: "en", Category: "no-such-category"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, chunks...)
			if tc.respond != nil {
				f.setRespond(tc.respond)
			}
			res := newSidecar(t, f.srv.URL, testTimeout).Query(context.Background(), tc.q)
			if res.Status != domain.SidecarEmpty || res.ErrorClass != "" || res.Results == nil || len(res.Results) != 0 {
				t.Errorf("got %+v, want empty with an empty (non-nil) list", res)
			}
		})
	}
}

func TestQueryFailures(t *testing.T) {
	t.Parallel()
	errorWithout := func(status int, body string) func(http.ResponseWriter, *http.Request) {
		return rawBody(status, body) // no X-Amzn-ErrorType header
	}
	typed := func(status int, code string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			awsError(w, status, code, "arn:aws:bedrock:eu-central-1:123456789012:knowledge-base/"+testKB+" secret detail")
		}
	}
	tests := []struct {
		name    string
		respond func(http.ResponseWriter, *http.Request)
		class   string
	}{
		{"throttled", typed(http.StatusTooManyRequests, "ThrottlingException"), ClassThrottled},
		{"429 without type", errorWithout(http.StatusTooManyRequests, `{"message":"slow down"}`), ClassThrottled},
		{"access denied", typed(http.StatusForbidden, "AccessDeniedException"), ClassUnauthorized},
		{"invalid token", typed(http.StatusForbidden, "UnrecognizedClientException"), ClassUnauthorized},
		{"401 without type", errorWithout(http.StatusUnauthorized, `{}`), ClassUnauthorized},
		{"knowledge base not found", typed(http.StatusNotFound, "ResourceNotFoundException"), ClassInvalidConfig},
		{"validation", typed(http.StatusBadRequest, "ValidationException"), ClassInvalidConfig},
		{"internal error", typed(http.StatusInternalServerError, "InternalServerException"), ClassUnavailable},
		{"gateway html page", errorWithout(http.StatusBadGateway, "<html>bad gateway</html>"), ClassUnavailable},
		{"dependency failed", typed(http.StatusFailedDependency, "DependencyFailedException"), ClassUnavailable},
		{"malformed json", rawBody(http.StatusOK, `{"retrievalResults":[{"content":`), ClassBadResponse},
		{"not json", rawBody(http.StatusOK, `<html>hello</html>`), ClassBadResponse},
		{"wrong shape", rawBody(http.StatusOK, `{"retrievalResults":"many"}`), ClassBadResponse},
		{"score of wrong type", rawBody(http.StatusOK, `{"retrievalResults":[{"content":{"text":"x"},"score":"high"}]}`), ClassBadResponse},
		{"result without score", rawBody(http.StatusOK, `{"retrievalResults":[{"content":{"text":"x"}}]}`), ClassBadResponse},
		{"result without text", rawBody(http.StatusOK, `{"retrievalResults":[{"content":{"type":"ROW"},"score":0.5}]}`), ClassBadResponse},
		{"NaN score", rawBody(http.StatusOK, `{"retrievalResults":[{"content":{"text":"x"},"score":"NaN"}]}`), ClassBadResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.setRespond(tc.respond)
			var logs bytes.Buffer
			s := newSidecar(t, f.srv.URL, testTimeout, func(o *Options) {
				o.Log = slog.New(slog.NewJSONHandler(&logs, nil))
			})
			question := "customer Jane Example reports a scratch"
			res := s.Query(context.Background(), Query{Question: question, Language: "en"})
			if res.Status != domain.SidecarFailed || res.ErrorClass != tc.class {
				t.Errorf("status %q class %q, want failed %q", res.Status, res.ErrorClass, tc.class)
			}
			if n := len(f.received()); n != 1 {
				t.Errorf("%d requests, want exactly 1 (no retries)", n)
			}
			if res.ScoreKind != ScoreKind || res.Results == nil || len(res.Results) != 0 {
				t.Errorf("failed result %+v: want the score kind and an empty list", res)
			}
			out, _ := json.Marshal(res)
			host := strings.TrimPrefix(f.srv.URL, "http://")
			for _, leak := range []string{"arn:", "secret", host, testKB, "Exception"} {
				if strings.Contains(string(out), leak) {
					t.Errorf("result %s carries %q", out, leak)
				}
			}
			if strings.Contains(logs.String(), "Jane") || !strings.Contains(logs.String(), `"error_class":"`+tc.class+`"`) {
				t.Errorf("log %s: want the class and never the question", logs.String())
			}
		})
	}
}

func TestQueryTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	// The endpoints below never answer by themselves, so a query that ignored its deadline would
	// never return: a generous margin (for a loaded machine under -race) tells the two apart.
	const margin = 10 * timeout
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	slowBody := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"retrievalResults":[`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	tests := []struct {
		name    string
		respond func(http.ResponseWriter, *http.Request)
		caller  time.Duration // the caller's own deadline; 0 = none
		client  bool          // a caller-supplied HTTP client without a timeout
	}{
		{"hanging endpoint", hang, 0, false},
		{"hanging endpoint, own http client", hang, 0, true},
		{"body never finishes", slowBody, 0, false},
		{"caller's deadline is shorter", hang, 100 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.setRespond(tc.respond)
			s := newSidecar(t, f.srv.URL, timeout, func(o *Options) {
				if tc.client {
					o.HTTPClient = &http.Client{}
				}
			})
			ctx := context.Background()
			if tc.caller > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.caller)
				defer cancel()
			}
			start := time.Now()
			res := s.Query(ctx, Query{Question: "q", Language: "en"})
			elapsed := time.Since(start)
			if res.Status != domain.SidecarFailed || res.ErrorClass != ClassTimeout {
				t.Errorf("status %q class %q, want failed timeout", res.Status, res.ErrorClass)
			}
			if elapsed > timeout+margin {
				t.Errorf("returned after %s, want within %s", elapsed, timeout+margin)
			}
			if n := len(f.received()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestQueryCanceledCaller(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	arrived := make(chan struct{})
	var once atomic.Bool
	f.setRespond(func(w http.ResponseWriter, r *http.Request) {
		if once.CompareAndSwap(false, true) {
			close(arrived)
		}
		<-r.Context().Done()
	})
	s := newSidecar(t, f.srv.URL, testTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	res := s.Query(ctx, Query{Question: "q", Language: "en"})
	if res.Status != domain.SidecarFailed || res.ErrorClass != ClassCanceled {
		t.Errorf("status %q class %q, want failed canceled", res.Status, res.ErrorClass)
	}
}

func TestQueryUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	res := newSidecar(t, url, testTimeout).Query(context.Background(), Query{Question: "q", Language: "en"})
	if res.Status != domain.SidecarFailed || res.ErrorClass != ClassUnavailable {
		t.Errorf("status %q class %q, want failed unavailable", res.Status, res.ErrorClass)
	}
}

func TestQueryNotSent(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	s := newSidecar(t, f.srv.URL, testTimeout)
	tests := []struct {
		name string
		s    *Sidecar
		q    Query
	}{
		{"nil sidecar", nil, Query{Question: "q", Language: "en"}},
		{"zero sidecar", &Sidecar{}, Query{Question: "q", Language: "en"}},
		{"blank question", s, Query{Question: " \n", Language: "en"}},
		{"no language", s, Query{Question: "q", Category: "damage"}},
	}
	for _, tc := range tests {
		res := tc.s.Query(context.Background(), tc.q)
		if res.Status != domain.SidecarFailed || res.ErrorClass != ClassInvalidConfig || res.Results == nil {
			t.Errorf("%s: %+v, want failed invalid_config", tc.name, res)
		}
	}
	if n := len(f.received()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	tests := []struct {
		name        string
		mod         func(*Options)
		wantTimeout time.Duration
		wantErr     string // "" = success
	}{
		{"valid", func(*Options) {}, time.Second, ""},
		{"default timeout", func(o *Options) { o.Timeout = 0 }, config.DefaultSidecarTimeout, ""},
		{"missing knowledge base id", func(o *Options) { o.KnowledgeBaseID = " " }, 0, "BEDROCK_KNOWLEDGE_BASE_ID is empty"},
		{"malformed knowledge base id", func(o *Options) { o.KnowledgeBaseID = "kb/../x" }, 0, "BEDROCK_KNOWLEDGE_BASE_ID"},
		{"too long knowledge base id", func(o *Options) { o.KnowledgeBaseID = "ABCDEFGHIJK" }, 0, "BEDROCK_KNOWLEDGE_BASE_ID"},
		{"negative timeout", func(o *Options) { o.Timeout = -time.Second }, 0, "timeout"},
		{"endpoint without scheme", func(o *Options) { o.Endpoint = "localhost:4566" }, 0, "BEDROCK_ENDPOINT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{KnowledgeBaseID: testKB, Endpoint: srv.URL, Region: testRegion, Timeout: time.Second}
			tc.mod(&o)
			s, err := New(context.Background(), o)
			if tc.wantErr != "" {
				if s != nil || !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("New = %v, %v; want ErrInvalidOptions naming %q", s, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if s.timeout != tc.wantTimeout {
				t.Errorf("timeout %s, want %s", s.timeout, tc.wantTimeout)
			}
		})
	}
	t.Cleanup(func() { // after the parallel subtests
		if n := hits.Load(); n != 0 {
			t.Errorf("New made %d network calls, want none", n)
		}
	})
}

func TestPreview(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"  short \n\t text  ", "short text"},
		{strings.Repeat("a", 200), strings.Repeat("a", 200)},
		{strings.Repeat("a", 201), strings.Repeat("a", 199) + "…"},
		{strings.Repeat("ä", 250), strings.Repeat("ä", 199) + "…"},
		{strings.Repeat("a", 198) + " bcd", strings.Repeat("a", 198) + "…"}, // no space before the ellipsis
	}
	for _, tc := range tests {
		if got := preview(tc.in); got != tc.want {
			t.Errorf("preview(%d runes) = %q, want %q", utf8.RuneCountInString(tc.in), got, tc.want)
		}
	}
}

func TestProcedureKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ uri, lang, id string }{
		{"s3://bucket/procedures/en/damage-procedure.md", "en", "damage-procedure"},
		{"s3://bucket/a/b/procedures/de/ev-charging.md", "de", "ev-charging"},
		{"procedures/en/x1.md", "en", "x1"},
		{"s3://bucket/procedures/en/damage-procedure.txt", "", ""},
		{"s3://bucket/other/en/damage-procedure.md", "", ""},
		{"s3://bucket/procedures/en/..md", "", ""},
		{"s3://bucket/procedures/e n/x.md", "", ""},
		{"", "", ""},
	}
	for _, tc := range tests {
		if lang, id := procedureKey(tc.uri); lang != tc.lang || id != tc.id {
			t.Errorf("procedureKey(%q) = %q, %q; want %q, %q", tc.uri, lang, id, tc.lang, tc.id)
		}
	}
}

func FuzzMapping(f *testing.F) {
	f.Add("s3://bucket/procedures/en/damage-procedure.md", "2. Immediate actions", strings.Repeat("é ", 150))
	f.Add("s3://b/procedures/../x.md#y", "##", "\xff\xfe")
	f.Fuzz(func(t *testing.T, uri, section, text string) {
		p := preview(text)
		if n := utf8.RuneCountInString(p); n > PreviewRunes {
			t.Fatalf("preview has %d runes", n)
		}
		lang, id := procedureKey(uri)
		if (lang == "") != (id == "") || strings.ContainsAny(lang+id, "/#") {
			t.Fatalf("procedureKey(%q) = %q, %q", uri, lang, id)
		}
		a := knowledge.Anchor(section)
		if strings.ContainsAny(a, "#/") {
			t.Fatalf("anchor %q", a)
		}
	})
}

func BenchmarkQuery(b *testing.B) {
	body := `{"retrievalResults":[` + strings.Repeat(`{"content":{"text":"Block the vehicle."},"location":{"type":"S3","s3Location":{"uri":"s3://kb/procedures/en/damage-procedure.md"}},"metadata":{"document_id":"damage-procedure","section":"2. Immediate actions"},"score":0.4},`, 4) +
		`{"content":{"text":"x"},"score":0.1}]}`
	srv := httptest.NewServer(http.HandlerFunc(rawBody(http.StatusOK, body)))
	defer srv.Close()
	s := newSidecar(b, srv.URL, testTimeout)
	q := Query{Question: "scratch", Language: "en", Category: "damage"}
	b.ReportAllocs()
	for b.Loop() {
		if res := s.Query(context.Background(), q); res.Status != domain.SidecarOK {
			b.Fatalf("status %q %q", res.Status, res.ErrorClass)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestPlainRequestBody: the HTTP client never sees the SDK body's WriterTo (see plainBodyClient).
func TestPlainRequestBody(t *testing.T) {
	t.Parallel()
	var sawWriterTo, sawBody atomic.Bool
	s := newSidecar(t, "http://127.0.0.1:9", testTimeout, func(o *Options) {
		o.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			_, ok := r.Body.(io.WriterTo)
			sawWriterTo.Store(ok)
			sawBody.Store(r.Body != nil)
			return nil, errors.New("stop here")
		})}
	})
	s.Query(context.Background(), Query{Question: "q", Language: "en"})
	if !sawBody.Load() || sawWriterTo.Load() {
		t.Errorf("body sent: %v, with WriterTo: %v; want a plain body", sawBody.Load(), sawWriterTo.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestImmediateLargeAnswers: answers that start the moment the request body is read and stream
// in pieces arrive whole, query after query (the connection is not torn down mid-body).
func TestImmediateLargeAnswers(t *testing.T) {
	t.Parallel()
	item := `{"content":{"text":` + jsonString(strings.Repeat("x", 4000)) + `},"score":0.5}`
	f := newFake(t)
	f.setRespond(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"retrievalResults":[`+item)
		for range 19 {
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, ","+item)
		}
		_, _ = io.WriteString(w, `]}`)
	})
	s := newSidecar(t, f.srv.URL, testTimeout)
	for i := range 200 {
		if res := s.Query(context.Background(), Query{Question: "q", Language: "en", TopK: 20}); res.Status != domain.SidecarOK || len(res.Results) != 20 {
			t.Fatalf("query %d: %q %q, %d results", i+1, res.Status, res.ErrorClass, len(res.Results))
		}
	}
}
