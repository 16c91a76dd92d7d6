package retrieval_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// confirmed is a lookup with procedure set, as an agent sends it after a clarification.
func (f *fixture) confirmed(t *testing.T, lang, q, procedure string) lookup.Result {
	t.Helper()
	res, err := f.svc.Lookup(context.Background(), lookup.LookupRequest{Question: q, Language: lang, TopK: 5, Procedure: procedure,
		Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}, CorrelationID: "corr-1"})
	if err != nil {
		t.Fatalf("lookup with procedure %s: %v", procedure, err)
	}
	return res
}

// A question no procedure answers gets neither alternatives nor a clarification, in either
// language: an agent is never prompted to ask the operator a question no procedure can answer.
func TestUncoveredQuestionOffersNothingToChoose(t *testing.T) {
	f := newFixture(t)
	for _, q := range []struct{ lang, q string }{
		{"en", "What is the wifi password of the office?"},
		{"en", "weather tomorrow in Berlin"},
		{"en", "how much is a train ticket"},
		{"de", "Wie ist das WLAN-Passwort im Büro?"},
		{"de", "Wetter morgen in Berlin"},
	} {
		offersNothing(t, q.q, f.lookup(t, q.lang, q.q))
	}
}

// offersNothing checks the answer to question q, which no procedure answers: not grounded, no
// alternatives, no clarification.
func offersNothing(t *testing.T, q string, res lookup.Result) {
	t.Helper()
	if res.EvidenceState == port.StateGrounded {
		t.Errorf("%q: grounded (%s)", q, res.Relevance.Reason)
	}
	if len(res.Relevance.Alternatives) > 0 || res.Relevance.Clarification != nil {
		t.Errorf("%q: alternatives %v, clarification %+v", q, res.Relevance.Alternatives, res.Relevance.Clarification)
	}
}

// A question naming a topic no procedure covers is offered nothing to choose even when its
// lexical evidence is too weak to ground but strong enough to count as covered: the topic's term
// is told before the points are, so that a question about a trailer or the office wifi is not
// answered with "Is this about …?". Each question here would be covered but for its topic.
func TestUncoveredTopicIsToldOnWeakEvidence(t *testing.T) {
	f := newFixture(t)
	for _, q := range []struct{ lang, q string }{
		{"en", "customer wants to hook a trailer to the car, does the booking allow a tow bar"},
		{"en", "my laptop lost the wifi in the control room, who do I call"},
		{"en", "the corporate account of a company wants all trips of their drivers on one invoice"},
		{"de", "Kunde will einen Anhänger ziehen, hat das Auto eine Anhängerkupplung und was kostet das"},
		{"de", "Das Firmenkonto will die Bußgelder aller Fahrer auf einer Rechnung"},
		{"de", "Laptop in der Leitstelle kommt nicht ins WLAN, der Kunde wartet am Telefon"},
	} {
		res, sig := f.lookupSignals(t, q.lang, q.q)
		if sig.Uncovered.Term == "" {
			t.Errorf("%q: %s, no uncovered topic told (%s)", q.q, res.EvidenceState, res.Relevance.Reason)
			continue
		}
		offersNothing(t, q.q, res)
		// The case this test is about: without the topic, the question would be covered.
		topicless := sig
		topicless.Uncovered = judge.Uncovered{}
		if !retrieval.LexicallyCovered(topicless, q.lang, retrieval.CoveredShare, retrieval.HalfHeldShare) {
			t.Errorf("%q: not covered even without its topic (%s); choose a question closer to a procedure", q.q, res.Relevance.Reason)
		}
	}
}

