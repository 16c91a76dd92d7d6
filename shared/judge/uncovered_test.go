package judge

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func embedded(tb testing.TB) *lexical.Index {
	tb.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		tb.Fatal(err)
	}
	return lexical.Build(c)
}

func TestUncoveredTopic(t *testing.T) {
	procs, syns := testutil.EmbeddedSources(t)
	// A topic one procedure's text does use: the damage procedure names the windscreen, the
	// lost-and-found one never does.
	syns["en/uncovered.txt"] = &fstest.MapFile{Data: []byte("# test topics\nper minute, day rate => pricing\nwindscreen => glazing\nparking permit => parking-permits\n")}
	merged := fstest.MapFS{}
	for name, f := range procs {
		merged[name] = f
	}
	for name, f := range syns {
		merged[knowledge.SynonymsDir+"/"+name] = f
	}
	c, err := knowledge.Load(merged)
	if err != nil {
		t.Fatal(err)
	}
	built := lexical.Build(c)
	restored, _, err := lexical.Load(lexical.Encode(built, c), lexical.LoadOptions{Procs: procs, Syns: syns})
	if err != nil {
		t.Fatal(err)
	}
	for name, ix := range map[string]*lexical.Index{"built": built, "restored from the prebuilt index": restored} {
		l := ix.Lang("en")
		doc := func(id string) int {
			t.Helper()
			i := l.DocIndex(id)
			if i < 0 {
				t.Fatalf("no %s", id)
			}
			return i
		}
		for _, tc := range []struct {
			question, doc string
			want          string // the term reported, "" for none
		}{
			{"how much does a customer pay per minute for a small car", "fines-and-parking", "per minute"},
			// A term of two words matches by its words' stems.
			{"what are the day rates for vans", "fines-and-parking", "day rate"},
			{"who replaces a cracked windscreen", "lost-and-found", "windscreen"},
			// A term that stems like its own topic's name still names the topic.
			{"do we hold parking permits for zone 3", "fines-and-parking", "parking permit"},
			// The procedure uses the term: it may well answer the question.
			{"who replaces a cracked windscreen", "damage-procedure", ""},
			{"the customer paid the fine", "fines-and-parking", ""},
		} {
			u, ok := uncoveredIn(l, tc.question, doc(tc.doc))
			if ok != (tc.want != "") || u.Term != tc.want {
				t.Errorf("%s: %q on %s: %+v %v, want %q", name, tc.question, tc.doc, u, ok, tc.want)
			}
			if ok && (u.Topic == "" || !strings.HasPrefix(u.Source, "synonyms/en/uncovered.txt:")) {
				t.Errorf("%s: %+v lacks its topic or source", name, u)
			}
		}
	}
	// The functions' own load of the embedded index has the embedded rules.
	fn, _, err := lexical.Load(knowledge.EmbeddedIndex(), lexical.LoadOptions{Embedded: true})
	if err != nil {
		t.Fatal(err)
	}
	en := fn.Lang("en")
	q := "how much does a customer pay per minute for a small car"
	if u, ok := uncoveredIn(en, q, en.DocIndex("fines-and-parking")); !ok || u.Topic != "pricing" {
		t.Errorf("embedded load: %+v %v", u, ok)
	}
	// The embedded German rules.
	de := built.Lang("de")
	if u, ok := uncoveredIn(de, "Was kostet die Minute im Kleinwagen?", de.DocIndex("fines-and-parking")); !ok || u.Topic != "pricing" {
		t.Errorf("de: %+v %v", u, ok)
	}
	if u, ok := uncoveredIn(de, "Kunde hat einen Kratzer an der Tür gemeldet", de.DocIndex("damage-procedure")); ok {
		t.Errorf("de, no topic named: %+v", u)
	}
}

// mayHold never says no to a run of stems one of a document's texts holds, so that it only spares
// docStems where docStems would find nothing: every run of one to three stems of every text of
// every embedded procedure, checked against its own document and against every other.
func TestMayHoldNeverDeniesWhatATextHolds(t *testing.T) {
	ix := embedded(t)
	for _, lang := range []string{"en", "de"} {
		l := ix.Lang(lang)
		texts := make([][][]string, len(l.Docs))
		for d := range l.Docs {
			texts[d] = docStems(l, d)
		}
		denied := 0
		for d := range l.Docs {
			for src := range l.Docs {
				for _, text := range texts[src] {
					for i := range text {
						for n := 1; n <= 3 && i+n <= len(text); n++ {
							seq := text[i : i+n]
							if mayHold(l, d, seq) {
								continue
							}
							denied++
							for _, own := range texts[d] {
								if holds(own, seq) {
									t.Fatalf("%s: %s holds %q, but mayHold says no", lang, l.Docs[d].ID, seq)
								}
							}
						}
					}
				}
			}
		}
		if denied == 0 {
			t.Errorf("%s: mayHold never said no: it spares nothing", lang)
		}
	}
}

// uncoveredIn is UncoveredTopic of a question as the lookup analyses it.
func uncoveredIn(l *lexical.Lang, question string, doc int) (Uncovered, bool) {
	var qa textproc.QuestionAnalysis
	l.Analyzer.AnalyseQuestion(&qa, question)
	return UncoveredTopic(l, qa.Tokens, qa.Stems, qa.Words, doc)
}

// BenchmarkUncoveredTopic measures the check of a question that names a topic no procedure
// covers against a procedure that does not use it (the check's common case on a near-domain
// question), and of one that names none.
func BenchmarkUncoveredTopic(b *testing.B) {
	l := embedded(b).Lang("en")
	for name, q := range map[string]string{
		"names": "is there a dress code for the staff who hand over the cars at the station",
		"clean": "the customer scratched the rear door of the car during the trip, what now",
	} {
		var qa textproc.QuestionAnalysis
		l.Analyzer.AnalyseQuestion(&qa, q)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				UncoveredTopic(l, qa.Tokens, qa.Stems, qa.Words, 0)
			}
		})
	}
}

// TestAffixOfFindsEveryStemAtAWordsEnds checks the buckets of the one-word terms' stems against
// the definition: a word starts or ends with one of the stems. The words are the stems
// themselves, each with a prefix and a suffix, cut short, and every word of the corpus.
func TestAffixOfFindsEveryStemAtAWordsEnds(t *testing.T) {
	ix := embedded(t)
	l := ix.Lang("de")
	r := rulesOf(l)
	if len(r.words) == 0 {
		t.Fatal("the German rules have no one-word terms to find in compounds")
	}
	want := func(term string) bool {
		for _, w := range r.words {
			if strings.HasPrefix(term, w.stem) || strings.HasSuffix(term, w.stem) {
				return true
			}
		}
		return false
	}
	var terms []string
	for _, w := range r.words {
		st := w.stem
		terms = append(terms, st, "vor"+st, st+"nach", st[1:], st[:len(st)-1], st[:1], "")
	}
	for d := range l.Docs { // the corpus's words, as stems
		for _, text := range docStems(l, d) {
			terms = append(terms, text...)
		}
	}
	found := 0
	for _, term := range terms {
		got := r.affixOf(term)
		if got != want(term) {
			t.Fatalf("affixOf(%q) = %v, want %v", term, got, !got)
		}
		if got {
			found++
		}
	}
	if found == 0 || found == len(terms) {
		t.Errorf("%d of %d words start or end with a stem: the check tells nothing", found, len(terms))
	}
	// English splits no compounds: no one-word term is looked for in a word.
	if en := rulesOf(ix.Lang("en")); en.affixOf("windscreen") || en.byFirst != nil {
		t.Error("English looks for terms inside words")
	}
}
