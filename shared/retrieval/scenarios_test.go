package retrieval_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

var (
	ixOnce sync.Once
	ix     *lexical.Index
)

func index(t testing.TB) *lexical.Index {
	ixOnce.Do(func() {
		c, err := knowledge.Embedded()
		if err != nil {
			panic(err)
		}
		ix = lexical.Build(c)
	})
	return ix
}

// provider is a KnowledgeProvider for the scenarios: the demo provider's real BM25 unless a
// scenario replaces its answer, and a record of every query it received.
type provider struct {
	*demo.Provider
	semantic bool
	err      error
	cands    func(q port.Query) []port.Candidate

	mu      sync.Mutex
	queries []port.Query
}

func (p *provider) Semantic() bool { return p.semantic }

func (p *provider) Retrieve(ctx context.Context, q port.Query) ([]port.Candidate, error) {
	p.mu.Lock()
	p.queries = append(p.queries, q)
	p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	if p.cands != nil {
		return p.cands(q), nil
	}
	return p.Provider.Retrieve(ctx, q)
}

func (p *provider) calls() []port.Query {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.queries)
}

type fixture struct {
	svc    *retrieval.Service
	p      *provider
	traces *store.Memory
	logs   *bytes.Buffer
}

func newFixture(t *testing.T, opts ...func(*retrieval.Options)) *fixture {
	t.Helper()
	ix := index(t)
	p := &provider{Provider: demo.New(ix)}
	o := retrieval.DefaultOptions()
	for _, f := range opts {
		f(&o)
	}
	logs := &bytes.Buffer{}
	traces := store.NewMemory()
	return &fixture{svc: retrieval.New(ix, p, traces, o, slog.New(slog.NewJSONHandler(logs, nil))), p: p, traces: traces, logs: logs}
}

func (f *fixture) lookup(t *testing.T, lang, q string) lookup.Result {
	t.Helper()
	res, err := f.svc.Lookup(context.Background(), lookup.LookupRequest{Question: q, Language: lang, TopK: 5,
		Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}, CorrelationID: "corr-1"})
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	return res
}

// lookupSignals is lookup with the measurements the assessment decided on.
func (f *fixture) lookupSignals(t *testing.T, lang, q string) (lookup.Result, retrieval.Signals) {
	t.Helper()
	res, sg, err := f.svc.LookupSignals(context.Background(), lookup.LookupRequest{Question: q, Language: lang, TopK: 5,
		Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}, CorrelationID: "corr-1"})
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	return res, sg
}

func (f *fixture) trace(t *testing.T, id string) lookup.Trace {
	t.Helper()
	tr, err := f.traces.GetTrace(context.Background(), id)
	if err != nil {
		t.Fatalf("trace %s: %v", id, err)
	}
	return tr
}

const damageQuestion = "There is a deep scratch and a dent on the rear door, how do I report the damage?"

// Scenario: L0 produces traceable hint data.
func TestScenarioL0ProducesTraceableHintData(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", "Damage handling procedure: windscreen crack, where do the photos go?")
	l0 := res.Retrieval.L0
	if !slices.Contains(l0.MatchedTitles, "Damage handling procedure") {
		t.Errorf("matched titles %v", l0.MatchedTitles)
	}
	if !slices.Contains(l0.MatchedKeywords, "windscreen") {
		t.Errorf("matched keywords %v", l0.MatchedKeywords)
	}
	if !slices.Equal(l0.Domains, []string{"damage"}) {
		t.Errorf("domains %v", l0.Domains)
	}
	if len(l0.Entities) == 0 {
		t.Errorf("no entities in %+v", l0)
	}
}

// Scenario: L0 does not bypass semantic retrieval by default.
func TestScenarioL0DoesNotBypassSemanticRetrievalByDefault(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", "windscreen")
	if len(f.p.calls()) != 1 {
		t.Fatalf("L1 was called %d times after a single L0 match, want 1", len(f.p.calls()))
	}
	if res.Retrieval.L1.Status != lookup.L1OK || res.Retrieval.Layer != lookup.LayerBoth {
		t.Errorf("L1 %+v, layer %s", res.Retrieval.L1, res.Retrieval.Layer)
	}

	off := newFixture(t, func(o *retrieval.Options) { o.L1Enabled = false })
	res = off.lookup(t, "en", "windscreen")
	if len(off.p.calls()) != 0 || res.Retrieval.L1.Status != lookup.L1Disabled {
		t.Fatalf("disabled L1 was called or not reported: %+v", res.Retrieval.L1)
	}
	if res.Primary == nil || res.Primary.DocumentID != "damage-procedure" || res.Retrieval.Layer != lookup.LayerL0 {
		t.Errorf("with L1 disabled the L0 evidence must answer: %+v", res.Primary)
	}
}

