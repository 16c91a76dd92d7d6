package textproc

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzGroups analyses untrusted text in both languages, with and without a compound splitter:
// no panic, and the output is bounded by the input. Every group has a term, at most four parts
// (a split has at most three levels), no part for a token over MaxSplitToken; the analysis is
// deterministic, and QuestionGroups differs from Groups only by words kept whole.
func FuzzGroups(f *testing.F) {
	splitters := map[string]*Splitter{}
	for _, lang := range Languages {
		splitters[lang] = NewSplitter(New(lang), "Die Windschutzscheibe hat einen Riss. Der Akku ist leer. Das Ladekabel steckt fest. "+
			"Schaden Kabel Ladung Scheibe Reifen Fahrzeug Werkstatt Kunde Unfall Schlüssel Türen Bereitschaft")
	}
	for _, s := range []string{"Akku unter 10 Prozent, Kunde steht an der Ladesäule", "deep scratch on the rear door",
		strings.Repeat("schadens", 250), strings.Repeat("ä", 2000), strings.Repeat("1234567890", 200),
		"schadenщкодаσχάδηダメージ損害ضرر", "\ufb01ne \uff44\uff41\uff4d\uff41\uff47\uff45 dam\u00adage", "\xff\xfe\x00",
		"Bußgeld ẞ Schaeden aee", "\ufdfa\u3300", "akkuakkuakkuakkuakkuakkuakkuakkuakkuakku kabelkabelkabel"} {
		f.Add(s, true, true)
		f.Add(s, false, false)
	}
	f.Fuzz(func(t *testing.T, text string, de, split bool) {
		lang := "en"
		if de {
			lang = "de"
		}
		a := New(lang)
		if split {
			a = a.WithSplitter(splitters[lang])
		}
		groups := a.Groups(text)
		// NFKD expands a character at most eighteen-fold; every token needs a character.
		if n := utf8.RuneCountInString(text); len(groups) > 18*n {
			t.Fatalf("%d groups from %d characters", len(groups), n)
		}
		for _, g := range groups {
			if g.Term == "" {
				t.Fatalf("a group without a term: %+v", g)
			}
			if len(g.Parts) > 4 || (!split && len(g.Parts) > 0) {
				t.Fatalf("group %+v has %d parts", g, len(g.Parts))
			}
			if utf8.ValidString(text) && !utf8.ValidString(g.Term) {
				t.Fatalf("a term that is not UTF-8 from valid text: %q", g.Term)
			}
		}
		for i, tok := range nonStop(a, text) {
			if len(tok) > MaxSplitToken && len(groups[i].Parts) > 0 {
				t.Fatalf("a %d-byte token was split: %v", len(tok), groups[i].Parts)
			}
		}
		if again := a.Groups(text); !reflect.DeepEqual(again, groups) {
			t.Fatalf("Groups is not deterministic: %v then %v", groups, again)
		}
		question := a.QuestionGroups(text)
		if len(question) != len(groups) {
			t.Fatalf("QuestionGroups has %d groups, Groups %d", len(question), len(groups))
		}
		for i, g := range question {
			whole := Group{Term: groups[i].Term}
			if !reflect.DeepEqual(g, groups[i]) && !reflect.DeepEqual(g, whole) {
				t.Fatalf("QuestionGroups[%d] = %+v, Groups %+v", i, g, groups[i])
			}
		}
	})
}

func nonStop(a *Analyzer, text string) []string {
	var out []string
	for _, t := range a.Tokens(text) {
		if !a.IsStop(t) {
			out = append(out, t)
		}
	}
	return out
}

// FuzzAnalyseQuestionTokens: whatever the text, a question's analysis holds the tokens Tokens
// gives for the whole text and, sentence by sentence, those it gives for each sentence, each
// with its Stem.
func FuzzAnalyseQuestionTokens(f *testing.F) {
	for _, s := range []string{"Customer cant open the car. Phone is dead! What now?", "Kunde steht aufm Hof. Is ne Frage z. B. zur Gebühr.",
		"a. \u0308e. \u00ad. ẞ. \ufb01ne? \ufdfa! x", "2. Step. e.g. this\n\n  next", ". . .", "Ä. ä. ae. Oe? ue!"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, de bool) {
		lang := "en"
		if de {
			lang = "de"
		}
		a := New(lang)
		var qa QuestionAnalysis
		a.AnalyseQuestion(&qa, text)
		if want := a.Tokens(text); !slices.Equal(qa.Tokens, want) {
			t.Fatalf("tokens %q, want %q", qa.Tokens, want)
		}
		if len(qa.Stems) != len(qa.Tokens) {
			t.Fatalf("%d stems for %d tokens", len(qa.Stems), len(qa.Tokens))
		}
		from, n := 0, 0
		for start, end := range WholeSentences(text) {
			if n == len(qa.Ends) {
				t.Fatalf("%d sentence ends for more sentences", len(qa.Ends))
			}
			if got, want := qa.Tokens[from:qa.Ends[n]], a.Tokens(text[start:end]); !slices.Equal(got, want) {
				t.Fatalf("sentence %d's tokens %q, want %q", n, got, want)
			}
			from, n = qa.Ends[n], n+1
		}
		if n != len(qa.Ends) || from != len(qa.Tokens) {
			t.Fatalf("%d sentence ends for %d sentences, the last at %d of %d tokens", len(qa.Ends), n, from, len(qa.Tokens))
		}
	})
}
