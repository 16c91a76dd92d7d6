package retrieval

import (
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// coveringProvider is a provider as covered reads it: semantic or not, with its score kind.
type coveringProvider struct {
	LookupProvider
	semantic bool
}

func (p coveringProvider) Semantic() bool { return p.semantic }
func (p coveringProvider) ScoreKind() string {
	if p.semantic {
		return "cosine_similarity"
	}
	return "bm25"
}

// Every branch of covered (docs/retrieval.md, "The clarifying turn"): a weak question is covered
// by the procedures, and may offer a clarification, only on enough evidence of its own path.
func TestCoveredBranches(t *testing.T) {
	min := LexicalMinPoints("en")
	strong := Signals{Support: judge.Support{Words: 4}, Procedure: judge.Support{Matched: 3, Words: 4},
		Points: CoveredShare * min, FrontWeight: frontMatter.min}
	with := func(f func(*Signals)) Signals { s := strong; f(&s); return s }
	sem := func(score float64) *pathViews {
		v := tableViews()
		*v.of(semanticSearch) = view("a", score, "b", score-0.01)
		return v
	}
	for _, tc := range []struct {
		name     string
		semantic bool
		sig      Signals
		views    *pathViews // none: tableViews()
		covered  bool
	}{
		{name: "lexical: enough points, words and front matter", sig: strong, covered: true},
		{name: "lexical: points below the share", sig: with(func(s *Signals) { s.Points = CoveredShare*min - 0.1 })},
		{name: "lexical: one word held", sig: with(func(s *Signals) { s.Procedure.Matched = 1 })},
		{name: "lexical: front matter without an opinion", sig: with(func(s *Signals) { s.FrontWeight = frontMatter.min - 0.1 })},
		{name: "a topic no procedure covers", sig: with(func(s *Signals) { s.Uncovered = judge.Uncovered{Term: "tariff"} })},
		{name: "one informative word", sig: with(func(s *Signals) { s.Support.Words = 1 })},
		{name: "lexical: half the question held, its subject named clearly", sig: with(func(s *Signals) {
			s.Procedure = judge.Support{Matched: 2, Words: 4}
			s.Points, s.FrontWeight = HalfHeldShare*min, WholeQuestionFrontWeight
		}), covered: true},
		{name: "lexical: half held, front matter short of naming the subject", sig: with(func(s *Signals) {
			s.Procedure = judge.Support{Matched: 2, Words: 4}
			s.Points, s.FrontWeight = HalfHeldShare*min, WholeQuestionFrontWeight-0.1
		})},
		{name: "lexical: half held, points below its share", sig: with(func(s *Signals) {
			s.Procedure = judge.Support{Matched: 2, Words: 4}
			s.Points, s.FrontWeight = HalfHeldShare*min-0.1, WholeQuestionFrontWeight
		})},
		{name: "lexical: less than half held at the half share", sig: with(func(s *Signals) {
			s.Procedure = judge.Support{Matched: 2, Words: 5}
			s.Points, s.FrontWeight = HalfHeldShare*min, WholeQuestionFrontWeight
		})},
		{name: "half held but a topic no procedure covers", sig: with(func(s *Signals) {
			s.Procedure = judge.Support{Matched: 2, Words: 4}
			s.Points, s.FrontWeight = HalfHeldShare*min, WholeQuestionFrontWeight
			s.Uncovered = judge.Uncovered{Term: "tariff"}
		})},
		{name: "semantic: the closest procedure at the supported cosine", semantic: true, sig: with(func(s *Signals) { s.Points = 0 }),
			views: sem(config.DefaultGroundedCosine), covered: true},
		{name: "semantic: below the supported cosine, whatever the lexical points", semantic: true, sig: strong,
			views: sem(config.DefaultGroundedCosine - 0.01)},
		{name: "semantic path down: the lexical rule", semantic: true, sig: strong, covered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{opts: DefaultOptions(), provider: coveringProvider{semantic: tc.semantic}}
			r := judgement{signals: tc.sig, lang: "en"}
			views := tc.views
			if views == nil {
				views = tableViews()
			}
			if got := s.covered(r, views); got != tc.covered {
				t.Errorf("covered = %v, want %v", got, tc.covered)
			}
		})
	}
}

