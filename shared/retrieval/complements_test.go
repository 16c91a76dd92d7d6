package retrieval_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// A question with two needs names the procedure of its other part as a complement: its best
// block follows the primary within top_k, it covers the words of its part, the reason says so,
// it is neither an alternative nor a clarification's option, and the trace records it. A chatty
// single-need question that mentions other things in passing names none.
func TestComplementsOfATwoNeedQuestion(t *testing.T) {
	f := newFixture(t)
	q := "Guy's got a blown tyre on the autobahn and wants to just walk off and leave it, allowed? Also the car was covered in dog hair when he picked it up, what do we bill the person before him?"
	res := f.lookup(t, "en", q)
	if res.Primary == nil || res.Primary.DocumentID != "breakdown-assistance" {
		t.Fatalf("primary %+v", res.Primary)
	}
	cs := res.Relevance.Complements
	if len(cs) != 1 || cs[0].DocumentID != "vehicle-cleaning" || !slices.Contains(cs[0].Covers, "dog") ||
		!slices.Contains(cs[0].Covers, "hair") || cs[0].Assessment != lookup.AssessmentStrong {
		t.Fatalf("complements %+v", cs)
	}
	if len(res.EvidenceBlocks) < 2 || res.EvidenceBlocks[1].Source != cs[0].Source {
		t.Errorf("the complement's block %s does not follow the primary", cs[0].Source)
	}
	if !strings.Contains(res.Relevance.Reason, "vehicle-cleaning answers the question's part on dog, hair") {
		t.Errorf("reason %q", res.Relevance.Reason)
	}
	for _, a := range res.Relevance.Alternatives {
		if a.DocumentID == "vehicle-cleaning" {
			t.Error("the complement is an alternative")
		}
	}
	if c := res.Relevance.Clarification; c != nil {
		for _, o := range c.Options {
			if o.Procedure == "vehicle-cleaning" {
				t.Error("the complement is a clarification's option")
			}
		}
	}
	if tr := f.trace(t, res.InvocationID); !slices.Equal(tr.RetrievalDetails.Complements, []string{"vehicle-cleaning"}) {
		t.Errorf("trace records complements %v", tr.RetrievalDetails.Complements)
	}

	// A confirmed follow-up still names the other part, from the local pass.
	conf := f.confirmed(t, "en", q, "breakdown-assistance")
	if len(conf.Relevance.Complements) != 1 || conf.Relevance.Complements[0].DocumentID != "vehicle-cleaning" {
		t.Errorf("confirmed follow-up's complements %+v", conf.Relevance.Complements)
	}

	chatty := "Hi, sorry to bother you this late on a Sunday, the customer's phone died and now the car won't open and she is standing in the rain, what now?"
	if cs := f.lookup(t, "en", chatty).Relevance.Complements; len(cs) > 0 {
		t.Errorf("a single-need question names complements %+v", cs)
	}
}

// Two needs in two sentences are told apart by the sentences even when the primary's procedure
// mentions the second need's words somewhere (breakdown assistance speaks of a phone and of
// keeping things): the second sentence's procedure is a complement, its block among the first.
// A situation told in one sentence and asked about in the next names none.
func TestComplementOfASecondSentence(t *testing.T) {
	f := newFixture(t)
	q := "Customer's tyre burst on the motorway and she wants a taxi home, do we pay for it? Also a phone was found in a car yesterday, how long do we keep it?"
	res := f.lookup(t, "en", q)
	if res.Primary == nil || res.Primary.DocumentID != "breakdown-assistance" {
		t.Fatalf("primary %+v", res.Primary)
	}
	cs := res.Relevance.Complements
	if len(cs) != 1 || cs[0].DocumentID != "lost-and-found" || !slices.Contains(cs[0].Covers, "phone") {
		t.Fatalf("complements %+v", cs)
	}
	if len(res.EvidenceBlocks) < 2 || res.EvidenceBlocks[1].Source != cs[0].Source {
		t.Errorf("the complement's block %s does not follow the primary", cs[0].Source)
	}
	single := "Our parked car was hit and the other driver drove off. Do we need the police?"
	if cs := f.lookup(t, "en", single).Relevance.Complements; len(cs) > 0 {
		t.Errorf("a single-need question of two sentences names complements %+v", cs)
	}
}

