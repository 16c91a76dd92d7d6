package retrieval

import (
	"slices"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

// embeddedLang is the index of the embedded procedures in one language, for the tests that read
// the package's parts directly.
func embeddedLang(t *testing.T, lang string) *lexical.Lang {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return lexical.Build(c).Lang(lang)
}

// TestL0KeepsTheMatchesCallersRead: through l0, a question that matches few procedures keeps
// all of them for fusion, the first n the same whatever n, each with a section of its own
// document.
func TestL0KeepsTheMatchesCallersRead(t *testing.T) {
	l := embeddedLang(t, "en")
	docs := func(ms []lexical.FrontMatch) []int {
		var out []int
		for _, m := range ms {
			out = append(out, m.Doc)
		}
		return out
	}
	q := analyseQuestion(l, "windscreen chip on a car returned this morning")
	_, all := l0(l, q, 40, newL0Scratch())
	_, five := l0(l, q, 5, newL0Scratch())
	if len(all) < 6 || len(five) < 5 || !slices.Equal(docs(all[:5]), docs(five[:5])) {
		t.Fatalf("l0 with 40: %v, with 5: %v", docs(all), docs(five))
	}
	for i := range all {
		if d, _ := l.Doc(all[i].Passage(l)); d.ID != l.Docs[all[i].Doc].ID {
			t.Errorf("match of %s has the section of %s", l.Docs[all[i].Doc].ID, d.ID)
		}
	}
}

// A bridged phrase's hit reason names the rule that bridged it and the phrase, whichever rules
// bridged it before: the slot that keeps a phrase's reasons never answers for another rule.
func TestSynonymReasonNamesTheRule(t *testing.T) {
	l := embeddedLang(t, "en")
	texts := newLangTexts(l)
	checked := 0
	for p := range uint32(l.PhraseIndex().Len()) {
		doc, kind, i, _ := l.PhraseIndex().Phrase(p)
		var text string
		switch kind {
		case lexical.PhraseKeyword:
			text = l.Docs[doc].Keywords[i]
		case lexical.PhraseEntity:
			text = l.Docs[doc].Entities[i]
		default:
			continue
		}
		// more rules than a slot keeps, so that some are dropped and made again
		for _, rule := range []string{"phone died", "phone died", "flat tyre", "akku leer", "karre", "handy", "phone died", "handy", "flat tyre"} {
			if got, want := texts.synonymReason(l, p, rule), "l0:synonym:"+rule+"="+text; got != want {
				t.Fatalf("phrase %d, rule %q: reason %q, want %q", p, rule, got, want)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no keyword or entity phrase in the embedded corpus")
	}
}