// Scenario: single domain filter.
func TestScenarioSingleDomainFilter(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "de", "Kratzer und Delle an der Tür, Schaden melden")
	if !slices.Equal(res.Retrieval.L0.Domains, []string{"damage"}) {
		t.Fatalf("domains %v", res.Retrieval.L0.Domains)
	}
	q := f.p.calls()[0]
	if q.Category != "damage" || res.Retrieval.L1.CategoryFilter == nil || *res.Retrieval.L1.CategoryFilter != "damage" {
		t.Fatalf("L1 filter %q, reported %v", q.Category, res.Retrieval.L1.CategoryFilter)
	}
	if len(res.EvidenceBlocks) == 0 {
		t.Fatal("the filtered lookup found no blocks")
	}
	for _, b := range res.EvidenceBlocks {
		if b.Category != "damage" {
			t.Errorf("block outside the filter: %s", b.Source)
		}
	}
}

// Scenario: ambiguous domain fallback (several domains, and none).
func TestScenarioAmbiguousDomainFallback(t *testing.T) {
	t.Run("several domains", func(t *testing.T) {
		f := newFixture(t)
		res := f.lookup(t, "en", "the stolen car was tracked by GPS and we got a speed camera fine and a parking ticket for it")
		if len(res.Retrieval.L0.Domains) < 2 {
			t.Fatalf("domains %v, want several", res.Retrieval.L0.Domains)
		}
		if q := f.p.calls()[0]; q.Category != "" || res.Retrieval.L1.CategoryFilter != nil {
			t.Fatalf("L1 was filtered by %q", q.Category)
		}
	})
	t.Run("no domain", func(t *testing.T) {
		f := newFixture(t)
		res := f.lookup(t, "en", "what is the capital of France?")
		if len(res.Retrieval.L0.Domains) != 0 {
			t.Fatalf("domains %v", res.Retrieval.L0.Domains)
		}
		if q := f.p.calls()[0]; q.Category != "" {
			t.Fatalf("L1 was filtered by %q", q.Category)
		}
	})
}

// Scenario: L1 has no results.
func TestScenarioL1HasNoResults(t *testing.T) {
	f := newFixture(t)
	f.p.cands = func(port.Query) []port.Candidate { return nil }
	res := f.lookup(t, "en", damageQuestion)
	if res.Primary == nil || res.Primary.DocumentID != "damage-procedure" || res.Primary.RetrievalLayer != lookup.LayerL0 {
		t.Fatalf("primary %+v, want an L0 block of damage-procedure", res.Primary)
	}
	if res.Relevance.SemanticSupport || !strings.Contains(res.Relevance.Reason, "L1 returned no candidates") {
		t.Errorf("relevance claims L1 support: %+v", res.Relevance)
	}
	if res.Retrieval.L1.Status != lookup.L1Empty || res.Retrieval.Layer != lookup.LayerL0 {
		t.Errorf("retrieval %+v", res.Retrieval)
	}
	for _, b := range res.EvidenceBlocks {
		if slices.ContainsFunc(b.HitReasons, func(r string) bool { return strings.HasPrefix(r, "l1:") }) {
			t.Errorf("block %s has an L1 hit reason", b.Source)
		}
	}
}

// Scenario: L1 fails.
func TestScenarioL1Fails(t *testing.T) {
	f := newFixture(t)
	f.p.err = errors.New("connection reset by peer ragcore.internal:443")
	res := f.lookup(t, "en", damageQuestion)
	if res.Primary == nil || res.Primary.DocumentID != "damage-procedure" || res.Primary.RetrievalLayer != lookup.LayerL0 {
		t.Fatalf("primary %+v, want an L0 block of damage-procedure", res.Primary)
	}
	if res.Retrieval.L1.Status != lookup.L1Failed || res.Retrieval.L1.ErrorClass != "error" {
		t.Errorf("l1 %+v", res.Retrieval.L1)
	}
	tr := f.trace(t, res.InvocationID)
	if !slices.Contains(tr.RetrievalDetails.L0.MatchedKeywords, "scratch") || len(tr.RetrievalDetails.L0.Domains) == 0 {
		t.Errorf("trace lost the L0 hints: %+v", tr.RetrievalDetails.L0)
	}
	if tr.RetrievalDetails.L1.Status != lookup.L1Failed {
		t.Errorf("trace L1 %+v", tr.RetrievalDetails.L1)
	}
	if strings.Contains(mustJSON(t, res), "ragcore.internal") {
		t.Error("the provider's error text leaked into the response")
	}
}

// Degraded mode: the provider is down and L0 has nothing, so the answer is unavailable.
func TestProviderDownWithoutL0EvidenceIsUnavailable(t *testing.T) {
	f := newFixture(t)
	f.p.err = errors.Join(port.ErrUnavailable, context.DeadlineExceeded)
	res := f.lookup(t, "en", "what is the capital of France?")
	if res.EvidenceState != port.StateUnavailable || res.Primary != nil || len(res.Supplement) != 0 {
		t.Fatalf("state %s primary %v", res.EvidenceState, res.Primary)
	}
	if res.Retrieval.L1.Status != lookup.L1Unavailable || res.Retrieval.Layer != lookup.LayerNone {
		t.Errorf("retrieval %+v", res.Retrieval)
	}
}

