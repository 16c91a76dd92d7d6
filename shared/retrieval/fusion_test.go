package retrieval_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// semanticFake is a semantic L1 in the shape of a chunking platform: it returns the candidates a
// test scripts for each category filter ("" is the unfiltered call), a section possibly as several
// chunks, with cosine similarities. It records every query.
type semanticFake struct {
	byFilter map[string][]port.Candidate
	err      error // every Retrieve fails with it when set
	answer   port.GroundedAnswer
	// answers, when set, are the answers per category filter ("" unfiltered) instead of answer.
	answers map[string]port.GroundedAnswer

	mu    sync.Mutex
	calls []port.Query
	asks  []port.AskQuery
}

func (f *semanticFake) Name() string      { return "ragcore" }
func (f *semanticFake) Semantic() bool    { return true }
func (f *semanticFake) ScoreKind() string { return "cosine_similarity" }
func (f *semanticFake) Health(context.Context, port.Call) port.Health {
	return port.Health{Status: "ok"}
}
func (f *semanticFake) SyncManifest(context.Context, port.Call, []port.DocumentRef) (port.SyncResult, error) {
	return port.SyncResult{}, nil
}
func (f *semanticFake) Retrieve(_ context.Context, q port.Query) ([]port.Candidate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, q)
	if f.err != nil {
		return nil, f.err
	}
	return slices.Clone(f.byFilter[q.Category]), nil
}
func (f *semanticFake) Ask(_ context.Context, q port.AskQuery) (port.GroundedAnswer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asks = append(f.asks, q)
	if f.answers != nil {
		return f.answers[q.Category], nil
	}
	return f.answer, nil
}

func (f *semanticFake) queries() []port.Query {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// chunk is candidate i (of a section cut into several) of a real section of the English corpus,
// with a score.
func chunk(t *testing.T, doc string, section int, score float64, part string) port.Candidate {
	t.Helper()
	l := index(t).Lang("en")
	for pi := range l.Passages {
		d, s := l.Doc(pi)
		if d.ID != doc || s.Number != section {
			continue
		}
		content := s.Content
		if part != "" {
			content = part
		}
		return port.Candidate{DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate, Title: d.Title,
			Section: s.Heading, Anchor: s.Anchor, Category: d.Category, Source: d.Source(s), Content: content, Score: score}
	}
	t.Fatalf("no section %d in %s", section, doc)
	return port.Candidate{}
}

func semanticService(t *testing.T, f *semanticFake) (*retrieval.Service, *store.Memory) {
	t.Helper()
	traces := store.NewMemory()
	return retrieval.New(index(t), f, traces, retrieval.DefaultOptions(), slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))), traces
}

func lookupWith(t *testing.T, svc *retrieval.Service, q string) lookup.Result {
	t.Helper()
	res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q, Language: "en", TopK: 5,
		Actor: port.Actor{ID: "agent-7"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func blockIDs(blocks []lookup.EvidenceBlock) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, b.DocumentID+"#"+strings.SplitN(b.Section, ".", 2)[0])
	}
	return out
}