// The whole clarifying turn on the demo provider: a question the procedures cover but whose
// evidence does not decide gets a clarification in its own language whose options are the primary
// block's procedure and each alternative; the follow-up that confirms an option considers only
// that procedure, is judged on the confirmed basis and grounded, and its trace records the
// procedure; the first trace records the options offered.
func TestClarifyingTurn(t *testing.T) {
	for _, c := range []struct {
		lang, q, want, lead string
	}{
		{"en", "car just clicks when he tries to start it, pretty sure its the battery. who sorts that out", "breakdown-assistance", "Is this about "},
		{"de", "Blut auf der Rückbank, sieht bisschen nach Schlägerei aus", "vehicle-cleaning", "Geht es um "},
	} {
		f := newFixture(t)
		res := f.lookup(t, c.lang, c.q)
		cl := res.Relevance.Clarification
		if res.EvidenceState != port.StateInsufficient || cl == nil {
			t.Fatalf("%q: %s, clarification %+v (%s)", c.q, res.EvidenceState, cl, res.Relevance.Reason)
		}
		if !strings.HasPrefix(cl.Question, c.lead) || !strings.HasSuffix(cl.Question, "?") {
			t.Errorf("%q: clarification %q", c.q, cl.Question)
		}
		ids := []string{res.Primary.DocumentID}
		for _, a := range res.Relevance.Alternatives {
			ids = append(ids, a.DocumentID)
		}
		var offered []string
		for _, o := range cl.Options {
			offered = append(offered, o.Procedure)
			if o.Title == "" || !strings.HasPrefix(o.Situation, o.Title) || !strings.Contains(cl.Question, o.Title[1:]) {
				t.Errorf("%q: option %+v in %q", c.q, o, cl.Question)
			}
		}
		if !slices.Equal(offered, ids) || !slices.Contains(offered, c.want) {
			t.Fatalf("%q: options %v, want the primary and the alternatives %v, among them %s", c.q, offered, ids, c.want)
		}
		if tr := f.trace(t, res.InvocationID); !slices.Equal(tr.RetrievalDetails.Clarification, offered) {
			t.Errorf("trace records options %v, want %v", tr.RetrievalDetails.Clarification, offered)
		}

		conf := f.confirmed(t, c.lang, c.q, c.want)
		if conf.EvidenceState != port.StateGrounded || conf.Relevance.Basis != lookup.BasisConfirmed || conf.Procedure != c.want {
			t.Fatalf("%q confirmed %s: %s, basis %s (%s)", c.q, c.want, conf.EvidenceState, conf.Relevance.Basis, conf.Relevance.Reason)
		}
		for _, b := range conf.EvidenceBlocks {
			if b.DocumentID != c.want {
				t.Errorf("%q confirmed %s: a block of %s", c.q, c.want, b.DocumentID)
			}
		}
		if conf.Relevance.Clarification != nil || len(conf.Relevance.Alternatives) > 0 {
			t.Errorf("%q confirmed: asks again: %+v", c.q, conf.Relevance)
		}
		last := f.p.calls()[len(f.p.calls())-1]
		if last.Procedure != c.want || last.Category == "" {
			t.Errorf("the provider was asked %+v, want the procedure %s and its category", last, c.want)
		}
		if tr := f.trace(t, conf.InvocationID); tr.RetrievalDetails.Procedure != c.want {
			t.Errorf("trace records procedure %q", tr.RetrievalDetails.Procedure)
		}
	}
}

// A confirmed procedure that does not hold the question leaves it insufficient: confirming a
// situation never grounds a question no procedure answers, and a confirmed answer offers no
// further clarification.
func TestConfirmedProcedureDoesNotGroundWhatItDoesNotCover(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ lang, q, proc string }{
		{"en", "What is the wifi password of the office?", "access-failure"},
		{"en", "weather tomorrow in Berlin", "fines-and-parking"},
		{"en", "There is a deep scratch and a dent on the rear door, how do I report the damage?", "ev-charging"},
		{"de", "Wetter morgen in Berlin", "damage-procedure"},
	} {
		res := f.confirmed(t, c.lang, c.q, c.proc)
		if res.EvidenceState == port.StateGrounded || res.Relevance.Basis != lookup.BasisConfirmed || res.Relevance.Clarification != nil {
			t.Errorf("%q confirmed %s: %s, basis %s, clarification %+v (%s)", c.q, c.proc, res.EvidenceState,
				res.Relevance.Basis, res.Relevance.Clarification, res.Relevance.Reason)
		}
	}
}

// An unknown procedure id, or one not in the question's language's corpus, is refused as
// ErrUnknownProcedure by lookup and ask alike.
func TestUnknownProcedureIsRefused(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.Lookup(context.Background(), lookup.LookupRequest{Question: damageQuestion, Language: "en", TopK: 5, Procedure: "no-such-procedure"})
	if !errors.Is(err, domain.ErrUnknownProcedure) {
		t.Errorf("lookup: %v", err)
	}
	_, err = f.svc.Ask(context.Background(), lookup.AskRequest{Question: damageQuestion, Language: "en", Procedure: "no-such-procedure"})
	if !errors.Is(err, domain.ErrUnknownProcedure) {
		t.Errorf("ask: %v", err)
	}
}

// An ask carries the lookup's relevance, so the clarifying turn runs from /ask alone, and a
// confirmed ask cites only its procedure.
func TestAskRunsTheClarifyingTurn(t *testing.T) {
	f := newFixture(t)
	q := "car just clicks when he tries to start it, pretty sure its the battery. who sorts that out"
	ans, err := f.svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Relevance == nil || ans.Relevance.Clarification == nil || ans.EvidenceState != port.StateInsufficient {
		t.Fatalf("ask: %s, relevance %+v", ans.EvidenceState, ans.Relevance)
	}
	conf, err := f.svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: "en", Procedure: "breakdown-assistance"})
	if err != nil {
		t.Fatal(err)
	}
	if conf.EvidenceState != port.StateGrounded || conf.Relevance.Basis != lookup.BasisConfirmed || len(conf.Sources) == 0 {
		t.Fatalf("confirmed ask: %s, %+v", conf.EvidenceState, conf.Relevance)
	}
	for _, s := range conf.Sources {
		if s.DocumentID != "breakdown-assistance" {
			t.Errorf("confirmed ask cites %s", s.DocumentID)
		}
	}
}