// Scenario: retrieval details include L0 hints.
func TestScenarioRetrievalDetailsIncludeL0Hints(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", damageQuestion)
	tr := f.trace(t, res.InvocationID)
	d := tr.RetrievalDetails
	if !slices.Equal(d.L0.MatchedKeywords, res.Retrieval.L0.MatchedKeywords) || !slices.Equal(d.L0.Domains, res.Retrieval.L0.Domains) ||
		!slices.Equal(d.L0.Entities, res.Retrieval.L0.Entities) || !slices.Equal(d.L0.MatchedTitles, res.Retrieval.L0.MatchedTitles) {
		t.Fatalf("trace hints %+v differ from the response's %+v", d.L0, res.Retrieval.L0)
	}
	if tr.Tool != lookup.ToolLookup || tr.ActorID != "agent-7" || tr.Language != "en" {
		t.Errorf("trace header %+v", tr)
	}
}

// Scenario: retrieval layer reflects cooperating retrieval.
func TestScenarioRetrievalLayerReflectsCooperatingRetrieval(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", damageQuestion)
	if res.Retrieval.Layer != lookup.LayerBoth || f.trace(t, res.InvocationID).RetrievalDetails.Layer != lookup.LayerBoth {
		t.Fatalf("layer %s", res.Retrieval.Layer)
	}
	res = f.lookup(t, "en", "xylophone quarantine")
	if res.Retrieval.Layer != lookup.LayerNone {
		t.Errorf("no evidence: layer %s", res.Retrieval.Layer)
	}
}

// Scenario: evidence block contains source metadata.
func TestScenarioEvidenceBlockContainsSourceMetadata(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "de", "Ladekabel steckt fest an der Ladesäule")
	if len(res.EvidenceBlocks) == 0 {
		t.Fatal("no evidence")
	}
	c, _ := knowledge.Embedded()
	for i, b := range res.EvidenceBlocks {
		d := c.Document("de", b.DocumentID)
		if d == nil {
			t.Fatalf("block %d: unknown document %q", i, b.DocumentID)
		}
		var sec *knowledge.Section
		for j := range d.Sections {
			if d.Sections[j].Heading == b.Section {
				sec = &d.Sections[j]
			}
		}
		if sec == nil {
			t.Fatalf("block %d: unknown section %q", i, b.Section)
		}
		if b.Source != d.Source(sec) || b.Title != d.Title || b.Breadcrumb != d.Breadcrumb(sec) ||
			b.Version != d.Version || b.EffectiveDate != d.EffectiveDate || b.Category != d.Category {
			t.Errorf("block %d metadata %+v", i, b)
		}
		if b.Content != sec.Content {
			t.Errorf("block %d content is not the verbatim section", i)
		}
		if b.RetrievalLayer == "" || len(b.HitReasons) == 0 || b.Score.Kind == "" || !b.Score.HigherIsBetter || b.Rank != i+1 {
			t.Errorf("block %d: layer %q reasons %v score %+v rank %d", i, b.RetrievalLayer, b.HitReasons, b.Score, b.Rank)
		}
	}
}

// Scenario: compatibility fields remain available.
func TestScenarioCompatibilityFieldsRemainAvailable(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", damageQuestion)
	if res.Primary == nil || res.Primary.Source != res.EvidenceBlocks[0].Source {
		t.Fatalf("primary %+v", res.Primary)
	}
	if len(res.Supplement) != len(res.EvidenceBlocks)-1 || res.Supplement[0].Source != res.EvidenceBlocks[1].Source {
		t.Fatalf("supplement does not follow the primary")
	}
	body := mustJSON(t, f.lookup(t, "en", "xylophone quarantine"))
	if !strings.Contains(body, `"primary":null`) || !strings.Contains(body, `"supplement":[]`) {
		t.Errorf("no evidence must give primary null and supplement []: %s", body)
	}
}