func TestFusion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		question string
		cands    []port.Candidate
		want     []string // the first blocks, as document#section number
	}{{
		// A section returned as three chunks is one block, ranked by its best chunk only: it does
		// not outrank a better section returned once.
		name:     "chunked duplicates count once",
		question: "the customer is standing next to a car that will not open",
		cands: []port.Candidate{
			chunk(t, "access-failure", 4, 0.81, ""),
			chunk(t, "access-failure", 2, 0.70, "part one"),
			chunk(t, "access-failure", 2, 0.69, "part two"),
			chunk(t, "access-failure", 2, 0.68, "part three"),
			chunk(t, "lost-and-found", 2, 0.60, ""),
		},
		want: []string{"access-failure#4", "access-failure#2", "lost-and-found#2"},
	}, {
		// L0 finds damage keywords (scratch, dent, photo), but the semantic layer is clearly
		// stronger for the accident section: L0 may not bury it.
		name:     "L0 never buries a clearly stronger semantic candidate",
		question: "scratch after the crash, where do the photos go?",
		cands: []port.Candidate{
			chunk(t, "accident-procedure", 3, 0.84, ""),
			chunk(t, "damage-procedure", 3, 0.71, ""),
		},
		want: []string{"accident-procedure#3", "damage-procedure#3"},
	}, {
		// Within the margin, L0's keywords (scratch: damage only) lift the candidate they support.
		name:     "L0 lifts a candidate within the margin",
		question: "deep scratch on the bonnet, where do the pictures go?",
		cands: []port.Candidate{
			chunk(t, "accident-procedure", 3, 0.74, ""),
			chunk(t, "damage-procedure", 3, 0.72, ""),
		},
		want: []string{"damage-procedure#3", "accident-procedure#3"},
	}, {
		// Equal scores and no L0 evidence: document id, then section order.
		name:     "ties by document id then section",
		question: "xylophone quarantine",
		cands: []port.Candidate{
			chunk(t, "vehicle-cleaning", 3, 0.70, ""),
			chunk(t, "lost-and-found", 4, 0.70, ""),
			chunk(t, "lost-and-found", 2, 0.70, ""),
		},
		want: []string{"lost-and-found#2", "vehicle-cleaning#3", "lost-and-found#4"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &semanticFake{byFilter: map[string][]port.Candidate{"": tc.cands}}
			for _, c := range tc.cands {
				f.byFilter[c.Category] = append(f.byFilter[c.Category], c)
			}
			svc, traces := semanticService(t, f)
			res := lookupWith(t, svc, tc.question)
			got := blockIDs(res.EvidenceBlocks)
			if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
				t.Fatalf("blocks %v, want %v first", got, tc.want)
			}
			tr, err := traces.GetTrace(context.Background(), res.InvocationID)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range res.EvidenceBlocks {
				// Every block keeps its own labelled score: the best chunk's cosine for L1 blocks.
				if b.RetrievalLayer != lookup.LayerL0 && b.Score.Kind != "cosine_similarity" {
					t.Errorf("block %d score %+v", i, b.Score)
				}
				fb := tr.RetrievalDetails.EvidenceSummaries[i].Fusion
				if fb == nil || fb.RRF <= 0 || (b.RetrievalLayer != lookup.LayerL0) != (fb.L1Rank > 0) {
					t.Errorf("block %d (%s): fusion basis %+v", i, b.RetrievalLayer, fb)
				}
			}
			if tc.name == "chunked duplicates count once" {
				b := res.EvidenceBlocks[1]
				fb := tr.RetrievalDetails.EvidenceSummaries[1].Fusion
				if b.Score.Value != 0.70 || fb.L1Chunks != 3 || fb.L1Rank != 2 {
					t.Errorf("chunked block score %v, fusion %+v", b.Score, fb)
				}
				if !strings.Contains(b.Content, "within 10 m of the vehicle") {
					t.Errorf("a chunk of a local section must carry the whole section: %q", b.Content)
				}
			}
		})
	}
}

func TestDomainFilterRule(t *testing.T) {
	for _, tc := range []struct {
		question string
		filter   string
	}{
		{"windscreen", ""}, // one keyword: no hint
		{"the customer says the vehicle app is slow", ""},    // words every procedure names
		{"Kratzer und Delle an der Tür, Schaden melden", ""}, // German question asked in English: no English evidence
		{"deep scratch and a dent on the windscreen, photos taken", "damage"},
		{"the car was stolen and the thief switched off the GPS tracker", "security"},
	} {
		f := &semanticFake{byFilter: map[string][]port.Candidate{}}
		svc, _ := semanticService(t, f)
		res := lookupWith(t, svc, tc.question)
		got := ""
		if res.Retrieval.L1.CategoryFilter != nil {
			got = *res.Retrieval.L1.CategoryFilter
		}
		if got != tc.filter || f.queries()[0].Category != tc.filter {
			t.Errorf("%q: filter %q (sent %q), want %q; domains %v", tc.question, got, f.queries()[0].Category, tc.filter, res.Retrieval.L0.Domains)
		}
		if tc.filter == "" && len(res.Retrieval.L0.Domains) == 1 {
			t.Errorf("%q: a single domain %v without a filter", tc.question, res.Retrieval.L0.Domains)
		}
	}
}