// A second need whose words the primary's procedure also uses (a trip, a customer, driving on) is
// told by its part of the question asked alone, in a sentence of its own or after a dash joining
// it to the first: grounded there on its procedure, which becomes a strong complement with the
// part's words, the part's own answer as its block, among the first three. A situation told in
// one sentence and asked about in the next, or told on across a dash, names none.
func TestComplementOfAPartAskedAlone(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, lang, q, part, primary, complement, covers string
	}{
		{name: "a sentence of its own", lang: "de",
			q:    "Die Reifendruckwarnung ist während der Fahrt angegangen, darf er weiterfahren? Und der Vormieter hat einen Kindersitz im Kofferraum vergessen, wohin damit?",
			part: "Die Reifendruckwarnung ist während der Fahrt angegangen, darf er weiterfahren?", primary: "lost-and-found",
			complement: "breakdown-assistance", covers: "reifendruckwarn"},
		{name: "a part of one sentence", lang: "en",
			q:    "The tyre went flat on the motorway so she is stuck on the hard shoulder — and what do we bill the previous renter for the cigarette smell?",
			part: "and what do we bill the previous renter for the cigarette smell?", primary: "breakdown-assistance",
			complement: "vehicle-cleaning", covers: "cigarett"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := f.lookup(t, tc.lang, tc.q)
			if res.Primary == nil || res.Primary.DocumentID != tc.primary {
				t.Fatalf("primary %+v", res.Primary)
			}
			cs := res.Relevance.Complements
			if len(cs) != 1 || cs[0].DocumentID != tc.complement || !slices.Contains(cs[0].Covers, tc.covers) ||
				cs[0].Assessment != lookup.AssessmentStrong {
				t.Fatalf("complements %+v", cs)
			}
			if alone := f.lookup(t, tc.lang, tc.part); alone.Primary == nil || alone.Primary.Source != cs[0].Source {
				t.Errorf("the complement's block %s is not the part's own answer %+v", cs[0].Source, alone.Primary)
			}
			if !slices.ContainsFunc(res.EvidenceBlocks[:min(3, len(res.EvidenceBlocks))], func(b lookup.EvidenceBlock) bool { return b.Source == cs[0].Source }) {
				t.Errorf("the complement's block %s is not among the first three", cs[0].Source)
			}
		})
	}
	for _, single := range []struct{ lang, q string }{
		{"de", "Bei uns ist ein Auto seit gestern Abend nicht zurückgegeben worden. Ab wann melden wir es der Polizei?"},
		{"en", "A customer was rear-ended at the lights. What photos does she have to take?"},
		{"en", "The car won't unlock — the customer is standing next to it with the app open, what now?"},
		{"de", "Das Auto geht nicht auf – der Kunde steht daneben und die App zeigt einen Fehler, was nun?"},
	} {
		if cs := f.lookup(t, single.lang, single.q).Relevance.Complements; len(cs) > 0 {
			t.Errorf("%q: a single-need question names complements %+v", single.q, cs)
		}
	}
}

// A complement's block is the section of its procedure that holds its part, not its scope, which
// lists the situations the procedure covers: the scope follows three other sections in the
// complement's search as it does in fusion.
func TestComplementsBlockIsNotItsScope(t *testing.T) {
	f := newFixture(t)
	q := "Car broke down on the motorway with a flat battery, what now? Also the customer found someone's phone on the back seat."
	res := f.lookup(t, "en", q)
	cs := res.Relevance.Complements
	if len(cs) != 1 || cs[0].DocumentID != "lost-and-found" {
		t.Fatalf("complements %+v", cs)
	}
	if strings.HasSuffix(cs[0].Source, "#1-scope") {
		t.Errorf("the complement's block is its scope %s", cs[0].Source)
	}
}