// The confirmed verdict on lexical evidence, branch by branch: the procedure holds the share of the
// points any procedure needs, or half the question at HalfHeldShare with its subject named
// clearly, each said in the reason; and the uncovered-topic check runs on weak evidence exactly
// where either branch could ground it (lexicallyClarifiable).
func TestConfirmedHalfHeldBranch(t *testing.T) {
	min := LexicalMinPoints("en")
	half := Signals{Procedure: judge.Support{Matched: 3, Words: 6}, Points: HalfHeldShare * min, FrontWeight: WholeQuestionFrontWeight}
	with := func(f func(*Signals)) Signals { s := half; f(&s); return s }
	for _, tc := range []struct {
		name      string
		sig       Signals
		confirmed bool
		say       string
	}{
		{name: "half held at its share, subject named", sig: half, confirmed: true, say: "at least half of them"},
		{name: "the whole rule", sig: with(func(s *Signals) { s.Points = ConfirmedShare * min; s.FrontWeight = frontMatter.min }),
			confirmed: true, say: "a confirmed procedure needs"},
		{name: "less than half held", sig: with(func(s *Signals) { s.Procedure.Words = 7 }), say: "does not clearly answer"},
		{name: "points below the half share", sig: with(func(s *Signals) { s.Points = HalfHeldShare*min - 0.05 }), say: "does not clearly answer"},
		{name: "front matter short of naming the subject", sig: with(func(s *Signals) { s.FrontWeight = WholeQuestionFrontWeight - 0.05 }),
			say: "does not clearly answer"},
		{name: "one word of two held", sig: with(func(s *Signals) { s.Procedure = judge.Support{Matched: 1, Words: 2} }), say: "does not clearly answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{opts: DefaultOptions(), provider: coveringProvider{}}
			lex := lexicalJudgement{proc: tc.sig.Procedure, points: tc.sig.Points}
			why, ok := s.confirmedVerdict(&lexical.Lang{Language: "en"}, lex, tc.sig, lookup.L1Details{}, tableViews())
			if ok != tc.confirmed || !strings.Contains(why, tc.say) {
				t.Errorf("confirmed = %v (%s), want %v saying %q", ok, why, tc.confirmed, tc.say)
			}
			if clar := lexicallyClarifiable(tc.sig.Procedure, tc.sig.Points, "en"); tc.confirmed && !clar {
				t.Errorf("grounded when confirmed, but the uncovered-topic check would not run on it")
			}
		})
	}
	if lexicallyClarifiable(judge.Support{Matched: 2, Words: 5}, HalfHeldShare*min, "en") {
		t.Errorf("less than half held at the half share: no branch could ground it, the check need not run")
	}
}