func TestFilteredCallThatIsWeakIsRetriedUnfiltered(t *testing.T) {
	const q = "deep scratch and a dent on the windscreen, photos taken"
	for _, tc := range []struct {
		name     string
		filtered []port.Candidate
		calls    int
		primary  string
	}{
		{"strong filtered result", []port.Candidate{chunk(t, "damage-procedure", 3, 0.82, "")}, 1, "damage-procedure#3"},
		{"weak filtered result", []port.Candidate{chunk(t, "damage-procedure", 3, 0.41, "")}, 2, "accident-procedure#3"},
		// A wrong filter still returns its category's best sections, which may score as high
		// as a grounded answer: only a clearly strong one (0.75) stands alone.
		{"grounded but not clearly strong filtered result", []port.Candidate{chunk(t, "damage-procedure", 3, 0.70, "")}, 2, "accident-procedure#3"},
		{"clearly strong filtered result", []port.Candidate{chunk(t, "damage-procedure", 3, 0.75, "")}, 1, "damage-procedure#3"},
		{"empty filtered result", nil, 2, "accident-procedure#3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &semanticFake{byFilter: map[string][]port.Candidate{
				"damage": tc.filtered,
				"":       {chunk(t, "accident-procedure", 3, 0.80, ""), chunk(t, "damage-procedure", 3, 0.41, "")},
			}}
			svc, traces := semanticService(t, f)
			res := lookupWith(t, svc, q)
			qs := f.queries()
			if len(qs) != tc.calls || qs[0].Category != "damage" || (tc.calls == 2 && qs[1].Category != "") {
				t.Fatalf("L1 queries %+v", qs)
			}
			l1 := res.Retrieval.L1
			if l1.Calls != tc.calls || l1.UnfilteredRetry != (tc.calls == 2) || l1.CategoryFilter == nil || *l1.CategoryFilter != "damage" {
				t.Errorf("l1 %+v", l1)
			}
			if got := blockIDs(res.EvidenceBlocks)[0]; got != tc.primary {
				t.Errorf("primary %s, want %s", got, tc.primary)
			}
			tr, _ := traces.GetTrace(context.Background(), res.InvocationID)
			if tr.RetrievalDetails.L1.Calls != tc.calls || tr.RetrievalDetails.L1.UnfilteredRetry != (tc.calls == 2) {
				t.Errorf("trace l1 %+v", tr.RetrievalDetails.L1)
			}
		})
	}
}

func TestEvidenceStatePerPath(t *testing.T) {
	// Semantic path: the provider's own score decides on its own scale whether the primary block
	// can be grounded at all; from the supported score on, only with strong lexical evidence.
	for _, tc := range []struct {
		name      string
		question  string
		score     float64
		supported float64
		state     port.EvidenceState
	}{
		{"strong semantic match in other words", "my phone is dead, how do I get in?", 0.80, 0, port.StateGrounded},
		{"below the grounded threshold", "the app will not unlock the doors", 0.68, 0, port.StateInsufficient},
		{"supported band with strong lexical evidence", "the digital key in the app will not unlock the doors of the vehicle", 0.60, 0.55, port.StateGrounded},
		{"supported band with weak lexical evidence", "nothing happens, what a hopeless situation", 0.60, 0.55, port.StateInsufficient},
		{"low score", "the app will not unlock the doors", 0.45, 0.55, port.StateInsufficient},
		{"too few informative words", "e km", 0.95, 0, port.StateInsufficient},
		{"one informative word", "unlock", 0.95, 0, port.StateInsufficient},
	} {
		t.Run("semantic/"+tc.name, func(t *testing.T) {
			f := &semanticFake{byFilter: map[string][]port.Candidate{"": {chunk(t, "access-failure", 2, tc.score, "")}}}
			f.byFilter["access"] = f.byFilter[""]
			o := retrieval.DefaultOptions()
			if tc.supported > 0 {
				o.SupportedCosine = tc.supported
			}
			svc := retrieval.New(index(t), f, store.NewMemory(), o, slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)))
			res := lookupWith(t, svc, tc.question)
			if res.EvidenceState != tc.state {
				t.Fatalf("state %s, want %s: %+v", res.EvidenceState, tc.state, res.Relevance)
			}
			if res.Relevance.Basis != lookup.BasisBoth {
				t.Errorf("basis %q, want %q", res.Relevance.Basis, lookup.BasisBoth)
			}
			if tc.state == port.StateGrounded && !strings.Contains(res.Relevance.Reason, "semantic search") {
				t.Errorf("relevance %+v", res.Relevance)
			}
		})
	}

	// Lexical path (the demo provider, and L1 down): long, chatty questions that match their
	// procedure are grounded; other subjects and one-word questions are not.
	f := newFixture(t)
	for _, tc := range []struct {
		question string
		state    port.EvidenceState
	}{
		{"Hi, quick one from the night shift, sorry for the long message: a customer called because there is a deep scratch and a dent on the rear door of the car she just picked up, and she wants to know how many photos of the damage she has to upload in the app so she is not billed for it later", port.StateGrounded},
		{"windscreen crack: which form do we fill in for the damage report?", port.StateGrounded},
		{"How do I bake sourdough bread at home?", port.StateInsufficient},
		{"damage", port.StateInsufficient},
	} {
		res := f.lookup(t, "en", tc.question)
		if res.EvidenceState != tc.state || res.Relevance.Basis != "lexical" {
			t.Errorf("%q: state %s basis %s, want %s: %s", tc.question, res.EvidenceState, res.Relevance.Basis, tc.state, res.Relevance.Reason)
		}
	}
	// L1 down: the same rule judges the L0 evidence, and says so.
	down := newFixture(t)
	down.p.err = port.ErrUnavailable
	res := down.lookup(t, "en", "windscreen crack: which form do we fill in for the damage report?")
	if res.Relevance.Basis != "lexical" || !strings.Contains(res.Relevance.Reason, "L1 retrieval unavailable") {
		t.Errorf("relevance with L1 down %+v", res.Relevance)
	}
}

