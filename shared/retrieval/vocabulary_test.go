package retrieval_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// Operators' words reach the procedures through the synonym files, and German compounds of
// them split: the right procedure leads, and the hit reasons say which synonym bridged.
func TestColloquialQuestionsMatchThroughSynonyms(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ lang, question, doc, synonym string }{
		{"de", "Handy ist tot und die Karre geht nicht auf", "access-failure", "l0:synonym:handy"},
		{"de", "Karre springt nicht an, Kunde steht auf dem Standstreifen", "breakdown-assistance", "l0:synonym:standstreifen"},
		{"de", "Stromtanke nimmt die Ladekarte nicht an", "ev-charging", "l0:synonym:stromtanke"},
		{"de", "E-Flitzer hat nur noch 3 Prozent Akku", "ev-charging", "l0:synonym:e-flitzer"},
		{"de", "Putzrechnung ist zu hoch, Kunde beschwert sich", "vehicle-cleaning", "l0:synonym:putzrechnung"},
		{"en", "customer's phone died and the car won't open", "access-failure", "l0:synonym:phone died"},
	} {
		f.primaryWithReason(t, tc.lang, tc.question, tc.doc, tc.synonym)
	}
}

// primaryWithReason looks the question up and checks that doc is the primary block with a hit
// reason starting with reason; it returns the result, or false when the primary is another.
func (f *fixture) primaryWithReason(t *testing.T, lang, question, doc, reason string) (lookup.Result, bool) {
	t.Helper()
	res := f.lookup(t, lang, question)
	if res.Primary == nil || res.Primary.DocumentID != doc {
		t.Errorf("%q: primary %v, want %s", question, res.Primary, doc)
		return res, false
	}
	if !slices.ContainsFunc(res.Primary.HitReasons, func(r string) bool { return strings.HasPrefix(r, reason) }) {
		t.Errorf("%q: hit reasons %v lack %s", question, res.Primary.HitReasons, reason)
	}
	return res, true
}

// A synonym weighs less than the word itself: the same question asked in the procedures' own
// words scores higher than in the operator's.
func TestSynonymsWeighBelowExactTerms(t *testing.T) {
	f := newFixture(t)
	own, ownSignals := f.lookupSignals(t, "de", "Ladestation nimmt die Ladekarte nicht an")
	slang, slangSignals := f.lookupSignals(t, "de", "Stromtanke nimmt die Ladekarte nicht an")
	if own.Primary == nil || slang.Primary == nil || own.Primary.DocumentID != slang.Primary.DocumentID {
		t.Fatalf("primaries %v, %v", own.Primary, slang.Primary)
	}
	if o, s := ownSignals.Procedure.Weight, slangSignals.Procedure.Weight; s >= o {
		t.Errorf("synonym weight %.2f, exact weight %.2f", s, o)
	}
}

// A keyword of several words whose words the question uses inside a longer operator phrase of
// another meaning does not match whole: a phone whose battery is dead is an access problem, not
// a car with a dead battery. The keyword still matches where the question means it.
func TestLongerSynonymPhraseOutweighsTheKeywordInsideIt(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ lang, question, doc, reason string }{
		{"en", "guy says his phone battery is dead and now he cant get into the car", "access-failure", "l0:synonym:phone battery dead"},
		{"en", "my phone's battery died and I cannot get inside", "access-failure", "l0:synonym:cannot get inside"},
		{"en", "car has a dead battery on the motorway", "breakdown-assistance", "l0:keyword:dead battery"},
		{"de", "Handy-Akku leer, Kunde kommt nicht ins Auto", "access-failure", "l0:synonym:handy akku leer"},
	} {
		res, ok := f.primaryWithReason(t, tc.lang, tc.question, tc.doc, tc.reason)
		if !ok {
			continue
		}
		for _, b := range res.EvidenceBlocks {
			if tc.doc == "access-failure" && (slices.Contains(b.HitReasons, "l0:keyword:dead battery") || slices.Contains(b.HitReasons, "l0:keyword:akku leer")) {
				t.Errorf("%q: %s matched the keyword dead battery whole", tc.question, b.DocumentID)
			}
		}
	}
}

// A word most procedures' front matter names ("Fahrzeug", "Kunde") tells none apart: it gives
// no procedure an L0 rank, so it cannot lift a procedure over the one BM25 finds best. The
// lexical evidence still counts it.
func TestGenericFrontMatterWordsRankNothing(t *testing.T) {
	f := newFixture(t)
	res := f.lookup(t, "de", "Messer im Fahrzeug gefunden")
	if res.Primary == nil || res.Primary.DocumentID != "lost-and-found" {
		t.Fatalf("primary %v, want lost-and-found (the section on dangerous items)", res.Primary)
	}
	for _, b := range res.EvidenceBlocks {
		if slices.Contains(b.HitReasons, "l0:entity:Fahrzeug") {
			t.Errorf("%s has an L0 match on the generic Fahrzeug: %v", b.DocumentID, b.HitReasons)
		}
	}
}