// The clarifying question names every option in the request's language, English titles run on
// in lower case unless they open with an abbreviation.
func TestClarifyingQuestionWording(t *testing.T) {
	opts := func(titles ...string) []lookup.Option {
		var out []lookup.Option
		for _, ti := range titles {
			out = append(out, lookup.Option{Title: ti})
		}
		return out
	}
	for _, tc := range []struct {
		lang string
		opts []lookup.Option
		want string
	}{
		{"en", opts("Damage handling procedure"), "Is this about damage handling procedure?"},
		{"en", opts("Digital key and access failures", "Lost and found items"),
			"Is this about digital key and access failures or lost and found items?"},
		{"en", opts("EV charging and low battery", "Breakdown and roadside assistance", "Vehicle relocation and handover"),
			"Is this about EV charging and low battery, breakdown and roadside assistance or vehicle relocation and handover?"},
		{"de", opts("Fundsachen", "Störungen bei digitalem Schlüssel und Zugang"),
			"Geht es um Fundsachen oder Störungen bei digitalem Schlüssel und Zugang?"},
	} {
		if got := clarifyingQuestion(tc.lang, tc.opts); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

// Evidence short of its threshold is never written as the threshold itself, and the words no
// procedure uses are counted apart, as coverage leaves them out.
func TestReasonFigures(t *testing.T) {
	if got := below(14.46, 14.5); got != "14.46" {
		t.Errorf("below(14.46, 14.5) = %q", got)
	}
	if got := below(13.7, 14.5); got != "13.7" {
		t.Errorf("below(13.7, 14.5) = %q", got)
	}
	if got := wordsOf(judge.Support{Words: 3, Unknown: 2}); got != "3 informative words, 2 of them used by no procedure" {
		t.Errorf("wordsOf = %q", got)
	}
	if got := wordsOf(judge.Support{Words: 3}); got != "3 informative words" {
		t.Errorf("wordsOf = %q", got)
	}
}

// An alternative none of the blocks is of gets its best block within top_k, after the leading
// blocks and the complements' and in place of the lowest-ranked one, or added when there is room;
// an alternative already shown, or one whose source names no section, changes nothing; with no
// room after the leading blocks, the blocks stay as they are.
func TestShowAlternatives(t *testing.T) {
	l := embeddedLang(t, "en")
	doc := func(id string) []int {
		var out []int
		for p := range l.Passages {
			if d, _ := l.Doc(p); d.ID == id {
				out = append(out, p)
			}
		}
		return out
	}
	primary, other := doc("access-failure"), doc("lost-and-found")
	blocks := make([]ranked, 5)
	for i := range blocks {
		blocks[i] = localBlock(l, lexical.Hit{Passage: primary[i]}, "test")
	}
	alt := lookup.Alternative{DocumentID: "lost-and-found", Source: l.Source(other[2])}
	show := func(alts []lookup.Alternative, bs []ranked, complements, topK int) ([]ranked, []lookup.EvidenceBlock, bool) {
		r := judgement{Relevance: lookup.Relevance{Alternatives: alts, Complements: make([]lookup.Complement, complements)}}
		got, evidence := showAlternatives(l, r, bs, nil, topK, 0)
		return got, evidence, evidence != nil
	}
	ids := func(bs []ranked) []string {
		out := make([]string, len(bs))
		for i, b := range bs {
			out[i] = b.Source
		}
		return out
	}

	got, evidence, ok := show([]lookup.Alternative{alt}, blocks, 0, 5)
	if !ok || len(got) != 5 || got[4].Source != alt.Source || evidence[4].Rank != 5 {
		t.Fatalf("blocks %v, want the alternative's block %s last of 5", ids(got), alt.Source)
	}
	if !slices.Equal(ids(got[:4]), ids(blocks[:4])) {
		t.Errorf("the first four blocks moved: %v, were %v", ids(got[:4]), ids(blocks[:4]))
	}
	got, _, _ = show([]lookup.Alternative{alt}, blocks, 3, 5)
	if got[4].Source != alt.Source || !slices.Equal(ids(got[:4]), ids(blocks[:4])) {
		t.Errorf("with three complements: %v, want the first four kept and the alternative last", ids(got))
	}
	for name, alts := range map[string][]lookup.Alternative{
		"already shown":   {{DocumentID: "access-failure", Source: l.Source(primary[5])}},
		"no section":      {{DocumentID: "lost-and-found", Source: "procedures/en/lost-and-found.md"}},
		"unknown section": {{DocumentID: "lost-and-found", Source: "procedures/en/lost-and-found.md#nowhere"}},
	} {
		if _, _, ok := show(alts, blocks, 0, 5); ok {
			t.Errorf("%s: the blocks changed", name)
		}
	}
	if _, _, ok := show([]lookup.Alternative{alt}, blocks[:3], 0, 3); ok {
		t.Error("top_k 3: an alternative displaced a leading block")
	}
	if got, _, _ := show([]lookup.Alternative{alt}, blocks[:2], 0, 5); len(got) != 3 || got[2].Source != alt.Source {
		t.Errorf("two blocks of five: %v, want the alternative's added third", ids(got))
	}
	two := []lookup.Alternative{alt, {DocumentID: "fines-and-parking", Source: l.Source(doc("fines-and-parking")[1])}}
	if got, _, _ := show(two, blocks, 0, 5); got[3].Source != alt.Source || got[4].Source != two[1].Source {
		t.Errorf("two alternatives: %v, want both after the three leading blocks", ids(got))
	}
}

// An alternative's block carries the score of the path whose ranking named its section, with
// that path's kind: the front matter's L0 weight here, not a BM25 score it never had.
func TestAlternativesBlockCarriesItsPathsScore(t *testing.T) {
	l := embeddedLang(t, "en")
	var primary, other []int
	for p := range l.Passages {
		switch d, _ := l.Doc(p); d.ID {
		case "access-failure":
			primary = append(primary, p)
		case "lost-and-found":
			other = append(other, p)
		}
	}
	blocks := make([]ranked, 3)
	for i := range blocks {
		blocks[i] = localBlock(l, lexical.Hit{Passage: primary[i]}, "test")
	}
	views := newPathViews(evidencePaths[:])
	defer views.release()
	views.of(lexicalSearch).kind = bm25Kind
	views.of(lexicalSearch).add("access-failure", 4.2, l.Source(primary[1])) // the lexical search names no section of it
	views.of(frontMatter).kind = l0WeightKind
	views.of(frontMatter).add("lost-and-found", 2.46, l.Source(other[2]))
	alt := (&Service{}).alternative(l, "lost-and-found", views, blocks)
	if alt.Source != l.Source(other[2]) {
		t.Fatalf("the alternative's source %q, want the front matter's section %q", alt.Source, l.Source(other[2]))
	}
	r := judgement{Relevance: lookup.Relevance{Alternatives: []lookup.Alternative{alt}}, views: views}
	got, _ := showAlternatives(l, r, blocks, nil, 5, 0)
	if len(got) != 4 || got[3].Source != alt.Source {
		t.Fatalf("blocks %d, the last %s; want the alternative's %s added", len(got), got[len(got)-1].Source, alt.Source)
	}
	if want := (port.Score{Value: 2.46, Kind: l0WeightKind, HigherIsBetter: true}); got[3].Score != want {
		t.Errorf("the alternative's block scores %+v, want %+v", got[3].Score, want)
	}
}

// A confirmed lookup's lexical search of the procedure's own sections routes the scope section
// as fusion does (routeAfterScope): behind the procedure's three best other sections, or last of
// fewer.
func TestConfirmedSearchRoutesTheScopeAfterThreeSections(t *testing.T) {
	l := embeddedLang(t, "en")
	d := l.DocIndex("access-failure")
	first, ok := l.PassageOf("access-failure", l.Docs[d].Sections[0].Anchor)
	if !ok || l.Docs[d].Sections[0].Number != 1 {
		t.Fatal("access-failure has no scope section in the embedded corpus")
	}
	// sec are the hits of sections n (1 the scope), best first.
	sec := func(ns ...int) []lexical.Hit {
		hits := make([]lexical.Hit, len(ns))
		for i, n := range ns {
			hits[i] = lexical.Hit{Passage: first + n - 1, Score: float64(10 - i)}
		}
		return hits
	}
	for _, tc := range []struct {
		name       string
		hits, want []lexical.Hit
	}{
		{"scope best", sec(1, 2, 3, 4, 5), sec(2, 3, 4, 1, 5)},
		{"scope second", sec(4, 1, 2, 5), sec(4, 2, 5, 1)},
		{"scope fourth already", sec(2, 3, 4, 1, 5), sec(2, 3, 4, 1, 5)},
		{"fewer than three others", sec(1, 3), sec(3, 1)},
		{"the scope alone", sec(1), sec(1)},
		{"no scope", sec(2, 3, 4), sec(2, 3, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scopeAfterHits(l, slices.Clone(tc.hits))
			passages := func(hs []lexical.Hit) []int {
				var ps []int
				for _, h := range hs {
					ps = append(ps, h.Passage-first+1)
				}
				return ps
			}
			if !slices.Equal(passages(got), passages(tc.want)) {
				t.Errorf("sections %v, want %v", passages(got), passages(tc.want))
			}
		})
	}
}

// A confirmed procedure judged insufficient on lexical evidence is told why: each condition of
// LexicallyConfirmed that fails, and no figure shown rounded up to the one it misses.
func TestConfirmedShortfallNamesWhatFails(t *testing.T) {
	need := ConfirmedShare * LexicalMinPoints("en")
	enough := Signals{Procedure: judge.Support{Matched: 3, Words: 5}, Points: need + 1, FrontWeight: frontMatter.min}
	with := func(f func(*Signals)) Signals { s := enough; f(&s); return s }
	for _, tc := range []struct {
		name     string
		sig      Signals
		say, not []string
	}{
		{name: "points just short", sig: with(func(s *Signals) { s.Points = need - 0.004 }),
			say: []string{"evidence " + fixed(need-0.004, 2) + ", a confirmed procedure needs " + fixed(need, 1)},
			not: []string{"words a confirmed procedure must hold", "front matter"}},
		{name: "one word held", sig: with(func(s *Signals) { s.Procedure.Matched = 1 }),
			say: []string{"fewer than the 2 words"}, not: []string{"needs " + fixed(need, 1) + ")", "front matter"}},
		{name: "front matter just short", sig: with(func(s *Signals) { s.FrontWeight = frontMatter.min - 0.01 }),
			say: []string{"front matter", "L0 weight 0.99, a confirmed procedure needs 1.0"},
			not: []string{"words a confirmed procedure must hold", "needs " + fixed(need, 1) + ")"}},
		{name: "everything short", sig: Signals{Procedure: judge.Support{Matched: 1, Words: 5}, Points: 2},
			say: []string{"a confirmed procedure needs " + fixed(need, 1), "fewer than the 2 words", "front matter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if LexicallyConfirmed(tc.sig, "en", ConfirmedShare, HalfHeldShare) {
				t.Fatalf("%+v is confirmed; the case needs a shortfall", tc.sig)
			}
			lex := lexicalJudgement{proc: tc.sig.Procedure, points: tc.sig.Points}
			why := confirmedShortfall(lex, tc.sig, need)
			for _, s := range tc.say {
				if !strings.Contains(why, s) {
					t.Errorf("%q does not say %q", why, s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(why, s) {
					t.Errorf("%q says %q, which holds", why, s)
				}
			}
		})
	}
}