// A semantic provider that is down, or finds nothing, has not spoken: the lookup still answers
// with the L0 and lexical evidence, labelled, and is never grounded, because every grounded
// verdict with that provider needs its support (degraded is never more lenient). The same
// question is grounded when the provider agrees.
func TestDegradedVerdictIsNeverMoreLenient(t *testing.T) {
	const question = "windscreen crack: which form do we fill in for the damage report?"
	agree := &semanticFake{byFilter: map[string][]port.Candidate{
		"":       {chunk(t, "damage-procedure", 3, 0.80, ""), chunk(t, "accident-procedure", 3, 0.71, "")},
		"damage": {chunk(t, "damage-procedure", 3, 0.80, "")}}}
	up, _ := semanticService(t, agree)
	if res := lookupWith(t, up, question); res.EvidenceState != port.StateGrounded {
		t.Fatalf("with the semantic path agreeing: %s (%s)", res.EvidenceState, res.Relevance.Reason)
	}
	for _, tc := range []struct {
		name   string
		fake   *semanticFake
		status lookup.L1Status
	}{
		{"unavailable", &semanticFake{err: port.ErrUnavailable}, lookup.L1Unavailable},
		{"failed", &semanticFake{err: errors.New("boom")}, lookup.L1Failed},
		{"empty", &semanticFake{byFilter: map[string][]port.Candidate{}}, lookup.L1Empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, _ := semanticService(t, tc.fake)
			res := lookupWith(t, svc, question)
			r := res.Relevance
			switch {
			case res.Retrieval.L1.Status != tc.status:
				t.Fatalf("l1 status %s, want %s", res.Retrieval.L1.Status, tc.status)
			case res.EvidenceState != port.StateInsufficient || res.Primary == nil || res.Primary.DocumentID != "damage-procedure":
				t.Errorf("state %s primary %+v, want insufficient on the damage procedure's evidence", res.EvidenceState, res.Primary)
			case r.Basis != lookup.BasisLexical || r.SemanticSupport || !strings.HasPrefix(r.Reason, "degraded: "):
				t.Errorf("relevance %+v", r)
			}
		})
	}
}

