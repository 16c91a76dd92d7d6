package lexical

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func TestBM25MatchesLuceneFormula(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{
		testutil.Doc("a-doc", "one", "battery battery low", "window"),
		testutil.Doc("b-doc", "two", "battery tyre tyre tyre"),
	}, &synonyms.Set{})
	// Passage lengths include the indexed title and heading, so they come from the index.
	p0 := l.Passages[0]
	// "batteri" is in two of three passages, which the idf counts as MinIDFPassages (a corpus of
	// that many or more counts its own).
	n, N := 2.0, float64(MinIDFPassages)
	idf := math.Log(1 + (N-n+0.5)/(n+0.5))
	if got := l.IDF("batteri"); math.Abs(got-idf) > 1e-12 {
		t.Fatalf("idf = %v, want %v", got, idf)
	}
	norm := K1 * (1 - B + B*float64(p0.Len)/l.post.avgLen)
	want := idf * 2 / (2 + norm)
	hits := l.Search([]string{"batteri"}, "", 10)
	if len(hits) != 2 || hits[0].Passage != 0 || math.Abs(hits[0].Score-want) > 1e-12 {
		t.Fatalf("hits = %+v, want passage 0 scoring %v", hits, want)
	}
}

func TestIDFIsNeverNegative(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{testutil.Doc("a-doc", "one", "battery"), testutil.Doc("b-doc", "one", "battery")}, &synonyms.Set{})
	if got := l.IDF("batteri"); got <= 0 {
		t.Fatalf("idf of a term in every passage = %v, want > 0", got)
	}
	if l.IDF("unknown") <= l.IDF("batteri") {
		t.Fatal("an unseen term must weigh more than a common one")
	}
}

func TestTiesBreakByDocumentThenSection(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{
		testutil.Doc("a-doc", "one", "tyre", "tyre"),
		testutil.Doc("b-doc", "one", "tyre"),
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
	l := buildLang("en", []*knowledge.Document{testutil.Doc("a-doc", "one", "tyre"), testutil.Doc("b-doc", "two", "tyre wheel")}, &synonyms.Set{})
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
		for p := range l.Passages {
			d, s := l.Doc(p)
			if got, ok := l.PassageOf(d.ID, s.Anchor); !ok || got != p {
				t.Fatalf("%s: PassageOf(%s, %s) = %d, %v, want passage %d", lang, d.ID, s.Anchor, got, ok, p)
			}
		}
		d, s := l.Doc(0)
		for _, miss := range [][2]string{{d.ID, "no-such-anchor"}, {"no-such-document", s.Anchor}, {"", ""}} {
			if p, ok := l.PassageOf(miss[0], miss[1]); ok {
				t.Errorf("%s: PassageOf(%q, %q) found passage %d", lang, miss[0], miss[1], p)
			}
		}
	}
	if ix.Lang("fr") != nil {
		t.Fatal("unknown language has an index")
	}
}