// Scenario: duplicate source deduplication.
func TestScenarioDuplicateSourceDeduplication(t *testing.T) {
	f := newFixture(t)
	c, _ := knowledge.Embedded()
	d := c.Document("en", "damage-procedure")
	cand := func(s int, score float64) port.Candidate {
		sec := &d.Sections[s]
		return port.Candidate{DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate, Title: d.Title,
			Section: sec.Heading, Anchor: sec.Anchor, Category: d.Category, Source: d.Source(sec), Content: sec.Content, Score: score}
	}
	var l0Source string
	f.p.cands = func(port.Query) []port.Candidate {
		// The same section twice (as a provider returning two chunks of it would), and another.
		out := []port.Candidate{cand(0, 3), cand(1, 2), cand(2, 1), cand(1, 1.5)}
		return out
	}
	res := f.lookup(t, "en", "scratch dent photo")
	seen := map[string]bool{}
	for _, b := range res.EvidenceBlocks {
		if seen[b.Source] {
			t.Fatalf("duplicate block %s", b.Source)
		}
		seen[b.Source] = true
		if b.RetrievalLayer == lookup.LayerBoth {
			// The procedure's front-matter hits are on its first block only; every block has
			// L1's reason and the words its own section holds.
			front := slices.ContainsFunc(b.HitReasons, func(r string) bool { return strings.HasPrefix(r, "l0:") })
			if front != (l0Source == "") || !slices.Contains(b.HitReasons, "l1:bm25") {
				t.Errorf("block %s: reasons %v (first of its procedure: %v)", b.Source, b.HitReasons, l0Source == "")
			}
			l0Source = cmp.Or(l0Source, b.Source)
		}
		sec, _ := knowledge.Embedded()
		for _, r := range b.HitReasons {
			word, ok := strings.CutPrefix(r, "section:")
			if ok && !strings.Contains(strings.ToLower(sec.Document("en", b.DocumentID).Sections[slices.IndexFunc(
				sec.Document("en", b.DocumentID).Sections, func(x knowledge.Section) bool { return x.Heading == b.Section })].Content), word) {
				t.Errorf("block %s names %q, which its section does not hold", b.Source, word)
			}
		}
	}
	if l0Source == "" {
		t.Fatalf("no block merged L0 and L1: %+v", res.EvidenceBlocks)
	}
	if !seen[d.Source(&d.Sections[0])] || !seen[d.Source(&d.Sections[1])] || !seen[d.Source(&d.Sections[2])] {
		t.Errorf("distinct sections of one document must stay distinct: %v", seen)
	}
	if res.Retrieval.CandidateCount <= res.Retrieval.FinalBlockCount {
		t.Errorf("candidate count %d must exceed the final count %d after merging", res.Retrieval.CandidateCount, res.Retrieval.FinalBlockCount)
	}
}

// Scenario: postprocess count tracking.
func TestScenarioPostprocessCountTracking(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", damageQuestion)
	d := f.trace(t, res.InvocationID).RetrievalDetails
	if d.FinalBlockCount != len(res.EvidenceBlocks) || d.FinalBlockCount == 0 || d.FinalBlockCount > 5 {
		t.Errorf("final block count %d, blocks %d", d.FinalBlockCount, len(res.EvidenceBlocks))
	}
	if d.CandidateCount != res.Retrieval.CandidateCount || d.CandidateCount < d.FinalBlockCount ||
		d.CandidateCount < res.Retrieval.L1.CandidateCount {
		t.Errorf("candidate count %d (L1 %d)", d.CandidateCount, res.Retrieval.L1.CandidateCount)
	}
}

// Scenario: evidence summaries are persisted; full content is not duplicated.
func TestScenarioEvidenceSummariesArePersisted(t *testing.T) {
	f := newFixture(t)
	question := "Customer reports a cracked windscreen and a scratched bumper after parking"
	res := f.lookup(t, "en", question)
	tr := f.trace(t, res.InvocationID)
	sums := tr.RetrievalDetails.EvidenceSummaries
	if len(sums) != len(res.EvidenceBlocks) {
		t.Fatalf("%d summaries for %d blocks", len(sums), len(res.EvidenceBlocks))
	}
	for i, s := range sums {
		b := res.EvidenceBlocks[i]
		if s.Source != b.Source || s.Title != b.Title || s.RetrievalLayer != b.RetrievalLayer || s.Score == nil || *s.Score != b.Score ||
			!slices.Equal(s.HitReasons, b.HitReasons) {
			t.Errorf("summary %d %+v does not match block %+v", i, s, b)
		}
		if n := len([]rune(s.Content)); n > lookup.SummaryChars {
			t.Errorf("summary %d content has %d characters", i, n)
		}
		if len([]rune(b.Content)) > lookup.SummaryChars && s.Content == b.Content {
			t.Errorf("summary %d holds the full content", i)
		}
	}
	raw := mustJSON(t, tr)
	if strings.Contains(raw, question) || strings.Contains(raw, "windscreen and a scratched") {
		t.Error("the trace holds the question text")
	}
	if tr.QuestionChars != len(question) || len(tr.QuestionSHA256) != 64 {
		t.Errorf("question hash/length %q %d", tr.QuestionSHA256, tr.QuestionChars)
	}
	if !tr.ExpiresAt.After(tr.CreatedAt.Add(29 * 24 * 3600e9)) {
		t.Errorf("retention %v..%v", tr.CreatedAt, tr.ExpiresAt)
	}
}

