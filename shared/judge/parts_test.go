package judge

import (
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

// PassagesHeld gives every section of a procedure the mask PassageHeld gives it, whatever the
// question's words (compounds and synonyms included), in both languages.
func TestPassagesHeldIsPassageHeldOfEachSection(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := lexical.Build(c)
	for lang, questions := range map[string][]string{
		"en": {"Customer's tyre burst on the motorway, do we pay a taxi? Also a phone was found in a car, how long do we keep it?",
			"car won't unlock, phone dead, customer waiting in the rain with a kid"},
		"de": {"Handy tot, Auto geht nicht auf, Kundin steht im Regen. Und eine Geldbörse lag unterm Beifahrersitz, was nun?",
			"Ladekabel steckt fest an der Ladesäule, Akku unter 10 Prozent"},
	} {
		l := ix.Lang(lang)
		for _, text := range questions {
			q := NewQuestion(l, l.Analyzer.QuestionWords(text))
			if q.Words() == 0 {
				t.Fatalf("%q has no words", text)
			}
			var held [64]uint64
			holding := 0 // sections holding a word of the question
			for doc := range l.Docs {
				lo, hi := l.Postings().DocPassages(doc)
				PassagesHeld(l, q, doc, held[:])
				for p := lo; p < hi; p++ {
					if want := PassageHeld(l, q, p); held[p-lo] != want {
						t.Errorf("%s %q, %s section %d: %b, PassageHeld %b", lang, text, l.Docs[doc].ID, p-lo, held[p-lo], want)
					}
					if held[p-lo] != 0 {
						holding++
					}
				}
			}
			if holding == 0 {
				t.Errorf("%s %q: no section holds a word of it", lang, text)
			}
		}
	}
}