// The clarifying turn is counted beside the evidence states: a clarification offered, a
// follow-up that confirmed a procedure, and whether it came back grounded.
func TestClarifyingTurnIsCounted(t *testing.T) {
	m := &counter{n: map[string]int{}, vals: map[string]float64{}}
	f := newFixture(t, func(o *retrieval.Options) { o.Metrics = m })
	q := "car just clicks when he tries to start it, pretty sure its the battery. who sorts that out"
	f.lookup(t, "en", q)
	f.confirmed(t, "en", q, "breakdown-assistance")
	f.confirmed(t, "en", "weather tomorrow in Berlin", "breakdown-assistance")
	f.lookup(t, "en", "weather tomorrow in Berlin")
	cm := retrieval.ClarifyingMetrics
	if m.vals[cm.Offered] != 1 || m.vals[cm.Confirmed] != 2 || m.vals[cm.ConfirmedGrounded] != 1 {
		t.Errorf("clarifying turn counted %v", m.vals)
	}
}

// On a semantic provider a confirmed follow-up keeps only the confirmed procedure's candidates
// (a platform filtering by category returns others too), is grounded from the supported cosine
// on, stays insufficient below it, grounds nothing while the provider is down, and fills its
// blocks with the procedure's own sections the platform did not return.
func TestConfirmedOnTheSemanticPath(t *testing.T) {
	q := "car just clicks when he tries to start it, pretty sure its the battery. who sorts that out"
	scored := func(score float64) map[string][]port.Candidate {
		return map[string][]port.Candidate{"assistance": {
			chunk(t, "ev-charging", 5, score+0.05, ""), // a neighbour the platform ranks first
			chunk(t, "breakdown-assistance", 2, score, ""),
		}}
	}
	for _, c := range []struct {
		name     string
		byFilter map[string][]port.Candidate
		err      error
		grounded bool
		reason   string
	}{
		{name: "at the supported cosine", byFilter: scored(0.74), grounded: true, reason: "the semantic search scores its best section 0.74"},
		{name: "below it", byFilter: scored(0.62), reason: "scores its best section only 0.62"},
		{name: "the provider down", err: port.ErrUnavailable, reason: "the semantic search was not consulted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := &semanticFake{byFilter: c.byFilter, err: c.err}
			svc := retrieval.New(index(t), fake, store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.DiscardHandler))
			res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q, Language: "en", TopK: 5, Procedure: "breakdown-assistance"})
			if err != nil {
				t.Fatal(err)
			}
			if (res.EvidenceState == port.StateGrounded) != c.grounded || res.Relevance.Basis != lookup.BasisConfirmed ||
				!strings.Contains(res.Relevance.Reason, c.reason) {
				t.Fatalf("%s, basis %s (%s)", res.EvidenceState, res.Relevance.Basis, res.Relevance.Reason)
			}
			placed := 0
			for _, b := range res.EvidenceBlocks {
				if b.DocumentID != "breakdown-assistance" {
					t.Errorf("a block of %s", b.DocumentID)
				}
				// A section only the local search of the procedure placed says so, whichever of
				// the procedure's blocks it is.
				if b.Score.Kind == "bm25" {
					placed++
					if !slices.Contains(b.HitReasons, "l0:confirmed-procedure") {
						t.Errorf("block %s placed by the local search has hit reasons %v", b.Section, b.HitReasons)
					}
				}
			}
			if placed == 0 {
				t.Errorf("no block placed by the local search of the procedure's sections")
			}
			if len(res.EvidenceBlocks) < 3 {
				t.Errorf("%d blocks: the procedure's own sections fill the blocks", len(res.EvidenceBlocks))
			}
			if calls := fake.queries(); len(calls) != 1 || calls[0].Category != "assistance" || calls[0].Procedure != "breakdown-assistance" {
				t.Errorf("the platform was asked %+v", calls)
			}
		})
	}
}

// A semantic ask shares its analysed question with the lookup it runs beside the answer call
// (run with -race in CI): confirmed or not, the ask carries the relevance the same lookup gives.
func TestSemanticAskCarriesItsLookupsRelevance(t *testing.T) {
	q := "car just clicks when he tries to start it, pretty sure its the battery. who sorts that out"
	fake := &semanticFake{byFilter: map[string][]port.Candidate{
		"assistance": {chunk(t, "breakdown-assistance", 2, 0.79, ""), chunk(t, "ev-charging", 5, 0.70, "")},
		"":           {chunk(t, "breakdown-assistance", 2, 0.79, ""), chunk(t, "ev-charging", 5, 0.70, "")},
	}}
	fake.answer = port.GroundedAnswer{Answer: "Roadside assistance.", Sources: []port.AnswerSource{{DocumentID: "breakdown-assistance"}}}
	svc := retrieval.New(index(t), fake, store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.DiscardHandler))
	for _, procedure := range []string{"", "breakdown-assistance"} {
		ans, err := svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: "en", Procedure: procedure})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q, Language: "en", TopK: 5, Procedure: procedure})
		if err != nil {
			t.Fatal(err)
		}
		if ans.Relevance == nil || ans.Relevance.Basis != res.Relevance.Basis || ans.Relevance.Assessment != res.Relevance.Assessment ||
			ans.Relevance.Reason != res.Relevance.Reason {
			t.Errorf("procedure %q: the ask carries %+v, the lookup %+v", procedure, ans.Relevance, res.Relevance)
		}
	}
}