// A generated answer RAGcore calls grounded is grounded only when the lookup's own verdict grounds
// a procedure it cites: a retriever's confident error (a neighbouring procedure cited, or every
// path pointing elsewhere) is insufficient and says so.
func TestGeneratedAnswerNeedsTheLookupsVerdict(t *testing.T) {
	const q = "windscreen crack: which form do we fill in for the damage report?"
	cite := func(doc, section string) port.GroundedAnswer {
		return port.GroundedAnswer{Answer: "Do this.", EvidenceState: port.StateGrounded, Generated: true,
			Sources: []port.AnswerSource{{DocumentID: doc, Title: doc, Version: "1", Section: section}}}
	}
	damage := []port.Candidate{chunk(t, "damage-procedure", 3, 0.80, ""), chunk(t, "accident-procedure", 3, 0.71, "")}
	for _, tc := range []struct {
		name   string
		cands  []port.Candidate
		answer port.GroundedAnswer
		state  port.EvidenceState
	}{
		{"the lookup grounds the cited procedure", damage, cite("damage-procedure", "3. Documentation"), port.StateGrounded},
		{"the answer cites a neighbour", damage, cite("accident-procedure", "3. Documentation"), port.StateInsufficient},
		{"the lookup finds nothing", nil, cite("damage-procedure", "3. Documentation"), port.StateInsufficient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &semanticFake{answer: tc.answer, byFilter: map[string][]port.Candidate{"": tc.cands, "damage": tc.cands}}
			svc, _ := semanticService(t, f)
			ans, err := svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: "en", Actor: port.Actor{ID: "agent-7"}})
			if err != nil {
				t.Fatal(err)
			}
			if ans.EvidenceState != tc.state {
				t.Errorf("state %s, want %s", ans.EvidenceState, tc.state)
			}
			if tc.state != port.StateGrounded && !strings.HasPrefix(ans.Answer, "The procedures do not clearly cover") {
				t.Errorf("an unconfirmed answer says so: %q", ans.Answer)
			}
		})
	}
}

func TestSemanticAnswerNeverClaimsMoreThanItsCitations(t *testing.T) {
	cited := []port.AnswerSource{{DocumentID: "access-failure", Title: "Digital key and access failures", Version: "1.4",
		Section: "2. First-line checks with the customer", Excerpt: "within 10 m of the vehicle"}}
	for _, tc := range []struct {
		name     string
		question string
		answer   port.GroundedAnswer
		state    port.EvidenceState
	}{
		{"grounded with a managed citation", "the app will not unlock the doors", port.GroundedAnswer{Answer: "a", EvidenceState: port.StateGrounded, Sources: cited, Generated: true}, port.StateGrounded},
		{"grounded without citations", "the app will not unlock the doors", port.GroundedAnswer{Answer: "a", EvidenceState: port.StateGrounded, Generated: true}, port.StateInsufficient},
		{"grounded on a one-word question", "unlock", port.GroundedAnswer{Answer: "a", EvidenceState: port.StateGrounded, Sources: cited, Generated: true}, port.StateInsufficient},
		{"insufficient stays insufficient", "the app will not unlock the doors", port.GroundedAnswer{Answer: "a", EvidenceState: port.StateInsufficient, Sources: cited, Generated: true}, port.StateInsufficient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The lookup beside the answer call grounds the cited procedure.
			agree := []port.Candidate{chunk(t, "access-failure", 2, 0.82, "")}
			svc, _ := semanticService(t, &semanticFake{answer: tc.answer, byFilter: map[string][]port.Candidate{"": agree, "access": agree}})
			ans, err := svc.Ask(context.Background(), lookup.AskRequest{Question: tc.question, Language: "en", Actor: port.Actor{ID: "a"}})
			if err != nil {
				t.Fatal(err)
			}
			if ans.EvidenceState != tc.state || ans.AnswerKind != "generated" {
				t.Errorf("state %s kind %s, want %s", ans.EvidenceState, ans.AnswerKind, tc.state)
			}
		})
	}
}

func TestDemoAskAgreesWithLookup(t *testing.T) {
	f := newFixture(t)
	for _, q := range []string{
		"windscreen crack: which form do we fill in for the damage report?",
		"customer's phone died and the car won't open",
		"How do I bake sourdough bread at home?",
	} {
		res := f.lookup(t, "en", q)
		ans, err := f.svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: "en", Actor: port.Actor{ID: "a"}})
		if err != nil {
			t.Fatal(err)
		}
		if ans.EvidenceState != res.EvidenceState {
			t.Errorf("%q: ask %s, lookup %s", q, ans.EvidenceState, res.EvidenceState)
		}
		for i, s := range ans.Sources {
			if b := res.EvidenceBlocks[i]; s.DocumentID != b.DocumentID || s.Section != b.Section {
				t.Errorf("%q: source %d is %s/%s, lookup block %s/%s", q, i, s.DocumentID, s.Section, b.DocumentID, b.Section)
			}
		}
	}
}