// A passage's terms are those of its title, heading, content and keywords joined by line
// breaks, as the index read them before it analysed the content sentence by sentence, and each
// sentence's stretch of them is that sentence's terms: the analysis goes token by token.
func TestPassageTermsAreItsTextsTerms(t *testing.T) {
	ix := embedded(t)
	odd := []string{
		"Call ext. 4420, e.g. the desk. Then wait 2.5 h.\nNr. 5: Kfz-Schein u. Fahrzeug-Papiere!Next",
		"Ladesäule. Straße\u00a0frei. ÄÖÜ. ..\n\n. a.b.c. z.B. 10.000 EUR.",
		"",
	}
	checked := 0
	for _, lang := range knowledge.Languages {
		l := ix.Lang(lang)
		for _, d := range l.Docs {
			title, meta := l.Text.Terms(d.Title), l.Text.Terms(strings.Join(d.Keywords, "\n"))
			sections := slices.Clone(d.Sections)
			for _, text := range odd {
				sections = append(sections, knowledge.Section{Heading: "Odd. Heading", Content: text})
			}
			for _, s := range sections {
				got, texts, bounds := passageTerms(l.Text, title, s, meta)
				want := l.Text.Terms(d.Title + "\n" + s.Heading + "\n" + s.Content + "\n" + strings.Join(d.Keywords, "\n"))
				if !slices.Equal(got, want) {
					t.Fatalf("%s %s %q: terms\n%q, want\n%q", lang, d.ID, s.Heading, got, want)
				}
				if !slices.Equal(texts, textproc.Sentences(s.Content)) {
					t.Fatalf("%s %s %q: sentences %q, want %q", lang, d.ID, s.Heading, texts, textproc.Sentences(s.Content))
				}
				if len(bounds) != len(texts)+1 {
					t.Fatalf("%s %s %q: %d bounds for %d sentences", lang, d.ID, s.Heading, len(bounds), len(texts))
				}
				for i, text := range texts {
					if w := l.Text.Terms(text); !slices.Equal(got[bounds[i]:bounds[i+1]], w) {
						t.Fatalf("%s %s sentence %q: terms %q, want %q", lang, d.ID, text, got[bounds[i]:bounds[i+1]], w)
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d passages checked", checked)
}

// The phrase index's shapeOf, docOf, textID and titleWeight and PhraseString, which L0 reads for
// every phrase a question touches, say what Phrase and the title's words say, for every phrase of the embedded corpus and
// for a keyword longer than the shape's word count holds; keywords and entities of the same text
// share a text id, and no two texts do.
func TestPhraseShapeIsPhrase(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	long := make([]string, shapeMaxWords+7)
	for i := range long {
		long[i] = "w" + strings.Repeat(string(rune('a'+i%26)), 1+i/26)
	}
	d := testutil.Doc("long-doc", "one", "battery")
	d.Keywords = []string{"flat battery", strings.Join(long, " ")}
	d.Entities = []string{"key card"}
	// A second document shares a keyword's text, and names as an entity what the first holds
	// as a keyword.
	d2 := testutil.Doc("other-doc", "two", "battery")
	d2.Keywords = []string{"key card", "flat battery"}
	d2.Entities = []string{"flat battery"}
	langs := []*Lang{Build(c).Lang("en"), Build(c).Lang("de"), buildLang("en", []*knowledge.Document{d, d2}, &synonyms.Set{})}
	sawLong, sawKinds, sawShared := false, map[int]bool{}, false
	for _, l := range langs {
		idOf := map[string]uint32{}
		for p := range uint32(l.PhraseIndex().Len()) {
			doc, kind, i, words := l.phr.Phrase(p)
			gotKind, gotWords := l.phr.shapeOf(p)
			if gotKind != kind || gotWords != len(words) || l.phr.docOf(p) != doc {
				t.Fatalf("%s phrase %d: shape %d, %d words, document %d; Phrase says %d, %d, %d", l.Language, p,
					gotKind, gotWords, l.phr.docOf(p), kind, len(words), doc)
			}
			want := l.Docs[doc].Title
			switch kind {
			case PhraseCategory:
				want = l.Docs[doc].Category
			case PhraseKeyword:
				want = l.Docs[doc].Keywords[i]
			case PhraseEntity:
				want = l.Docs[doc].Entities[i]
			}
			if k, s := l.PhraseString(p); k != kind || s != want {
				t.Fatalf("%s phrase %d: PhraseString %d %q, want %d %q", l.Language, p, k, s, kind, want)
			}
			id := l.phr.textID(p)
			_, text := l.PhraseString(id)
			if text != want {
				t.Fatalf("%s phrase %d: text %q (id %d), want %q", l.Language, p, text, id, want)
			}
			if kind == PhraseTitle || kind == PhraseCategory {
				if id != p {
					t.Fatalf("%s phrase %d: a title's or category's text id is %d, not its own", l.Language, p, id)
				}
				sawKinds[kind] = true
				continue // the shared text ids are the keywords' and entities'
			}
			if seen, ok := idOf[text]; ok {
				if seen != id {
					t.Fatalf("%s: %q has text ids %d and %d", l.Language, text, seen, id)
				}
				sawShared = true
			}
			idOf[text] = id
			sawLong = sawLong || len(words) > shapeMaxWords
			sawKinds[kind] = true
		}
		ids := map[uint32]bool{}
		for _, id := range idOf {
			if ids[id] {
				t.Fatalf("%s: two texts share text id %d", l.Language, id)
			}
			ids[id] = true
		}
		for doc := range l.Docs {
			want := 0.0
			for _, t := range l.Front(doc).Title() {
				want += l.post.IDF(t)
			}
			if got := l.phr.titleWeight(doc); got != want {
				t.Fatalf("%s document %d: titleWeight %v, want %v", l.Language, doc, got, want)
			}
		}
	}
	if !sawLong || len(sawKinds) != 4 || !sawShared {
		t.Fatalf("the test saw no phrase of more than %d words (%v), not every kind (%v) or no shared text (%v)",
			shapeMaxWords, sawLong, sawKinds, sawShared)
	}
}

// Domain names a document's category without surrounding space, one id per such name.
func TestDomainIsTrimmedCategory(t *testing.T) {
	l := buildLang("en", []*knowledge.Document{testutil.Doc("a-doc", "one", "x"), testutil.Doc("b-doc", " one ", "x"), testutil.Doc("c-doc", "two", "x"),
		testutil.Doc("d-doc", "", "x")}, &synonyms.Set{})
	a, an := l.front.Domain(0)
	b, bn := l.front.Domain(1)
	c, cn := l.front.Domain(2)
	_, dn := l.front.Domain(3)
	if a != b || an != "one" || bn != "one" || c == a || cn != "two" || dn != "" {
		t.Fatalf("domains: %d %q, %d %q, %d %q, %q", a, an, b, bn, c, cn, dn)
	}
}

// TestIDFCountsTheCorpusFromMinIDFPassages: a corpus of MinIDFPassages passages or more counts
// its own, so the floor never changes a corpus of that size (the embedded one has 64 a language).
func TestIDFCountsTheCorpusFromMinIDFPassages(t *testing.T) {
	sections := make([]string, MinIDFPassages+6)
	for i := range sections {
		sections[i] = "window"
	}
	sections[0] = "battery"
	l := buildLang("en", []*knowledge.Document{testutil.Doc("a-doc", "one", sections...)}, &synonyms.Set{})
	N := float64(len(sections))
	if got, want := l.IDF("batteri"), math.Log(1+(N-1+0.5)/1.5); math.Abs(got-want) > 1e-12 {
		t.Fatalf("idf = %v, want %v over the corpus's own %v passages", got, want, N)
	}
}
