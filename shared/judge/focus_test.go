package judge

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func focusIndex(t *testing.T) *lexical.Lang { return embedded(t).Lang("en") }

func passage(t *testing.T, l *lexical.Lang, doc, anchor string) int {
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
	hits := []lexical.Hit{{Passage: repair, Score: 1}, {Passage: immediate, Score: 1}}
	Focus(l, hits, q, nil, 0)
	if hits[0].Passage != immediate {
		t.Fatalf("order %+v: the immediate actions, whose one sentence holds the question, should lead", hits)
	}
	if hits[0].Score <= hits[1].Score || hits[1].Score < 1 || hits[0].Score > 1+FocusWeight {
		t.Errorf("scores %+v: each grows by at most FocusWeight, the focused one more", hits)
	}
	// A query none of whose terms the corpus knows changes nothing.
	hits = []lexical.Hit{{Passage: repair, Score: 1}, {Passage: immediate, Score: 1}}
	Focus(l, hits, []string{"zzqx"}, nil, 0)
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
	kinds := textproc.QuestionKinds(question)
	if kinds&textproc.AskFrequency == 0 {
		t.Fatalf("kinds %b: the question asks how often", kinds)
	}
	ratio := func(kinds textproc.AnswerKinds) (float64, bool) {
		hits := []lexical.Hit{{Passage: dirty, Score: 1}, {Passage: routine, Score: 1}}
		Focus(l, hits, q, nil, kinds)
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

// The query table finds every term it took, with its weight, refuses a term twice and stops
// taking terms at three quarters full; terms it lacks weigh 0.
func TestQueryTable(t *testing.T) {
	var q queryTable
	for i := range queryTableSize {
		term := lexical.Term(i * 977)
		took := q.add(term, float64(i+1))
		if want := i < queryTableSize*3/4; took != want {
			t.Fatalf("term %d: took %v, want %v", i, took, want)
		}
		if took && q.add(term, 5) {
			t.Fatalf("term %d taken twice", i)
		}
	}
	for i := range queryTableSize * 3 / 4 {
		if w := q.get(lexical.Term(i * 977)); w != float64(i+1) || !q.may(lexical.Term(i*977)) {
			t.Fatalf("term %d weighs %v, want %v (may: %v)", i, w, i+1, q.may(lexical.Term(i*977)))
		}
	}
	if w := q.get(lexical.Term(1)); w != 0 {
		t.Errorf("a term never added weighs %v", w)
	}
	// The filter's bits are far fewer than the terms it could refuse: it refuses most.
	refused := 0
	for i := range 1000 {
		if !q.may(lexical.Term(i*977 + 1)) {
			refused++
		}
	}
	if refused == 0 {
		t.Error("the filter refuses no term")
	}
	var empty queryTable
	if empty.may(lexical.Term(5)) {
		t.Error("an empty table may hold a term")
	}
}

// BenchmarkFocus measures Focus on the best 20 hits of a German question's search on the
// embedded corpus.
func BenchmarkFocus(b *testing.B) {
	l := embedded(b).Lang("de")
	q := l.Text.QuestionTerms("Akku unter 10 Prozent, Kunde steht an der Ladesäule und das Ladekabel steckt fest")
	hits := l.Search(q, "", 20)
	if len(hits) < 10 {
		b.Fatalf("%d hits", len(hits))
	}
	work := slices.Clone(hits)
	Focus(l, work, q, nil, textproc.AskDeadline)
	b.ReportAllocs()
	for b.Loop() {
		copy(work, hits)
		Focus(l, work, q, nil, textproc.AskDeadline)
	}
}

// focusByText is Focus as its definition reads, computed from the passages' text: each hit's
// score times 1 + FocusWeight × its best sentence's share of the query's weight, times
// 1 + AnswerWeight when a sentence sharing a query term states a fact of a kind asked.
func focusByText(l *lexical.Lang, hits []lexical.Hit, query []string, kinds textproc.AnswerKinds) []float64 {
	w := map[lexical.Term]float64{}
	total := 0.0
	for _, s := range query {
		if t, ok := l.Lookup(s); ok && l.Postings().Known(t) {
			if _, seen := w[t]; !seen && l.Postings().IDF(t) > 0 {
				w[t] = l.Postings().IDF(t)
				total += l.Postings().IDF(t)
			}
		}
	}
	out := make([]float64, len(hits))
	for i, h := range hits {
		_, sec := l.Doc(h.Passage)
		best, answers := 0.0, false
		for _, text := range textproc.Sentences(sec.Content) {
			seen, x := map[lexical.Term]bool{}, 0.0
			for _, word := range l.Text.Terms(text) {
				if t, ok := l.Lookup(word); ok && !seen[t] {
					seen[t] = true
					x += w[t]
				}
			}
			best = max(best, x)
			answers = answers || (x > 0 && textproc.KindsOf(text, kinds) != 0)
		}
		f := 1 + FocusWeight*best/total
		if answers {
			f *= 1 + AnswerWeight
		}
		out[i] = h.Score * f
	}
	return out
}

// Focus scores every hit as its definition over the passage's text says, for passages of any
// number of sentences: one of the embedded procedures gets a section of 75 sentences whose
// 70th alone holds two of the question's words.
func TestFocusScoresAsTheSentencesSay(t *testing.T) {
	procs, syns := testutil.EmbeddedSources(t)
	const file = "en/lost-and-found.md"
	// The procedure's last section becomes a list of 75 short items (its length stays within the
	// corpus's rules).
	text := string(procs[file].Data)
	var long strings.Builder
	long.WriteString(text[:strings.Index(text, "## 6.")])
	long.WriteString("## 6. Long list\n")
	for i := range 75 {
		switch {
		case i == 69:
			long.WriteString("The quokka sits by the wombat.\n")
		case i%2 == 0:
			long.WriteString("Quokka bin.\n")
		default:
			long.WriteString("Bin.\n")
		}
	}
	procs[file] = &fstest.MapFile{Data: []byte(long.String())}
	merged := fstest.MapFS{}
	maps.Copy(merged, procs)
	for name, f := range syns {
		merged[knowledge.SynonymsDir+"/"+name] = f
	}
	c, err := knowledge.Load(merged)
	if err != nil {
		t.Fatal(err)
	}
	l := lexical.Build(c).Lang("en")
	longest := 0
	for p := range l.Passages {
		kinds, _, _, _ := l.SentenceIndex().Passage(p)
		longest = max(longest, len(kinds))
	}
	if longest < 75 {
		t.Fatalf("the longest passage has %d sentences, want at least 75", longest)
	}
	checked := 0
	for _, question := range []string{
		"quokka wombat item",
		"how long until a found phone is handed to the lost property office",
		"who do I call when the key card does not open the car",
		"what does the cleaning fee cost after a dog in the car",
		"battery below 10 percent, customer stuck at the charging station",
	} {
		q := l.Text.QuestionTerms(question)
		kinds := textproc.QuestionKinds(question)
		hits := l.Search(q, "", 20)
		if len(hits) < 2 {
			t.Fatalf("%q: %d hits", question, len(hits))
		}
		want := focusByText(l, hits, q, kinds)
		byPassage := map[int]float64{}
		for i, h := range hits {
			byPassage[h.Passage] = want[i]
		}
		Focus(l, hits, q, nil, kinds)
		for _, h := range hits {
			if w := byPassage[h.Passage]; math.Abs(h.Score-w) > 1e-9*w {
				t.Errorf("%q: passage %d scores %v, want %v", question, h.Passage, h.Score, w)
			}
			checked++
		}
		if question == "quokka wombat item" {
			if _, sec := l.Doc(hits[0].Passage); sec.Heading != "6. Long list" {
				t.Errorf("%q: %q first, want the long list, whose 70th sentence holds both words", question, sec.Heading)
			}
		}
	}
	t.Logf("%d hits checked", checked)
}

// SearchFocused is SearchWeighted followed by Focus, to the bit, with weights and with and
// without a category filter.
func TestSearchFocusedIsSearchThenFocus(t *testing.T) {
	ix := embedded(t)
	checked := 0
	for _, lang := range knowledge.Languages {
		l := ix.Lang(lang)
		for p := range l.Passages {
			d, sec := l.Doc(p)
			question := sec.Heading + " " + textproc.Sentences(sec.Content)[0] + " wie lange, how long"
			q := l.Analyzer.QuestionTerms(question)
			weight := map[string]float64{q[0]: lexical.SynonymWeight, q[len(q)-1]: 0}
			kinds := textproc.QuestionKinds(question)
			for _, category := range []string{"", d.Category} {
				want := l.SearchWeighted(q, weight, category, 10)
				Focus(l, want, q, weight, kinds)
				got := SearchFocused(l, q, weight, category, 10, kinds)
				if !slices.Equal(got, want) {
					t.Fatalf("%s %q in %q: %v, want %v", lang, question, category, got, want)
				}
				checked++
			}
		}
	}
	t.Logf("%d searches checked", checked)
}

// Focus keeps the order of equal scores when no sentence holds a query term.
func TestFocusKeepsEqualScoresInOrder(t *testing.T) {
	l := focusIndex(t)
	hits := []lexical.Hit{{Passage: 1, Score: 2}, {Passage: 2, Score: 2}}
	Focus(l, hits, []string{"zzqx"}, nil, 0)
	if hits[0].Passage != 1 {
		t.Errorf("equal scores swapped: %+v", hits)
	}
}