func TestOutOfDomainQuestionsStayInsufficient(t *testing.T) {
	f := newFixture(t)
	for _, q := range []struct{ lang, q string }{
		{"en", "What is the capital of France?"},
		{"en", "How do I bake sourdough bread?"},
		{"de", "Wie hoch ist die Zugspitze?"},
		{"de", "Wann ist das Sommerfest der Firma?"},
	} {
		res := f.lookup(t, q.lang, q.q)
		if res.EvidenceState != port.StateInsufficient || res.Relevance.Assessment == "strong" {
			t.Errorf("%q: state %s, relevance %+v", q.q, res.EvidenceState, res.Relevance)
		}
	}
}

func TestGroundedAnswerForAClearQuestion(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", "windscreen crack: which form do we fill in for the damage report?")
	if res.EvidenceState != port.StateGrounded || res.Primary.DocumentID != "damage-procedure" {
		t.Fatalf("state %s primary %s relevance %+v", res.EvidenceState, res.Primary.DocumentID, res.Relevance)
	}
	if res.Relevance.SemanticSupport {
		t.Error("the demo provider is lexical: no semantic support")
	}
}

func TestSemanticSupportOnlyFromASemanticProvider(t *testing.T) {
	f := newFixture(t)
	f.p.semantic = true
	res := f.lookup(t, "en", damageQuestion)
	if !res.Relevance.SemanticSupport {
		t.Errorf("semantic candidates in the blocks must give semantic support: %+v", res.Relevance)
	}
	f.p.cands = func(port.Query) []port.Candidate { return nil }
	if res := f.lookup(t, "en", damageQuestion); res.Relevance.SemanticSupport {
		t.Error("no L1 block, yet semantic support claimed")
	}
}

func TestUnsupportedLanguage(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.Lookup(context.Background(), lookup.LookupRequest{Question: "x", Language: "fr", TopK: 5})
	if !errors.Is(err, domain.ErrUnsupportedLanguage) {
		t.Fatalf("err = %v", err)
	}
}

// failingTraces fails every write; last is the trace it was given.
type failingTraces struct {
	*store.Memory
	last lookup.Trace
}

func (f *failingTraces) PutTrace(_ context.Context, t lookup.Trace) error {
	f.last = t
	return errors.New("ProvisionedThroughputExceededException")
}

type counter struct {
	n    map[string]int
	dims []map[string]string
	vals map[string]float64
}

func (c *counter) Count(name string, n int) { c.n[name] += n }

func (c *counter) Emit(dims map[string]string, ms ...domain.Metric) {
	c.dims = append(c.dims, dims)
	for _, m := range ms {
		c.vals[m.Name] += m.Value
	}
}

