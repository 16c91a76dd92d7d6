package lexical

import (
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// leadingOrTop keeps only the matches a caller can read, the leading
// ones (at least half the best weight) and at least the first n, in weight order with ties by
// document id; with fewer matches than n, every one.
func TestLeadingOrTopKeepsTheMatchesCallersRead(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	l := Build(c).Lang("en")
	docs := func(ms []FrontMatch) []int {
		var out []int
		for _, m := range ms {
			out = append(out, m.Doc)
		}
		return out
	}
	weights := func(phrased []FrontMatch, partial map[uint32]float64, n int) []FrontMatch {
		acc := l.front.weights()
		defer acc.Release()
		for d, w := range partial {
			acc.Add(d, w)
		}
		return leadingOrTop(slices.Clone(phrased), acc, n)
	}
	for _, tc := range []struct {
		name    string
		phrased []FrontMatch
		partial map[uint32]float64
		n       int
		want    []int
	}{
		{"fewer than n, far below the best", []FrontMatch{{Doc: 4, Weight: 10}}, map[uint32]float64{2: 1}, 5, []int{4, 2}},
		{"the first n beyond the leading", []FrontMatch{{Doc: 4, Weight: 10}}, map[uint32]float64{1: 1, 2: 3, 3: 2, 5: 0.5}, 3, []int{4, 2, 3}},
		{"every leading one beyond n", []FrontMatch{{Doc: 4, Weight: 10}, {Doc: 6, Weight: 6}}, map[uint32]float64{1: 5, 2: 7}, 1, []int{4, 2, 6, 1}},
		{"ties by document id", nil, map[uint32]float64{7: 1, 3: 1, 5: 1}, 2, []int{3, 5, 7}},
		{"n 0: the leading only", []FrontMatch{{Doc: 4, Weight: 10}}, map[uint32]float64{2: 1}, 0, []int{4}},
	} {
		if got := docs(weights(tc.phrased, tc.partial, tc.n)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: documents %v, want %v", tc.name, got, tc.want)
		}
	}
}

// frontHolds sets exactly the bits Front.Has answers, whichever way it finds each term's
// documents (walked beside the phrased ones, or looked up when they are far more), and leaves a
// query of more than 64 terms to Front.Has.
func TestFrontHoldsIsFrontHas(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	l := Build(c).Lang("de")
	var vocab []Term
	for d := range l.Docs {
		for _, s := range l.Analyzer.Terms(l.Docs[d].Title + " " + strings.Join(l.Docs[d].Keywords, " ")) {
			if tm, ok := l.Lookup(s); ok {
				vocab = append(vocab, tm)
			}
		}
	}
	sc := &FrontScratch{}
	for n := range 20 {
		query := vocab[n*3 : n*3+1+n%7]
		var phrased []int
		for d := range l.Docs {
			if (d+n)%(1+n%3) == 0 {
				phrased = append(phrased, d)
			}
		}
		if n%4 == 3 {
			phrased = []int{n % len(l.Docs)} // the terms' documents far more: looked up
		}
		held := frontHolds(l, query, phrased, sc)
		for i, d := range phrased {
			for q, tm := range query {
				if got, want := held[i]&(1<<q) != 0, l.Front(d).Has(tm); got != want {
					t.Fatalf("document %d, term %d: held %v, Front.Has %v", d, q, got, want)
				}
			}
		}
	}
	// One document against its own title and the commonest front-matter term: their documents
	// are far more than one, so they are looked up.
	common := vocab[0]
	for _, tm := range vocab {
		if len(l.front.docs(tm)) > len(l.front.docs(common)) {
			common = tm
		}
	}
	if len(l.front.docs(common)) <= 8 {
		t.Fatalf("the commonest term is in %d documents' front matter: the look-up is not tried", len(l.front.docs(common)))
	}
	looked := 0
	for d := range l.Docs {
		query := append(slices.Clone(l.Front(d).Title()), common)
		held := frontHolds(l, query, []int{d}, sc)
		for q, tm := range query {
			if got, want := held[0]&(1<<q) != 0, l.Front(d).Has(tm); got != want {
				t.Fatalf("document %d alone, term %d: held %v, Front.Has %v", d, q, got, want)
			} else if got {
				looked++
			}
		}
	}
	if looked == 0 {
		t.Error("no document holds its own title's terms")
	}
	if frontHolds(l, make([]Term, 65), []int{0}, sc) != nil {
		t.Error("a query of 65 terms has bits")
	}
}

// A front-matter match's best section is the one of its document holding the most of the
// question's weight, chosen when it is first asked for and the same when asked again; a match
// of no question term is its document's first section.
func TestAMatchsPassageIsItsBestSection(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	l := Build(c).Lang("en")
	q := l.Analyzer.QuestionWords("windscreen stone chip repaired on site by the glass partner")
	var sc FrontScratch
	defer sc.Reset()
	m := l.MatchFront(q, textproc.Flatten(q), nil, 5, &sc)
	i := slices.IndexFunc(m.Matches, func(m FrontMatch) bool { return l.Docs[m.Doc].ID == "damage-procedure" })
	if i < 0 {
		t.Fatalf("no match of damage-procedure among %d", len(m.Matches))
	}
	p := m.Matches[i].Passage(l)
	if _, sec := l.Doc(p); !strings.HasPrefix(sec.Heading, "5.") {
		t.Errorf("best section %q, want 5. Repair and follow-up", sec.Heading)
	}
	if again := m.Matches[i].Passage(l); again != p {
		t.Errorf("asked again: passage %d, first %d", again, p)
	}
	none := FrontMatch{Doc: m.Matches[i].Doc}
	if lo, _ := l.post.DocPassages(none.Doc); none.Passage(l) != lo {
		t.Errorf("a match of no term: passage %d, want the first, %d", none.Passage(l), lo)
	}
}
