package retrieval

import (
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
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
		Points: CoveredShare * min, FrontWeight: agreement.FrontMin}
	with := func(f func(*Signals)) Signals { s := strong; f(&s); return s }
	sem := func(score float64) [pathCount]pathView {
		var v [pathCount]pathView
		v[pathSemantic] = view("a", score, "b", score-0.01)
		return v
	}
	for _, tc := range []struct {
		name     string
		semantic bool
		sig      Signals
		views    [pathCount]pathView
		covered  bool
	}{
		{name: "lexical: enough points, words and front matter", sig: strong, covered: true},
		{name: "lexical: points below the share", sig: with(func(s *Signals) { s.Points = CoveredShare*min - 0.1 })},
		{name: "lexical: one word held", sig: with(func(s *Signals) { s.Procedure.Matched = 1 })},
		{name: "lexical: front matter without an opinion", sig: with(func(s *Signals) { s.FrontWeight = agreement.FrontMin - 0.1 })},
		{name: "a topic no procedure covers", sig: with(func(s *Signals) { s.Uncovered = judge.Uncovered{Term: "tariff"} })},
		{name: "one informative word", sig: with(func(s *Signals) { s.Support.Words = 1 })},
		{name: "semantic: the closest procedure at the supported cosine", semantic: true, sig: with(func(s *Signals) { s.Points = 0 }),
			views: sem(DefaultGroundedCosine), covered: true},
		{name: "semantic: below the supported cosine, whatever the lexical points", semantic: true, sig: strong,
			views: sem(DefaultGroundedCosine - 0.01)},
		{name: "semantic path down: the lexical rule", semantic: true, sig: strong, covered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{opts: DefaultOptions(), provider: coveringProvider{semantic: tc.semantic}}
			r := judgement{signals: tc.sig, lang: "en"}
			if got := s.covered(r, &tc.views); got != tc.covered {
				t.Errorf("covered = %v, want %v", got, tc.covered)
			}
		})
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