// TestFilteredAskThatIsNotGroundedIsAskedUnfiltered: as for a lookup, a category filter narrows
// /ask but never hides the answer.
func TestFilteredAskThatIsNotGroundedIsAskedUnfiltered(t *testing.T) {
	const q = "deep scratch and a dent on the windscreen, photos taken"
	grounded := port.GroundedAnswer{Answer: "Block the car.", EvidenceState: port.StateGrounded,
		Sources: []port.AnswerSource{{DocumentID: "damage-procedure", Title: "Damage handling procedure", Version: "1.3", Section: "2. Immediate actions"}}}
	weak := port.GroundedAnswer{Answer: "No procedure answers this.", EvidenceState: port.StateInsufficient}
	// The lookup beside the answer call finds the cited procedure, so the answer may stay grounded.
	cands := []port.Candidate{chunk(t, "damage-procedure", 2, 0.82, "")}
	for _, tc := range []struct {
		name     string
		filtered port.GroundedAnswer
		asks     int
	}{
		{"grounded filtered answer", grounded, 1},
		{"filtered answer not grounded", weak, 2},
		{"filtered answer without sources", port.GroundedAnswer{Answer: "x", EvidenceState: port.StateGrounded}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &semanticFake{answers: map[string]port.GroundedAnswer{"damage": tc.filtered, "": grounded},
				byFilter: map[string][]port.Candidate{"damage": cands, "": cands}}
			svc, traces := semanticService(t, f)
			ans, err := svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: "en", Actor: port.Actor{ID: "agent-7"}})
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			asks := slices.Clone(f.asks)
			f.mu.Unlock()
			if len(asks) != tc.asks || asks[0].Category != "damage" || (tc.asks == 2 && asks[1].Category != "") {
				t.Fatalf("asks %+v", asks)
			}
			if ans.EvidenceState != port.StateGrounded {
				t.Errorf("state %s, want grounded", ans.EvidenceState)
			}
			tr, _ := traces.GetTrace(context.Background(), ans.InvocationID)
			if l1 := tr.RetrievalDetails.L1; l1.Calls != tc.asks || l1.UnfilteredRetry != (tc.asks == 2) {
				t.Errorf("trace l1 %+v", l1)
			}
		})
	}
}

// The answer call of /ask is asked once more without the filter when the filter kept out the
// procedure the local lexical search ranks first, as a lookup's call is
// (TestFilteredCallRetriedWhenTheLexicalFavouriteIsOutsideIt); not when that procedure is inside.
func TestFilteredAskIsAskedUnfilteredWhenTheLexicalFavouriteIsOutsideIt(t *testing.T) {
	answer := chunk(t, "breakdown-assistance", 3, 0.82, "")
	cites := port.GroundedAnswer{Answer: "A taxi is paid up to the limit.", EvidenceState: port.StateGrounded,
		Sources: []port.AnswerSource{{DocumentID: answer.DocumentID, Title: answer.Title, Version: answer.Version, Section: answer.Section}}}
	for _, tc := range []struct {
		name, question, filter string
		asks                   int
	}{
		{"outside", "the charger is broken and the customer wants a taxi, who pays?", "assistance", 2},
		{"inside", "how many photos of the dent does the jockey need before he moves the car?", "operations", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &semanticFake{answers: map[string]port.GroundedAnswer{tc.filter: cites, "": cites},
				byFilter: map[string][]port.Candidate{tc.filter: {answer}, "": {answer}}}
			svc, traces := semanticService(t, f)
			ans, err := svc.Ask(context.Background(), lookup.AskRequest{Question: tc.question, Language: "en", Actor: port.Actor{ID: "agent-7"}})
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			asks := slices.Clone(f.asks)
			f.mu.Unlock()
			if len(asks) != tc.asks || asks[0].Category != tc.filter || (tc.asks == 2 && asks[1].Category != "") {
				t.Fatalf("asks %+v, want %d, the first filtered by %s", asks, tc.asks, tc.filter)
			}
			tr, _ := traces.GetTrace(context.Background(), ans.InvocationID)
			if l1 := tr.RetrievalDetails.L1; l1.Calls != tc.asks || l1.UnfilteredRetry != (tc.asks == 2) {
				t.Errorf("trace l1 %+v", l1)
			}
		})
	}
}

// bm25Fake is a lexical L1 whose candidates a test scripts, with BM25 scores.
type bm25Fake struct{ semanticFake }

func (f *bm25Fake) Name() string      { return "demo" }
func (f *bm25Fake) Semantic() bool    { return false }
func (f *bm25Fake) ScoreKind() string { return "bm25" }

