package lexical

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"
	"unsafe"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// embeddedPrebuilt returns the embedded corpus parsed and the bytes of its fresh prebuilt index.
func embeddedPrebuilt(t testing.TB) (*knowledge.Corpus, []byte) {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return c, Encode(Build(c), c)
}

func TestEmbeddedPrebuiltIndexIsFresh(t *testing.T) {
	_, fresh := embeddedPrebuilt(t)
	if !bytes.Equal(fresh, knowledge.EmbeddedIndex()) {
		t.Fatalf("knowledge/index.bin (%d bytes) is not the prebuilt index of the embedded corpus (%d bytes): run `go generate ./knowledge`",
			len(knowledge.EmbeddedIndex()), len(fresh))
	}
}

func TestPrebuiltIndexRoundTrips(t *testing.T) {
	c, b := embeddedPrebuilt(t)
	procs, syns, err := knowledge.EmbeddedSources()
	if err != nil {
		t.Fatal(err)
	}
	ix, restored, err := Load(b, LoadOptions{Procs: procs, Syns: syns})
	if err != nil {
		t.Fatal(err)
	}
	if again := Encode(ix, restored); !bytes.Equal(again, b) {
		t.Fatal("a loaded index encodes differently from the one it was loaded from")
	}
	if restored.Fingerprint() != c.Fingerprint() {
		t.Fatal("the restored corpus has another fingerprint")
	}
	for _, lang := range knowledge.Languages {
		want, got := c.Documents(lang), restored.Documents(lang)
		if len(want) != len(got) {
			t.Fatalf("%s: %d documents restored, want %d", lang, len(got), len(want))
		}
		for i := range want {
			w, g := *want[i], *got[i]
			if g.Raw != nil {
				t.Fatalf("%s: Load kept the Raw bytes of %s", lang, w.ID)
			}
			w.Raw = nil
			// The loader and the prebuilt form may differ in nil against empty lists only.
			for _, l := range []*[]string{&w.Keywords, &w.Entities, &g.Keywords, &g.Entities} {
				if len(*l) == 0 {
					*l = nil
				}
			}
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("%s: document %s restored as %+v, want %+v", lang, w.ID, g, w)
			}
		}
		built, loaded := Build(c).Lang(lang), ix.Lang(lang)
		if !reflect.DeepEqual(built.post.idf, loaded.post.idf) || !reflect.DeepEqual(built.post.docIDF, loaded.post.docIDF) ||
			!reflect.DeepEqual(built.front.frontCats, loaded.front.frontCats) || built.post.unseen != loaded.post.unseen {
			t.Fatalf("%s: statistics differ after loading", lang)
		}
		q := loaded.Analyzer.QuestionTerms("Handy tot, Karre geht nicht auf, customer phone died")
		if !reflect.DeepEqual(built.Search(q, "", 10), loaded.Search(q, "", 10)) {
			t.Fatalf("%s: search differs after loading", lang)
		}
		if g1, g2 := built.Analyzer.QuestionWords("Putzrechnung nach E-Flitzer, Stromtanke kaputt"),
			loaded.Analyzer.QuestionWords("Putzrechnung nach E-Flitzer, Stromtanke kaputt"); !reflect.DeepEqual(g1, g2) {
			t.Fatalf("%s: question analysis differs after loading:\n%+v\n%+v", lang, g1, g2)
		}
	}
	_, corpus, err := Load(b, LoadOptions{Procs: procs, Syns: syns, Raw: true, CorpusOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range knowledge.Languages {
		for i, d := range corpus.Documents(lang) {
			if want := c.Documents(lang)[i]; !bytes.Equal(d.Raw, want.Raw) || d.SHA256 != want.SHA256 {
				t.Fatalf("%s: Load of the corpus alone gives %s other bytes", lang, d.ID)
			}
		}
	}
}

// An embedded load does not check the arrays' offsets, so it must give what a fully checked load gives.
func TestEmbeddedLoadIsTheCheckedLoad(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	procs, syns, err := knowledge.EmbeddedSources()
	if err != nil {
		t.Fatal(err)
	}
	checkedIx, checked, err := Load(knowledge.EmbeddedIndex(), LoadOptions{Procs: procs, Syns: syns, Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, embedded, err := Load(knowledge.EmbeddedIndex(), LoadOptions{Embedded: true, Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	if embedded.Fingerprint() != c.Fingerprint() {
		t.Fatal("the embedded corpus restored names another fingerprint than its files'")
	}
	if !bytes.Equal(Encode(ix, embedded), Encode(checkedIx, checked)) {
		t.Fatal("the embedded load and a checked load of the embedded index differ")
	}
	_, corpus, err := Load(knowledge.EmbeddedIndex(), LoadOptions{Embedded: true, CorpusOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range knowledge.Languages {
		if !reflect.DeepEqual(embedded.Synonyms(lang), checked.Synonyms(lang)) {
			t.Fatalf("%s: the synonyms differ", lang)
		}
		for i, d := range embedded.Documents(lang) {
			if want := c.Documents(lang)[i]; !bytes.Equal(d.Raw, want.Raw) || d.SHA256 != want.SHA256 {
				t.Fatalf("%s: the embedded load gives %s other bytes", lang, d.ID)
			}
			if corpus.Documents(lang)[i].Raw != nil || corpus.Documents(lang)[i].ID != d.ID {
				t.Fatalf("%s: the embedded load of the corpus alone gives %s otherwise", lang, d.ID)
			}
		}
	}
}

func TestPrebuiltIndexIsNeverLoadedForOtherFiles(t *testing.T) {
	_, b := embeddedPrebuilt(t)
	procs, syns := testutil.EmbeddedSources(t)
	if _, _, err := Load(b, LoadOptions{Procs: procs, Syns: syns}); err != nil {
		t.Fatalf("the same files: %v", err)
	}
	for name, change := range map[string]func(procs, syns fstest.MapFS){
		"a procedure edited": func(p, _ fstest.MapFS) {
			f := p["en/damage-procedure.md"]
			f.Data = append(bytes.Clone(f.Data), "\nOne more line.\n"...)
		},
		"a procedure added": func(p, _ fstest.MapFS) {
			p["de/new-procedure.md"] = &fstest.MapFile{Data: p["de/damage-procedure.md"].Data}
		},
		"a procedure removed": func(p, _ fstest.MapFS) { delete(p, "en/lost-and-found.md") },
		"a synonym file edited": func(_, s fstest.MapFS) {
			for name, f := range s {
				f.Data = append(bytes.Clone(f.Data), "\nkarre, auto\n"...)
				s[name] = f
				break
			}
		},
		"no synonym files": func(_, s fstest.MapFS) {
			for name := range s {
				delete(s, name)
			}
		},
	} {
		p, s := testutil.EmbeddedSources(t)
		change(p, s)
		if _, _, err := Load(b, LoadOptions{Procs: p, Syns: s}); !errors.Is(err, knowledge.ErrStale) {
			t.Errorf("%s: err %v, want ErrStale", name, err)
		}
		if _, _, err := Load(b, LoadOptions{Procs: p, Syns: s, CorpusOnly: true}); !errors.Is(err, knowledge.ErrStale) {
			t.Errorf("%s, corpus only: err %v, want ErrStale", name, err)
		}
	}
}

func TestDamagedPrebuiltIndexFailsToLoad(t *testing.T) {
	_, b := embeddedPrebuilt(t)
	procs, syns, _ := knowledge.EmbeddedSources()
	if _, _, err := Load([]byte("not an index"), LoadOptions{Procs: procs, Syns: syns}); !errors.Is(err, ErrPrebuilt) {
		t.Fatalf("garbage: %v", err)
	}
	// Cut anywhere, the bytes are refused, never loaded in part and never a panic.
	for _, n := range []int{len(prebuiltMagic), len(prebuiltMagic) + 3, len(b) / 3, len(b) / 2, len(b) - 100, len(b) - 1} {
		if _, _, err := Load(b[:n], LoadOptions{Procs: procs, Syns: syns}); err == nil {
			t.Errorf("truncated to %d bytes: loaded", n)
		}
	}
	if _, _, err := Load(append(bytes.Clone(b), 0), LoadOptions{Procs: procs, Syns: syns}); !errors.Is(err, ErrPrebuilt) {
		t.Errorf("a trailing byte: %v", err)
	}
}

// FuzzPrebuilt loads damaged prebuilt indexes: whatever the bytes, Load returns an index that
// answers or an error, and never panics.
func FuzzPrebuilt(f *testing.F) {
	c, err := knowledge.Embedded()
	if err != nil {
		f.Fatal(err)
	}
	b := Encode(Build(c), c)
	procs, syns, _ := knowledge.EmbeddedSources()
	f.Add(uint(len(b)/2), byte(0xff), uint(0))
	f.Add(uint(100), byte(1), uint(len(b)))
	f.Fuzz(func(t *testing.T, at uint, x byte, cut uint) {
		d := bytes.Clone(b)
		d[int(at%uint(len(d)))] ^= x
		if cut > 0 {
			d = d[:int(cut%uint(len(d)))]
		}
		ix, _, err := Load(d, LoadOptions{Procs: procs, Syns: syns})
		if err != nil {
			return
		}
		for _, lang := range knowledge.Languages {
			l := ix.Lang(lang)
			var terms []Term
			for _, s := range l.Analyzer.QuestionTerms("customer phone died, Karre springt nicht an") {
				if t, ok := l.Lookup(s); ok {
					terms = append(terms, t)
				}
			}
			// What the judge reads of a passage, its document and its front matter.
			for _, h := range l.Search(l.Analyzer.QuestionTerms("battery low tow truck Akku leer"), "", 5) {
				for _, t := range terms {
					doc := l.Passages[h.Passage].Doc
					l.Postings().PassageHas(h.Passage, t)
					l.Postings().DocHas(doc, t)
					l.FrontMatter().Has(doc, t)
				}
			}
		}
	})
}

// A static load gives what a copying load gives, with its strings and integer arrays inside the
// loaded bytes; a copying load keeps none there (so that a mapped file may be unmapped after it).
func TestStaticLoadRefersIntoItsBytes(t *testing.T) {
	_, b := embeddedPrebuilt(t)
	procs, syns, err := knowledge.EmbeddedSources()
	if err != nil {
		t.Fatal(err)
	}
	within := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		lo := uintptr(unsafe.Pointer(&b[0]))
		return len(s) > 0 && p >= lo && p < lo+uintptr(len(b))
	}
	static, sc, err := Load(b, LoadOptions{Procs: procs, Syns: syns, Static: true})
	if err != nil {
		t.Fatal(err)
	}
	copied, cc, err := Load(b, LoadOptions{Procs: procs, Syns: syns})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Encode(static, sc), Encode(copied, cc)) {
		t.Fatal("a static load encodes differently from a copying one")
	}
	for _, lang := range knowledge.Languages {
		sd, cd := sc.Documents(lang)[0], cc.Documents(lang)[0]
		sw, cw := static.Lang(lang).terms.words, copied.Lang(lang).terms.words
		if !within(sd.Sections[0].Content) || !within(sw[len(sw)/2]) || !within(sd.Keywords[0]) {
			t.Errorf("%s: a static load copied its strings", lang)
		}
		if within(cd.Sections[0].Content) || within(cw[len(cw)/2]) || within(cd.Keywords[0]) {
			t.Errorf("%s: a copying load kept strings inside the loaded bytes", lang)
		}
		// Integer arrays too: the format aligns them, and b, a fresh slice, is aligned.
		ints := func(l *Lang) string {
			return unsafe.String((*byte)(unsafe.Pointer(&l.post.postPassage[0])), 4*len(l.post.postPassage))
		}
		if !within(ints(static.Lang(lang))) || within(ints(copied.Lang(lang))) {
			t.Errorf("%s: the postings are not in place for a static load, or in place for a copying one", lang)
		}
	}
	_, corpus, err := Load(b, LoadOptions{Procs: procs, Syns: syns, Static: true, CorpusOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := corpus.Documents("en")[0]; !within(d.Title) {
		t.Error("a static load of the corpus alone copied its strings")
	}
}

// A prebuilt index whose sentences name terms or sentences that are not there is refused: Focus
// would read past its arrays.
func TestDamagedSentencesFailToLoad(t *testing.T) {
	for name, damage := range map[string]func(l *Lang){
		"a term past the vocabulary": func(l *Lang) { l.sent.sentTerms[3] = Term(len(l.terms.words)) },
		"a sentence the passage lacks": func(l *Lang) {
			for p := range l.Passages {
				if n := l.sent.sentStart[p+1] - l.sent.sentStart[p]; n%MaskBits != 0 && l.sent.sentTermStart[p+1] > l.sent.sentTermStart[p] {
					l.sent.sentMasks[l.sent.maskStart[p]+uint32(l.sent.maskWords(p))-1] |= 1 << (n % MaskBits)
					return
				}
			}
			t.Fatal("no passage to damage")
		},
		"a mask too few": func(l *Lang) { l.sent.maskStart[1]++ },
		"a sentence too many": func(l *Lang) {
			l.sent.sentStart = slices.Clone(l.sent.sentStart)
			l.sent.sentStart[len(l.sent.sentStart)-1]++
		},
	} {
		refusesDamage(t, "de", name, damage)
	}
}

// A prebuilt index whose keywords' and entities' text ids are not first phrases of theirs is
// refused: L0 would read another kind of phrase's text, or name one text twice.
func TestDamagedPhraseTextsFailToLoad(t *testing.T) {
	// keywords returns three keyword or entity phrases of different documents, ascending.
	keywords := func(l *Lang) (a, b, c uint32) {
		var got []uint32
		for d := range l.Docs {
			if l.phr.docPhrase[d+1]-l.phr.docPhrase[d] > 2 {
				got = append(got, l.phr.docPhrase[d]+2)
			}
		}
		if len(got) < 3 {
			t.Fatal("too few documents with keywords")
		}
		return got[0], got[1], got[2]
	}
	for name, damage := range map[string]func(l *Lang){
		"one too few":                   func(l *Lang) { l.phr.phraseFirst = l.phr.phraseFirst[:len(l.phr.phraseFirst)-1] },
		"a title with a keyword's text": func(l *Lang) { a, _, _ := keywords(l); l.phr.phraseFirst[l.phr.docPhrase[0]] = a },
		"a keyword with a later first":  func(l *Lang) { a, b, _ := keywords(l); l.phr.phraseFirst[a] = b },
		"a keyword with a title's text": func(l *Lang) { _, b, _ := keywords(l); l.phr.phraseFirst[b] = l.phr.docPhrase[0] },
		"a first that is not its own": func(l *Lang) {
			a, b, c := keywords(l)
			l.phr.phraseFirst[b], l.phr.phraseFirst[c] = a, b
		},
	} {
		refusesDamage(t, "en", name, damage)
	}
}

// A prebuilt index that lists a passage of one document among another's is refused: PassageOf
// reads a document's passages' sections in that document's list of sections.
func TestPassageOfAnotherDocumentFailsToLoad(t *testing.T) {
	refusesDamage(t, "de", "a passage of the first document among the second's", func(l *Lang) { l.Passages[l.post.docStart[1]].Doc = 0 })
}

// refusesDamage checks that a fresh build of the embedded corpus's lang passes the prebuilt
// index's checks, and fails them with ErrPrebuilt once damaged.
func refusesDamage(t *testing.T, lang, name string, damage func(l *Lang)) {
	t.Helper()
	l := embedded(t).Lang(lang)
	if err := l.check(); err != nil {
		t.Fatalf("%s: the undamaged index is refused: %v", name, err)
	}
	damage(l)
	if err := l.check(); !errors.Is(err, ErrPrebuilt) {
		t.Errorf("%s: %v, want ErrPrebuilt", name, err)
	}
}

// BenchmarkLoadEmbedded measures what a lookup function's cold start pays to load the embedded
// prebuilt index (Load with LoadOptions.Embedded), without the files' bytes.
func BenchmarkLoadEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Load(knowledge.EmbeddedIndex(), LoadOptions{Embedded: true}); err != nil {
			b.Fatal(err)
		}
	}
}
