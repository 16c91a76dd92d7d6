package lexical

import (
	"math"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func doc(id, category string, sections ...string) *knowledge.Document {
	d := &knowledge.Document{ID: id, Title: "T", Language: "en", Category: category, Path: "procedures/en/" + id + ".md"}
	for i, s := range sections {
		d.Sections = append(d.Sections, knowledge.Section{Number: i + 1, Heading: "H", Anchor: knowledge.Anchor("H" + string(rune('a'+i))), Content: s})
	}
	return d
}

func TestBM25MatchesLuceneFormula(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{
		doc("a-doc", "one", "battery battery low", "window"),
		doc("b-doc", "two", "battery tyre tyre tyre"),
	}, &synonyms.Set{})
	// Passage lengths include the indexed title and heading, so they come from the index.
	p0 := l.Passages[0]
	n, N := 2.0, 3.0 // "batteri" is in two of three passages
	idf := math.Log(1 + (N-n+0.5)/(n+0.5))
	if got := l.IDF("batteri"); math.Abs(got-idf) > 1e-12 {
		t.Fatalf("idf = %v, want %v", got, idf)
	}
	norm := K1 * (1 - B + B*float64(p0.Len)/l.avgLen)
	want := idf * 2 / (2 + norm)
	hits := l.Search([]string{"batteri"}, "", 10)
	if len(hits) != 2 || hits[0].Passage != 0 || math.Abs(hits[0].Score-want) > 1e-12 {
		t.Fatalf("hits = %+v, want passage 0 scoring %v", hits, want)
	}
}

func TestIDFIsNeverNegative(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{doc("a-doc", "one", "battery"), doc("b-doc", "one", "battery")}, &synonyms.Set{})
	if got := l.IDF("batteri"); got <= 0 {
		t.Fatalf("idf of a term in every passage = %v, want > 0", got)
	}
	if l.IDF("unknown") <= l.IDF("batteri") {
		t.Fatal("an unseen term must weigh more than a common one")
	}
}

func TestTiesBreakByDocumentThenSection(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{
		doc("a-doc", "one", "tyre", "tyre"),
		doc("b-doc", "one", "tyre"),
	}, &synonyms.Set{})
	hits := l.Search([]string{"tyre"}, "", 10)
	if len(hits) != 3 {
		t.Fatalf("hits = %+v", hits)
	}
	for i, h := range hits {
		if h.Passage != i {
			t.Fatalf("tie order %+v, want passages 0, 1, 2", hits)
		}
		if h.Score != hits[0].Score {
			t.Fatalf("scores differ: %+v", hits)
		}
	}
}

func TestCategoryFilterKeepsCorpusStatistics(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{doc("a-doc", "one", "tyre"), doc("b-doc", "two", "tyre wheel")}, &synonyms.Set{})
	all := l.Search([]string{"tyre"}, "", 10)
	only := l.Search([]string{"tyre"}, "two", 10)
	if len(only) != 1 || only[0].Passage != 1 {
		t.Fatalf("filtered hits %+v", only)
	}
	for _, h := range all {
		if h.Passage == 1 && h.Score != only[0].Score {
			t.Fatal("filtering changed the score")
		}
	}
	if got := l.Search([]string{"tyre"}, "", 0); got != nil {
		t.Fatalf("topK 0 returned %v", got)
	}
}

func words(terms ...string) []textproc.Group {
	out := make([]textproc.Group, 0, len(terms))
	for _, t := range terms {
		out = append(out, textproc.Group{Term: t})
	}
	return out
}

func TestCoverage(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{doc("a-doc", "one", "battery low"), doc("b-doc", "two", "tyre")}, &synonyms.Set{})
	if got := l.Coverage(words("batteri", "low"), 0); got != 1 {
		t.Errorf("full coverage = %v", got)
	}
	if got := l.Coverage(words("batteri", "pari"), 0); got <= 0 || got >= 0.5 {
		t.Errorf("an unknown term must weigh more than half: coverage %v", got)
	}
	if got := l.Coverage(nil, 0); got != 0 {
		t.Errorf("empty query coverage = %v", got)
	}
	// A compound the passage lacks counts by its parts; only half when part of it is unknown.
	full := []textproc.Group{{Term: "batterylow", Parts: []string{"batteri", "low"}, Complete: true}}
	if got := l.Coverage(full, 0); got != 1 {
		t.Errorf("compound of present parts = %v", got)
	}
	half := []textproc.Group{{Term: "batteryxyz", Parts: []string{"batteri"}, Complete: false}}
	if got := l.Coverage(half, 0); got != 0.5 {
		t.Errorf("compound with an unknown part = %v, want 0.5", got)
	}
}

func TestEmbeddedCorpusIndex(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := Build(c)
	for _, lang := range knowledge.Languages {
		l := ix.Lang(lang)
		if l == nil || len(l.Docs) != 11 || len(l.Passages) < 44 {
			t.Fatalf("%s: index not built", lang)
		}
		d, s := l.Doc(0)
		if p, ok := l.PassageOf(d.ID, s.Anchor); !ok || p != 0 {
			t.Fatalf("PassageOf does not find passage 0")
		}
	}
	if ix.Lang("fr") != nil {
		t.Fatal("unknown language has an index")
	}
}