// Two BM25 scores within 1 % of each other share an L1 rank, so the front matter decides between
// them; a wider gap keeps BM25's order.
func TestNearlyEqualBM25ScoresShareARank(t *testing.T) {
	// L0 ranks the charging procedure first (charging station, its keyword and entity) and fines
	// second (parking ticket).
	const question = "customer got a parking ticket at a public charging station"
	for _, tc := range []struct {
		name       string
		fines, ev  float64
		wantFirst  string
		wantL1Rank int // the charging block's
	}{
		{"within 1 %", 10.0, 9.95, "ev-charging", 1},
		{"10 % apart", 10.0, 9.0, "fines-and-parking", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cands := []port.Candidate{chunk(t, "fines-and-parking", 4, tc.fines, ""), chunk(t, "ev-charging", 5, tc.ev, "")}
			f := &bm25Fake{semanticFake{byFilter: map[string][]port.Candidate{"": cands}}}
			traces := store.NewMemory()
			svc := retrieval.New(index(t), f, traces, retrieval.DefaultOptions(), slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)))
			res := lookupWith(t, svc, question)
			tr, err := traces.GetTrace(context.Background(), res.InvocationID)
			if err != nil {
				t.Fatal(err)
			}
			var basis []string
			for i, b := range res.EvidenceBlocks {
				basis = append(basis, fmt.Sprintf("%s%+v", blockIDs(res.EvidenceBlocks)[i], *tr.RetrievalDetails.EvidenceSummaries[i].Fusion))
				if b.DocumentID == "ev-charging" && b.RetrievalLayer == lookup.LayerBoth && tr.RetrievalDetails.EvidenceSummaries[i].Fusion.L1Rank != tc.wantL1Rank {
					t.Errorf("charging block's L1 rank %d, want %d", tr.RetrievalDetails.EvidenceSummaries[i].Fusion.L1Rank, tc.wantL1Rank)
				}
			}
			if res.EvidenceBlocks[0].DocumentID != tc.wantFirst {
				t.Errorf("first block %s, want %s: %v", res.EvidenceBlocks[0].DocumentID, tc.wantFirst, basis)
			}
		})
	}
}

// A procedure's scope section, however well it matches, follows the procedure's three best other
// sections: the deciding fact sits after the scope.
func TestScopeFollowsThreeOtherSections(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores [6]float64 // of sections 1 (the scope) to 6 of access-failure
		want   []string
	}{
		{"scope best", [6]float64{10, 9, 8, 7, 6, 5}, []string{"2", "3", "4", "1", "5"}},
		{"scope second", [6]float64{8, 9, 7, 6, 5, 4}, []string{"2", "3", "4", "1", "5"}},
		{"scope fourth already", [6]float64{6, 9, 8, 7, 5, 4}, []string{"2", "3", "4", "1", "5"}},
		{"scope last", [6]float64{1, 9, 8, 7, 6, 5}, []string{"2", "3", "4", "5", "6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cands []port.Candidate
			for i, sc := range tc.scores {
				cands = append(cands, chunk(t, "access-failure", i+1, sc, ""))
			}
			slices.SortStableFunc(cands, func(a, b port.Candidate) int { return cmp.Compare(b.Score, a.Score) })
			f := &bm25Fake{semanticFake{byFilter: map[string][]port.Candidate{"": cands}}}
			svc := retrieval.New(index(t), f, store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)))
			res := lookupWith(t, svc, "app will not unlock the car")
			var got []string
			for _, b := range res.EvidenceBlocks {
				got = append(got, strings.SplitN(b.Section, ".", 2)[0])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("sections %v, want %v", got, tc.want)
			}
		})
	}
}

