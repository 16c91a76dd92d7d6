package synonyms_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func mustCompile(t testing.TB, lang, src string) *synonyms.Matcher {
	t.Helper()
	s, err := synonyms.Parse(lang+"/test.txt", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	return s.Compile(textproc.New(lang).Tokens)
}

// expansions renders Expand's result as "start-end:alternative" strings.
func expansions(m *synonyms.Matcher, tokens []string) []string {
	var out []string
	for _, e := range m.Expand(tokens, nil, nil) {
		out = append(out, fmt.Sprintf("%d-%d:%s", e.Start, e.End, strings.Join(e.Tokens, " ")))
	}
	return out
}

// phoneRules are rules with terms of one and of several tokens, mappings and equivalences.
const phoneRules = `
phone => smartphone
phone died, dead phone => low battery
won't open, locked out => unlock
car, motor => vehicle
`

func TestExpandMatchesMultiWordTermsLongestFirst(t *testing.T) {
	m := mustCompile(t, "en", phoneRules)
	en := textproc.New("en")
	for _, tc := range []struct {
		question string
		want     []string
	}{
		{"My phone died", []string{"1-3:low battery"}},
		{"my phone is fine", []string{"1-2:smartphone"}},
		{"Dead phone, car won't open!", []string{"0-2:low battery", "2-3:vehicle", "3-6:unlock"}},
		{"I am locked out", []string{"2-4:unlock"}},
		{"won't", nil}, // a prefix of a term is no match
		{"open the phone", []string{"2-3:smartphone"}},
		{"", nil},
	} {
		toks := en.Tokens(tc.question)
		if got := expansions(m, toks); !slices.Equal(got, tc.want) {
			t.Errorf("%q (tokens %q): %v, want %v", tc.question, toks, got, tc.want)
		}
	}
}

func TestExpandEquivalenceAndMapping(t *testing.T) {
	m := mustCompile(t, "en", `
scratch, scuff, scrape
keyed => scratch, vandalism
`)
	for _, tc := range []struct {
		question string
		want     []string
	}{
		// an equivalence expands each term to the others, never to itself
		{"scuff", []string{"0-1:scratch", "0-1:scrape"}},
		{"scratch", []string{"0-1:scuff", "0-1:scrape"}},
		// a mapping goes one way only
		{"keyed", []string{"0-1:scratch", "0-1:vandalism"}},
		{"vandalism", nil},
	} {
		if got := expansions(m, strings.Fields(tc.question)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.question, got, tc.want)
		}
	}
	e := m.Expand([]string{"keyed"}, nil, nil)[0]
	if e.Rule != "keyed" || e.File != "en/test.txt" || e.Line != 3 {
		t.Errorf("rule %q source %s:%d", e.Rule, e.File, e.Line)
	}
}

func TestExpandFoldsUmlautsAndCase(t *testing.T) {
	m := mustCompile(t, "de", `
Knöllchen, Strafzettel => Bußgeld
E-Flitzer, Stromer => Elektrofahrzeug
Handy tot => Akku leer
`)
	de := textproc.New("de")
	for _, tc := range []struct {
		question string
		want     []string
	}{
		{"KNOELLCHEN bekommen", []string{"0-1:bussgeld"}},
		{"ein Knöllchen", []string{"1-2:bussgeld"}},
		{"Der e-Flitzer lädt nicht", []string{"1-3:elektrofahrzeug"}},
		{"handy TOT", []string{"0-2:akku leer"}},
	} {
		if got := expansions(m, de.Tokens(tc.question)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.question, got, tc.want)
		}
	}
	if got := m.Expand(de.Tokens("Knöllchen"), nil, nil)[0].Rule; got != "Knöllchen" {
		t.Errorf("rule %q, want the term as written", got)
	}
	want := []string{"akku", "bussgeld", "e", "elektrofahrzeug", "flitzer", "handy", "knollchen", "leer", "strafzettel", "stromer", "tot"}
	if got := m.Vocabulary(); !slices.Equal(got, want) {
		t.Errorf("vocabulary %q, want %q", got, want)
	}
}

func TestCompileMergesRulesOfOneTerm(t *testing.T) {
	a, _ := synonyms.Parse("de/operators.txt", strings.NewReader("Handy => Smartphone\nHandy, Mobiltelefon\n"))
	b, _ := synonyms.Parse("de/openthesaurus.txt", strings.NewReader("handy, mobiltelefon => smartphone\n"))
	m := synonyms.Merge(a, b).Compile(textproc.New("de").Tokens)
	got := m.Expand([]string{"handy"}, nil, nil)
	if len(got) != 2 || got[0].Tokens[0] != "smartphone" || got[1].Tokens[0] != "mobiltelefon" {
		t.Fatalf("%v: want smartphone then mobiltelefon, each once", got)
	}
	if got[0].File != "de/operators.txt" || got[0].Line != 1 || m.Terms() != 2 {
		t.Errorf("source %s:%d, terms %d", got[0].File, got[0].Line, m.Terms())
	}
}

func TestExpandIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range synonyms.MaxAlternatives + 5 {
		fmt.Fprintf(&b, "w => a%d\n", i)
	}
	m := mustCompile(t, "en", b.String())
	if got := len(m.Expand([]string{"w"}, nil, nil)); got != synonyms.MaxAlternatives {
		t.Errorf("%d alternatives, want %d", got, synonyms.MaxAlternatives)
	}
	q := slices.Repeat([]string{"w"}, synonyms.MaxTokens*2)
	if got := len(m.Expand(q, nil, nil)); got != synonyms.MaxExpansions {
		t.Errorf("%d expansions, want %d", got, synonyms.MaxExpansions)
	}
}

// BenchmarkExpand expands a question of 2,000 characters against 5,000 rules.
func BenchmarkExpand(b *testing.B) {
	var src strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&src, "word%d, other%d => target%d\n", i, i, i)
		if i%10 == 0 {
			fmt.Fprintf(&src, "word%d died, dead word%d, word%d won't open => battery\n", i, i, i)
		}
	}
	m := mustCompile(b, "en", src.String())
	var q strings.Builder
	for i := 0; q.Len() < 2000; i++ {
		fmt.Fprintf(&q, "the word%d died and word%d won't open ", i*10, i*7)
	}
	toks := textproc.New("en").Tokens(q.String()[:2000])
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if len(m.Expand(toks, nil, nil)) == 0 {
			b.Fatal("no expansion")
		}
	}
}

// With stemming, a term of several words matches its words' inflections and passes over fillers
// between them; a one-word term matches only the word itself, and no term starts or ends on a
// filler it passed over.
func TestExpandStemmedTermsAndFillers(t *testing.T) {
	s, err := synonyms.Parse("en/test.txt", strings.NewReader(`
phone battery died, phone dead => digital key
keying => scratch
car won't open => unlock
charge station => charging station, charging point
`))
	if err != nil {
		t.Fatal(err)
	}
	en := textproc.New("en")
	m := s.CompileStemmed(en.Tokens, en.Stem)
	fillers := map[string]bool{"the": true, "is": true, "s": true, "his": true, "completely": true}
	for _, tc := range []struct {
		question string
		want     []string
	}{
		{"his phone batteries died", []string{"1-4:digital key"}},
		{"the customer's phone is completely dead", []string{"3-7:digital key"}},
		{"the phone is the is dead", nil}, // more fillers in a row than MaxFillers
		{"the cars won't open", []string{"1-5:unlock"}},
		{"the key is not keyed", nil}, // "key" and "keyed" are not "keying"
		{"he is keying cars", []string{"2-3:scratch"}},
		{"phone is", nil},                  // a term never ends on a filler
		{"a charging station nearby", nil}, // a term that stems like its target is that target
		{"a charge station nearby", nil},
	} {
		toks := en.Tokens(tc.question)
		stems := make([]string, len(toks))
		for i, tok := range toks {
			stems[i] = en.Stem(tok)
		}
		var got []string
		for _, e := range m.Expand(toks, stems, func(i int) bool { return fillers[toks[i]] }) {
			got = append(got, fmt.Sprintf("%d-%d:%s", e.Start, e.End, strings.Join(e.Tokens, " ")))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q (tokens %q): %v, want %v", tc.question, toks, got, tc.want)
		}
	}
}

// A caller that keeps each token's Start (a question analyser's cache of words) expands exactly
// as Expand does; a Start it has not made yet (the zero Start) is looked up.
func TestExpandFromKeptStartsIsExpand(t *testing.T) {
	m := mustCompile(t, "en", phoneRules)
	en := textproc.New("en")
	filler := func(toks []string) func(int) bool {
		return func(i int) bool { return toks[i] == "is" || toks[i] == "the" }
	}
	for _, q := range []string{"My phone died", "Dead phone, car won't open!", "the phone is dead", "I am locked out of the motor", ""} {
		toks := en.Tokens(q)
		want := m.Expand(toks, nil, filler(toks))
		starts := make([]synonyms.Start, len(toks))
		for i, tok := range toks {
			starts[i] = m.Kept(m.StartOf(tok, tok), tok)
		}
		if got := m.AppendExpandFrom(nil, toks, nil, starts, filler(toks)); !slices.EqualFunc(got, want, sameExpansion) {
			t.Errorf("%q with kept starts: %v, want %v", q, got, want)
		}
		if got := m.AppendExpandFrom(nil, toks, nil, make([]synonyms.Start, len(toks)), filler(toks)); !slices.EqualFunc(got, want, sameExpansion) {
			t.Errorf("%q with starts not made: %v, want %v", q, got, want)
		}
	}
}

func sameExpansion(a, b synonyms.Expansion) bool {
	return a.Start == b.Start && a.End == b.End && slices.Equal(a.Tokens, b.Tokens) && a.Rule == b.Rule
}
