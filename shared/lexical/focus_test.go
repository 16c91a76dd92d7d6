package lexical

import (
	"slices"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

func focusIndex(t *testing.T) *Lang { return embedded(t).Lang("en") }

// embedded builds a fresh index of the embedded corpus.
func embedded(tb testing.TB) *Index {
	tb.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		tb.Fatal(err)
	}
	return Build(c)
}

func passage(t *testing.T, l *Lang, doc, anchor string) int {
	t.Helper()
	p, ok := l.PassageOf(doc, anchor)
	if !ok {
		t.Fatalf("no passage %s#%s", doc, anchor)
	}
	return p
}

// Of two passages BM25 scores alike, the one that states the question's words in one sentence
// ("a stone chip larger than 2 cm" ... "blocked for rental") comes first, ahead of one that
// holds them in separate sentences.
func TestFocusPrefersTheSentenceThatHoldsTheQuestion(t *testing.T) {
	l := focusIndex(t)
	repair := passage(t, l, "damage-procedure", "5-repair-and-follow-up")
	immediate := passage(t, l, "damage-procedure", "2-immediate-actions")
	q := l.Analyzer.QuestionTerms("stone chip in the windscreen, is the car blocked for rental?")
	hits := []Hit{{Passage: repair, Score: 1}, {Passage: immediate, Score: 1}}
	l.Focus(hits, q, nil, 0)
	if hits[0].Passage != immediate {
		t.Fatalf("order %+v: the immediate actions, whose one sentence holds the question, should lead", hits)
	}
	if hits[0].Score <= hits[1].Score || hits[1].Score < 1 || hits[0].Score > 1+FocusWeight {
		t.Errorf("scores %+v: each grows by at most FocusWeight, the focused one more", hits)
	}
	// A query none of whose terms the corpus knows changes nothing.
	hits = []Hit{{Passage: repair, Score: 1}, {Passage: immediate, Score: 1}}
	l.Focus(hits, []string{"zzqx"}, nil, 0)
	if hits[0].Passage != repair || hits[0].Score != 1 || hits[1].Score != 1 {
		t.Errorf("unknown terms moved the hits: %+v", hits)
	}
}

// A passage whose sentence states a fact of the kind asked ("every 14 days" for "how often"),
// and shares a word with the question, comes before one that only shares the words.
func TestFocusPrefersTheKindOfFactAsked(t *testing.T) {
	l := focusIndex(t)
	routine := passage(t, l, "vehicle-cleaning", "2-routine-cleaning-standard")
	dirty := passage(t, l, "vehicle-cleaning", "3-customer-reports-a-dirty-vehicle")
	question := "how often is a car cleaned"
	q := l.Analyzer.QuestionTerms(question)
	kinds := QuestionKinds(question)
	if kinds&AskFrequency == 0 {
		t.Fatalf("kinds %b: the question asks how often", kinds)
	}
	ratio := func(kinds AnswerKinds) (float64, bool) {
		hits := []Hit{{Passage: dirty, Score: 1}, {Passage: routine, Score: 1}}
		l.Focus(hits, q, nil, kinds)
		if hits[0].Passage == routine {
			return hits[0].Score / hits[1].Score, true
		}
		return hits[1].Score / hits[0].Score, false
	}
	without, _ := ratio(0)
	with, first := ratio(kinds)
	if !first || with <= without {
		t.Errorf("routine standard first %v, its lead %.3f with the kind asked, %.3f without: the kind should add to it", first, with, without)
	}
}

// A passage's sentences are analysed once and kept; equal scores keep their order.
func TestFocusKeepsSentencesAndOrder(t *testing.T) {
	l := focusIndex(t)
	a := l.sentencesOf(3)
	if b := l.sentencesOf(3); len(a) == 0 || &a[0] != &b[0] {
		t.Fatal("the sentences of a passage are analysed again")
	}
	if n := l.sentencesKept.Load(); n != 1 {
		t.Errorf("%d passages kept, want 1", n)
	}
	for i := range a {
		seen := map[Term]bool{}
		for _, x := range a[i].terms {
			if seen[x] {
				t.Fatalf("a sentence holds a term twice: %v", a[i].terms)
			}
			seen[x] = true
		}
	}
	// A kind is judged once per sentence and remembered with its answer.
	var s sentence
	s.text = "The technician arrives within 45 minutes."
	if !s.states(AskDeadline) || s.states(AskContact) {
		t.Fatal("a time limit is a deadline and no contact")
	}
	if v := s.kinds.Load(); AnswerKinds(v) != AskDeadline|AskContact || AnswerKinds(v>>8) != AskDeadline {
		t.Errorf("kinds judged %b, stated %b", AnswerKinds(v), AnswerKinds(v>>8))
	}
	hits := []Hit{{Passage: 1, Score: 2}, {Passage: 2, Score: 2}}
	l.Focus(hits, []string{"zzqx"}, nil, 0)
	if hits[0].Passage != 1 {
		t.Errorf("equal scores swapped: %+v", hits)
	}
}

// BenchmarkSentencesOf measures what Focus pays the first time a passage is returned: analysing
// its sentences (German, the embedded corpus's passages in turn).
func BenchmarkSentencesOf(b *testing.B) {
	l := embedded(b).Lang("de")
	l.sentencesOf(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := i % len(l.Passages)
		l.sentences[p].Store(nil)
		l.sentencesOf(p)
	}
}

// The query table finds every term it took, with its weight, refuses a term twice and stops
// taking terms at three quarters full; terms it lacks weigh 0.
func TestQueryTable(t *testing.T) {
	var q queryTable
	for i := range queryTableSize {
		term := Term(i * 977)
		took := q.add(term, float64(i+1))
		if want := i < queryTableSize*3/4; took != want {
			t.Fatalf("term %d: took %v, want %v", i, took, want)
		}
		if took && q.add(term, 5) {
			t.Fatalf("term %d taken twice", i)
		}
	}
	for i := range queryTableSize * 3 / 4 {
		if w := q.get(Term(i * 977)); w != float64(i+1) || !q.may(Term(i*977)) {
			t.Fatalf("term %d weighs %v, want %v (may: %v)", i, w, i+1, q.may(Term(i*977)))
		}
	}
	if w := q.get(Term(1)); w != 0 {
		t.Errorf("a term never added weighs %v", w)
	}
	// The filter's bits are far fewer than the terms it could refuse: it refuses most.
	refused := 0
	for i := range 1000 {
		if !q.may(Term(i*977 + 1)) {
			refused++
		}
	}
	if refused == 0 {
		t.Error("the filter refuses no term")
	}
	var empty queryTable
	if empty.may(Term(5)) {
		t.Error("an empty table may hold a term")
	}
}

// BenchmarkFocus measures Focus on the best 20 hits of a German question's search on the
// embedded corpus, the sentences analysed already.
func BenchmarkFocus(b *testing.B) {
	l := embedded(b).Lang("de")
	q := l.text.QuestionTerms("Akku unter 10 Prozent, Kunde steht an der Ladesäule und das Ladekabel steckt fest")
	hits := l.Search(q, "", 20)
	if len(hits) < 10 {
		b.Fatalf("%d hits", len(hits))
	}
	work := slices.Clone(hits)
	l.Focus(work, q, nil, AskDeadline)
	b.ReportAllocs()
	for b.Loop() {
		copy(work, hits)
		l.Focus(work, q, nil, AskDeadline)
	}
}