// On the semantic path, the primary procedure's section that states the question's words in one
// sentence follows the primary block, even when the platform returned other sections of it and
// of other procedures instead (a block of its own, l0:best-section); a lexical provider's
// candidates are that search already, and it places nothing.
func TestBestSectionFollowsThePrimary(t *testing.T) {
	const question = "customer holds the key card flat on the reader behind the windscreen but the light never turns green"
	cands := []port.Candidate{
		chunk(t, "access-failure", 5, 0.80, ""),
		chunk(t, "ev-charging", 5, 0.78, ""),
		chunk(t, "access-failure", 6, 0.76, ""),
		chunk(t, "theft-and-misuse", 2, 0.74, ""),
	}
	for _, tc := range []struct {
		name     string
		provider retrieval.LookupProvider
		want     []string
	}{
		{"semantic", &semanticFake{byFilter: map[string][]port.Candidate{"": cands, "access": cands}},
			[]string{"access-failure#5", "access-failure#2 l0:best-section"}},
		{"lexical", &bm25Fake{semanticFake{byFilter: map[string][]port.Candidate{"": cands, "access": cands}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := retrieval.New(index(t), tc.provider, store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.DiscardHandler))
			res := lookupWith(t, svc, question)
			if tc.want == nil {
				for _, b := range res.EvidenceBlocks {
					if slices.Contains(b.HitReasons, "l0:best-section") {
						t.Errorf("a lexical provider's lookup placed %s#%s", b.DocumentID, b.Section)
					}
				}
				return
			}
			var got []string
			for _, b := range res.EvidenceBlocks[:min(2, len(res.EvidenceBlocks))] {
				g := b.DocumentID + "#" + strings.SplitN(b.Section, ".", 2)[0]
				if slices.Contains(b.HitReasons, "l0:best-section") {
					g += " l0:best-section"
					if b.RetrievalLayer != lookup.LayerL0 || b.Score.Kind != "bm25" || b.Score.Value <= 0 {
						t.Errorf("the placed block has layer %s and score %+v", b.RetrievalLayer, b.Score)
					}
				}
				got = append(got, g)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("first blocks %v, want %v", got, tc.want)
			}
		})
	}
}

// A semantic call that L0's domain filtered never scored the procedures outside that domain. When
// the local lexical search ranks one of them first, one unfiltered call follows, so that the
// verdict weighs the semantic search's view of it: a margin over it is then measured, not
// assumed from its absence (docs/retrieval.md, "L0 hints and the domain filter").
func TestFilteredCallRetriedWhenTheLexicalFavouriteIsOutsideIt(t *testing.T) {
	// L0 names one domain, assistance (the breakdown procedure's); the lexical search ranks the
	// charging procedure, of another category, first.
	const question = "the charger is broken and the customer wants a taxi, who pays?"
	answer := chunk(t, "breakdown-assistance", 3, 0.82, "")
	for _, tc := range []struct {
		name       string
		unfiltered []port.Candidate
		grounded   bool
		why        string
	}{
		{name: "the semantic margin over it holds", unfiltered: []port.Candidate{answer, chunk(t, "ev-charging", 5, 0.70, "")},
			grounded: true, why: "the semantic margin is decisive over the lexical search ranks first ev-charging"},
		{name: "the semantic search ranks it close", unfiltered: []port.Candidate{answer, chunk(t, "ev-charging", 5, 0.80, "")},
			why: "the lexical search ranks first ev-charging rather than breakdown-assistance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &semanticFake{byFilter: map[string][]port.Candidate{"assistance": {answer}, "": tc.unfiltered}}
			svc, _ := semanticService(t, f)
			res := lookupWith(t, svc, question)
			l1 := res.Retrieval.L1
			if l1.CategoryFilter == nil || *l1.CategoryFilter != "assistance" || !l1.UnfilteredRetry || l1.Calls != 2 {
				t.Fatalf("L1 %+v, want the assistance filter and one unfiltered call after it", l1)
			}
			if q := f.queries(); len(q) != 2 || q[0].Category != "assistance" || q[1].Category != "" {
				t.Fatalf("queries %+v", q)
			}
			if grounded := res.EvidenceState == port.StateGrounded; grounded != tc.grounded || !strings.Contains(res.Relevance.Reason, tc.why) {
				t.Errorf("state %s, reason %q; want grounded %v with %q", res.EvidenceState, res.Relevance.Reason, tc.grounded, tc.why)
			}
		})
	}

	t.Run("the lexical favourite inside the filter", func(t *testing.T) {
		// L0 names the operations domain; the lexical search ranks the relocation procedure,
		// of that domain, first: the strong filtered call stands alone.
		f := &semanticFake{byFilter: map[string][]port.Candidate{"operations": {chunk(t, "vehicle-relocation", 3, 0.82, "")}}}
		svc, _ := semanticService(t, f)
		res := lookupWith(t, svc, "how many photos of the dent does the jockey need before he moves the car?")
		if l1 := res.Retrieval.L1; l1.CategoryFilter == nil || *l1.CategoryFilter != "operations" || l1.UnfilteredRetry || l1.Calls != 1 {
			t.Fatalf("L1 %+v, want one call filtered by the operations domain", l1)
		}
	})
}