func TestFailingTraceWriteNeverFailsTheLookup(t *testing.T) {
	ix := index(t)
	logs := &bytes.Buffer{}
	m := &counter{n: map[string]int{}, vals: map[string]float64{}}
	o := retrieval.DefaultOptions()
	o.Metrics = m
	failed := &failingTraces{Memory: store.NewMemory()}
	svc := retrieval.New(ix, demo.New(ix), failed, o, slog.New(slog.NewJSONHandler(logs, nil)))
	res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: damageQuestion, Language: "en", TopK: 5, CorrelationID: "c-9"})
	if err != nil || res.Primary == nil {
		t.Fatalf("lookup failed with the trace store: %v", err)
	}
	if svc.TraceFailures() != 1 || m.n["TraceWriteFailures"] != 1 {
		t.Errorf("failure not counted: %d / %v", svc.TraceFailures(), m.n)
	}
	if !strings.Contains(logs.String(), res.InvocationID) || !strings.Contains(logs.String(), "c-9") {
		t.Errorf("log lacks the invocation and correlation ids: %s", logs)
	}
	if strings.Contains(logs.String(), damageQuestion) || strings.Contains(logs.String(), "deep scratch") {
		t.Error("the log holds the question text")
	}
	// The trace is in the failure's log line, whole: it decodes to the trace the store was given.
	var line struct {
		Level string         `json:"level"`
		Trace map[string]any `json:"trace"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line); err != nil {
		t.Fatalf("the failure is not one JSON line: %v\n%s", err, logs)
	}
	got, err := lookup.TraceFromItem(line.Trace)
	if err != nil {
		t.Fatalf("the logged trace does not decode: %v", err)
	}
	want := failed.last
	if line.Level != "ERROR" || got.InvocationID != res.InvocationID || !reflect.DeepEqual(got, want) {
		t.Errorf("logged trace\n%+v\nwant the one the store was given\n%+v", got, want)
	}
}

func TestInvocationVisibility(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "en", damageQuestion)
	ctx := context.Background()
	if _, err := f.svc.Invocation(ctx, res.InvocationID, port.Actor{ID: "agent-7"}); err != nil {
		t.Errorf("own invocation: %v", err)
	}
	if _, err := f.svc.Invocation(ctx, res.InvocationID, port.Actor{ID: "agent-8"}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another actor's invocation: %v", err)
	}
	if _, err := f.svc.Invocation(ctx, res.InvocationID, port.Actor{ID: "ops-lead", Scopes: []string{"knowledge:admin"}}); err != nil {
		t.Errorf("admin: %v", err)
	}
}

func TestAskIsGroundedTemplateAndTraced(t *testing.T) {
	f := newFixture(t)
	ans, err := f.svc.Ask(context.Background(), lookup.AskRequest{Question: "Which severity level and acknowledgement time apply to a SEV2 incident?",
		Language: "en", Actor: port.Actor{ID: "agent-7"}})
	if err != nil {
		t.Fatal(err)
	}
	if ans.EvidenceState != port.StateGrounded || ans.AnswerKind != "template" || len(ans.Sources) == 0 ||
		ans.Sources[0].DocumentID != "incident-escalation" || !strings.Contains(ans.Answer, "not generated text") {
		t.Fatalf("answer %+v", ans)
	}
	tr := f.trace(t, ans.InvocationID)
	if tr.Tool != lookup.ToolAsk || len(tr.RetrievalDetails.EvidenceSummaries) != len(ans.Sources) {
		t.Errorf("trace %+v", tr)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// blockingProvider never answers until its context ends, like an unreachable RAGcore.
type blockingProvider struct{ *demo.Provider }

func (blockingProvider) Retrieve(ctx context.Context, _ port.Query) ([]port.Candidate, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockingProvider) Ask(ctx context.Context, _ port.AskQuery) (port.GroundedAnswer, error) {
	<-ctx.Done()
	return port.GroundedAnswer{}, ctx.Err()
}

func TestProviderCallsHaveADeadline(t *testing.T) {
	ix := index(t)
	o := retrieval.DefaultOptions()
	o.ProviderTimeout = 50 * time.Millisecond
	traces := store.NewMemory()
	svc := retrieval.New(ix, blockingProvider{demo.New(ix)}, traces, o, slog.New(slog.NewTextHandler(io.Discard, nil)))
	res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: damageQuestion, Language: "en", TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retrieval.L1.Status != lookup.L1Failed || res.Retrieval.L1.ErrorClass != "timeout" || res.Primary == nil {
		t.Fatalf("l1 %+v primary %v", res.Retrieval.L1, res.Primary)
	}
	ans, err := svc.Ask(context.Background(), lookup.AskRequest{Question: damageQuestion, Language: "en"})
	if err != nil || ans.EvidenceState != port.StateUnavailable || !strings.Contains(ans.Answer, "No procedure has been inferred") {
		t.Fatalf("ask %+v %v", ans, err)
	}
	// In the language asked.
	ans, err = svc.Ask(context.Background(), lookup.AskRequest{Question: "Schaden am Fahrzeug melden", Language: "de"})
	if err != nil || ans.EvidenceState != port.StateUnavailable || !strings.Contains(ans.Answer, "kein Verfahren abgeleitet") ||
		strings.Contains(ans.Answer, "procedure") {
		t.Fatalf("German ask %+v %v", ans, err)
	}
}

func TestTraceIsWrittenWhenTheCallerHangsUp(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := f.svc.Lookup(ctx, lookup.LookupRequest{Question: damageQuestion, Language: "en", TopK: 5, Actor: port.Actor{ID: "agent-7"}})
	if err != nil {
		t.Fatal(err)
	}
	f.trace(t, res.InvocationID)
}

func TestSafeErrorDropsRequestURLs(t *testing.T) {
	err := fmt.Errorf("retrieve: %w", &url.Error{Op: "Post", URL: "https://ragcore.internal/v1/retrieve?token=s3cr3t", Err: context.DeadlineExceeded})
	got := port.SafeError(err)
	if strings.Contains(got, "s3cr3t") || strings.Contains(got, "ragcore.internal") || !strings.Contains(got, "deadline exceeded") {
		t.Fatalf("SafeError = %q", got)
	}
}

func TestLookupAndAskEmitMetrics(t *testing.T) {
	ix := index(t)
	m := &counter{n: map[string]int{}, vals: map[string]float64{}}
	o := retrieval.DefaultOptions()
	o.Metrics = m
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), o, slog.New(slog.DiscardHandler))
	if _, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: damageQuestion, Language: "en", TopK: 5}); err != nil {
		t.Fatal(err)
	}
	o.L1Enabled = false
	off := retrieval.New(ix, demo.New(ix), store.NewMemory(), o, slog.New(slog.DiscardHandler))
	if _, err := off.Lookup(context.Background(), lookup.LookupRequest{Question: damageQuestion, Language: "en", TopK: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(context.Background(), lookup.AskRequest{Question: damageQuestion, Language: "en"}); err != nil {
		t.Fatal(err)
	}
	if m.vals["Lookups"] != 2 || m.vals["Asks"] != 1 || m.vals["LookupLatency"] <= 0 || m.vals["L1Failures"] != 0 {
		t.Errorf("metrics %v", m.vals)
	}
	var byLayer, byTool []map[string]string
	for _, d := range m.dims {
		if _, ok := d["layer"]; ok {
			byLayer = append(byLayer, d)
		} else {
			byTool = append(byTool, d)
		}
	}
	if len(byLayer) != 3 || byLayer[0]["layer"] != string(lookup.LayerBoth) || byLayer[1]["layer"] != string(lookup.LayerL0) || byLayer[0]["provider"] != "demo" {
		t.Errorf("dimensions %v", m.dims)
	}
	// Every call counts once in the metric of its evidence state, by tool.
	if len(byTool) != 3 || byTool[0]["tool"] != lookup.ToolLookup || byTool[2]["tool"] != lookup.ToolAsk || byTool[2]["provider"] != "demo" {
		t.Errorf("evidence dimensions %v", byTool)
	}
	if sum := m.vals["EvidenceGrounded"] + m.vals["EvidenceInsufficient"] + m.vals["EvidenceUnavailable"]; sum != 3 {
		t.Errorf("evidence counts %v, want 3 calls counted", m.vals)
	}
}

// breakerProvider is a provider behind an open or closed circuit breaker.
type breakerProvider struct {
	*demo.Provider
	open bool
}

func (b breakerProvider) BreakerOpen() bool { return b.open }

func TestEvidenceStatesAndBreakerAreCounted(t *testing.T) {
	ix := index(t)
	for _, open := range []bool{false, true} {
		m := &counter{n: map[string]int{}, vals: map[string]float64{}}
		o := retrieval.DefaultOptions()
		o.Metrics = m
		svc := retrieval.New(ix, breakerProvider{Provider: demo.New(ix), open: open}, store.NewMemory(), o, slog.New(slog.DiscardHandler))
		for _, q := range []string{"windscreen crack: which form do we fill in for the damage report?", "What is the capital of Australia?"} {
			if _, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q, Language: "en", TopK: 5}); err != nil {
				t.Fatal(err)
			}
		}
		if m.vals["EvidenceGrounded"] != 1 || m.vals["EvidenceInsufficient"] != 1 || m.vals["EvidenceUnavailable"] != 0 {
			t.Errorf("evidence counts %v, want one grounded and one insufficient", m.vals)
		}
		want := 0.0
		if open {
			want = 2
		}
		if m.vals["BreakerOpen"] != want {
			t.Errorf("breaker open %v: BreakerOpen %v, want %v", open, m.vals["BreakerOpen"], want)
		}
	}
}

// A question about a topic no procedure covers shares enough words with some procedure to pass
// the lexical rule; the topic's own term, which that procedure never uses, keeps it from being
// grounded, and the reason names it.
func TestUncoveredTopicIsNeverGrounded(t *testing.T) {
	f := newFixture(t)
	for _, q := range []struct{ lang, q, term string }{
		{"en", "how much does a customer pay per minute for a small car", "per minute"},
		{"de", "wie hoch is die Selbstbeteiligung im Basistarif bei nem Schaden, 500 oder 1000 Euro?", "basistarif"},
	} {
		res, sg := f.lookupSignals(t, q.lang, q.q)
		if sg.Points < retrieval.LexicalMinPoints(q.lang) {
			t.Fatalf("%q: %.1f points; the case needs a question the lexical rule alone would ground", q.q, sg.Points)
		}
		if res.EvidenceState != port.StateInsufficient || sg.Uncovered.Term != q.term || !strings.Contains(res.Relevance.Reason, `"`+q.term+`"`) {
			t.Errorf("%q: state %s, uncovered %+v, reason %q", q.q, res.EvidenceState, sg.Uncovered, res.Relevance.Reason)
		}
		if len(res.EvidenceBlocks) == 0 {
			t.Errorf("%q: the closest procedures are still returned", q.q)
		}
	}
}

// Words next to an uncovered topic's also come up in questions a procedure answers; none of these
// may be taken for the topic.
func TestAnsweredQuestionsNameNoUncoveredTopic(t *testing.T) {
	f := newFixture(t)
	for _, q := range []struct{ lang, q string }{
		{"en", "customer got a ticket for parking in residents parking, who pays it"},
		{"en", "staff get a parking fine while relocating a car, who pays"},
		{"en", "business customer reports his employee crashed the van"},
		{"en", "charging job for a car at 3% battery, how many hours does the technician have to charge it"},
		{"en", "tech says the brake pads are gone, can the car stay in rental"},
		{"en", "how many customers are affected if the app is down in one zone"},
		{"de", "Kunde hat im Anwohnerparken ein Knöllchen bekommen, wer zahlt das?"},
		{"de", "Mitarbeiter bekommen Knöllchen bei Umsetzfahrt, wer zahlt?"},
		{"de", "laut Dienstplan ist heute keiner in Bereitschaft, wen ruf ich an"},
		{"de", "wir haben neue Fahrzeuge bekommen, müssen die vor der ersten Vermietung gereinigt werden"},
		{"en", "after the collision the customer can only get to a computer tomorrow, how long does he have for the written accident statement"},
		{"de", "Kunde sitzt erst morgen wieder am Rechner, bis wann muss die Unfallschilderung da sein"},
		{"en", "customer forgot his password for the app and now the car won't open, what does he check first"},
		{"de", "Kunde hat sein Passwort vergessen, App meldet ihn ab und die Karre geht nicht auf, was soll er prüfen"},
		{"en", "we passed the parking fine on to the customer but the payment failed on his card, what does the fines team do now"},
	} {
		_, sg := f.lookupSignals(t, q.lang, q.q)
		if sg.Points < retrieval.LexicalMinPoints(q.lang) {
			t.Fatalf("%q: %.1f points; the case needs a question the lexical rule grounds, or the topic check never runs", q.q, sg.Points)
		}
		if u := sg.Uncovered; u.Term != "" {
			t.Errorf("%q: taken for the uncovered topic %s (%q, %s)", q.q, u.Topic, u.Term, u.Source)
		}
	}
}

// A short question every word of which the primary block holds, and that names its procedure's
// subject in the front matter's terms, is grounded below the points a longer question needs; a
// short one made of corpus words that names no procedure's subject is not.
func TestWholeShortQuestionIsGrounded(t *testing.T) {
	f := newFixture(t)
	for _, q := range []struct {
		lang, q, doc string
		grounded     bool
	}{
		{"de", "Ozonbehandlung wann nötig?", "vehicle-cleaning", true},
		{"en", "how much is a train ticket", "", false},
		{"de", "Wie viel kostet eine Zugfahrkarte?", "", false},
	} {
		res, sg := f.lookupSignals(t, q.lang, q.q)
		if q.grounded {
			if sg.Points >= retrieval.LexicalMinPoints(q.lang) {
				t.Fatalf("%q: %.1f points; the case needs a question below the threshold", q.q, sg.Points)
			}
			if res.EvidenceState != port.StateGrounded || res.EvidenceBlocks[0].DocumentID != q.doc ||
				!strings.Contains(res.Relevance.Reason, "every one of the question's") {
				t.Errorf("%q: state %s on %s, reason %q", q.q, res.EvidenceState, res.EvidenceBlocks[0].DocumentID, res.Relevance.Reason)
			}
			continue
		}
		if sg.Support.Matched != sg.Support.Words {
			t.Fatalf("%q: the block holds %d of %d words; the case needs one that holds all", q.q, sg.Support.Matched, sg.Support.Words)
		}
		if res.EvidenceState == port.StateGrounded {
			t.Errorf("%q: grounded (%s)", q.q, res.Relevance.Reason)
		}
	}
}

// The arrays a lookup borrows (the candidates the provider fills, the matches, the analysis)
// go back to pools for the next lookup: lookups of different questions at the same time get
// exactly the results each gets alone.
func TestConcurrentLookupsKeepTheirOwnEvidence(t *testing.T) {
	ix := index(t)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.DiscardHandler))
	questions := []struct{ lang, q string }{
		{"en", "customer's phone died and the car won't open"},
		{"de", "Karre springt nicht an, Kunde steht auf dem Standstreifen"},
		{"en", damageQuestion},
		{"de", "Ladekabel steckt fest an der Ladesäule"},
		{"en", "previous renter left trash in the back seat"},
		{"en", "how long do we keep a lost wallet before it goes to the police"},
	}
	ask := func(i int) (lookup.Result, error) {
		return svc.Lookup(context.Background(), lookup.LookupRequest{Question: questions[i].q, Language: questions[i].lang, TopK: 5})
	}
	view := func(r lookup.Result) string {
		r.InvocationID = ""
		return mustJSON(t, r)
	}
	want := make([]string, len(questions))
	for i := range questions {
		r, err := ask(i)
		if err != nil || len(r.EvidenceBlocks) == 0 {
			t.Fatalf("%q: %d blocks, %v", questions[i].q, len(r.EvidenceBlocks), err)
		}
		want[i] = view(r)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(questions))
	// Each worker's results are also read again once every lookup has run: a response that
	// held an array given back to a pool would show another lookup's evidence by then.
	kept := make([][]lookup.Result, 8)
	for w := range 8 {
		wg.Go(func() {
			for k := range 30 {
				i := (w + k) % len(questions)
				r, err := ask(i)
				if err != nil {
					errs <- err.Error()
					return
				}
				if got := view(r); got != want[i] {
					errs <- fmt.Sprintf("%q: %s, alone %s", questions[i].q, got, want[i])
					return
				}
				kept[w] = append(kept[w], r)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for w, rs := range kept {
		for k, r := range rs {
			if i := (w + k) % len(questions); view(r) != want[i] {
				t.Errorf("%q: the response changed after later lookups: %s, alone %s", questions[i].q, view(r), want[i])
			}
		}
	}
}
