package lexical

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// TestViewIsTheBuildOfTheDay: the view of the index of every version onto a day's versions in
// force knows the words a build of those versions alone knows, with the same statistics (idf
// over passages and procedures, categories, title weights, length normalisation), and finds the
// same passages with the same scores, on every set of the versioned test corpus, before its
// first date included; it copies none of the index's arrays.
func TestViewIsTheBuildOfTheDay(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	all := BuildAll(c)
	for _, day := range []string{"2000-01-01", "2026-06-01", "2026-12-31", testutil.SwitchDay, testutil.ComingDay, testutil.AheadDay} {
		on := c.On(day)
		p, ok := all.Project(on)
		if !ok {
			t.Fatalf("%s: not projected", day)
		}
		want := Build(on)
		for _, lang := range knowledge.Languages {
			v, w := p.Lang(lang), want.Lang(lang)
			if &v.post.postPassage[0] != &all.Lang(lang).post.postPassage[0] {
				t.Errorf("%s %s: the view copied the postings", day, lang)
			}
			if v.InForce() != len(w.Docs) || v.post.avgLen != w.post.avgLen || v.post.unseen != w.post.unseen {
				t.Errorf("%s %s: %d documents in force, average length %v, want %d and %v", day, lang, v.InForce(), v.post.avgLen, len(w.Docs), w.post.avgLen)
			}
			sameWords(t, day+" "+lang, v, w)
			sameDocuments(t, day+" "+lang, v, w)
		}
	}
}

// sameWords compares the words v and w know, and each one's statistics.
func sameWords(t *testing.T, what string, v, w *Lang) {
	t.Helper()
	for _, s := range v.terms.words {
		vt, vok := v.Lookup(s)
		wt, wok := w.Lookup(s)
		if vok != wok {
			t.Errorf("%s: %q known %v, the build %v", what, s, vok, wok)
			continue
		}
		if !vok {
			continue
		}
		if v.post.Known(vt) != w.post.Known(wt) || v.post.IDF(vt) != w.post.IDF(wt) || v.post.DocIDF(vt) != w.post.DocIDF(wt) ||
			v.front.Categories(vt) != w.front.Categories(wt) || v.front.liveDocs(vt) != len(w.front.docs(wt)) {
			t.Errorf("%s: %q: idf %v/%v, docIDF %v/%v, categories %d/%d", what, s, v.post.IDF(vt), w.post.IDF(wt),
				v.post.DocIDF(vt), w.post.DocIDF(wt), v.front.Categories(vt), w.front.Categories(wt))
		}
	}
	for _, s := range w.terms.words {
		if _, ok := v.Lookup(s); !ok {
			t.Errorf("%s: the view does not know %q", what, s)
		}
	}
}

// sameDocuments compares each of w's documents and passages with v's, and a search for each
// document's title.
func sameDocuments(t *testing.T, what string, v, w *Lang) {
	t.Helper()
	for wd, d := range w.Docs {
		vd := v.DocIndex(d.ID)
		if vd < 0 || v.Docs[vd] != d || v.phr.titleWeight(vd) != w.phr.titleWeight(wd) {
			t.Fatalf("%s: %s is document %d of the view, title weight %v/%v", what, d.ID, vd, v.phr.titleWeight(max(vd, 0)), w.phr.titleWeight(wd))
		}
		if _, vn := v.front.Domain(vd); vn != d.Category {
			t.Errorf("%s: %s is in domain %q", what, d.ID, vn)
		}
		for _, sec := range d.Sections {
			vp, vok := v.PassageOf(d.ID, sec.Anchor)
			wp, wok := w.PassageOf(d.ID, sec.Anchor)
			if vok != wok || v.post.lenNorm[vp] != w.post.lenNorm[wp] || !v.post.InForce(vp) {
				t.Errorf("%s: %s: passage %d (%v), length normalisation %v/%v", what, v.Source(vp), vp, vok, v.post.lenNorm[vp], w.post.lenNorm[wp])
			}
		}
		query := v.Text.Terms(d.Title + " " + sec0(d))
		for _, cat := range []string{"", d.Category} {
			vh, wh := v.Search(query, cat, 8), w.Search(query, cat, 8)
			if len(vh) != len(wh) {
				t.Fatalf("%s: %d hits for %q, the build %d", what, len(vh), d.Title, len(wh))
			}
			for i := range vh {
				if v.Source(vh[i].Passage) != w.Source(wh[i].Passage) || vh[i].Score != wh[i].Score {
					t.Errorf("%s: hit %d for %q: %s %v, the build %s %v", what, i, d.Title, v.Source(vh[i].Passage), vh[i].Score, w.Source(wh[i].Passage), wh[i].Score)
				}
			}
		}
	}
}

// sec0 is the heading of a document's first section, "" when it has none.
func sec0(d *knowledge.Document) string {
	if len(d.Sections) == 0 {
		return ""
	}
	return d.Sections[0].Heading
}

// TestProjectionOfEveryDocumentIsTheIndexItself: a corpus without versions on a day when every
// procedure is in force is served from the index as built (or loaded), never a copy of it.
func TestProjectionOfEveryDocumentIsTheIndexItself(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := BuildAll(c)
	if p, ok := ix.Project(c.On("2026-12-04")); !ok || p != ix {
		t.Error("today's set of a corpus without versions was copied")
	}
}

// TestLoadedIndexOfEveryVersionServesADayOfAllItsDocuments: an index of every version loaded
// without its statistics (they are a projection's to compute) still serves a day on which every
// document on file is in force, with the statistics a build gives.
func TestLoadedIndexOfEveryVersionServesADayOfAllItsDocuments(t *testing.T) {
	dir := testutil.VersionedDir(t)
	// Only the procedure whose one version lies ahead is versioned: on its day, every file is in force.
	for _, lang := range knowledge.Languages {
		for _, f := range []string{"access-failure@1.5.md", "damage-procedure@1.4.md"} {
			if err := os.Remove(filepath.Join(dir, lang, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := knowledge.LoadDir(dir)
	if err != nil || !c.Versioned() {
		t.Fatalf("%v, versioned %v", err, c != nil && c.Versioned())
	}
	ix, c2, err := Load(Encode(BuildAll(c), c), LoadOptions{Procs: os.DirFS(dir), Syns: os.DirFS(filepath.Join(dir, knowledge.SynonymsDir))})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := ix.Project(c2.On(testutil.AheadDay))
	if !ok || p != ix {
		t.Fatal("the day of every document was not served from the index itself")
	}
	want := Build(c2.On(testutil.AheadDay)).Lang("en")
	got := p.Lang("en")
	if len(got.post.idf) != len(want.post.idf) || got.post.avgLen != want.post.avgLen || len(got.phr.phraseDoc) != len(want.phr.phraseDoc) {
		t.Fatalf("statistics not computed: %d idf, want %d", len(got.post.idf), len(want.post.idf))
	}
	for i := range got.post.idf {
		if got.post.idf[i] != want.post.idf[i] {
			t.Fatalf("idf of %q: %v, want %v", got.terms.words[i], got.post.idf[i], want.post.idf[i])
		}
	}
}

// A value kept with KeptShared is made once for a language and every projection of it.
func TestProjectionsShareKeptSharedValues(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	all := BuildAll(c)
	sharedKey := new(int)
	made := 0
	mk := func(*Lang) any { made++; return made }
	base := all.Lang("en").KeptShared(sharedKey, mk)
	for _, day := range []string{"2000-01-01", testutil.SwitchDay, testutil.AheadDay} {
		p, ok := all.Project(c.On(day))
		if !ok {
			t.Fatalf("%s: not projected", day)
		}
		if got := p.Lang("en").KeptShared(sharedKey, mk); got != base {
			t.Errorf("%s: the projection made its own shared value (%v, the language's %v)", day, got, base)
		}
	}
}

// TestAViewServesConcurrentLookups: lookups that make a fresh view's term statistics at once (each
// on its first use) see the statistics a build of the day's versions has, and race on nothing.
func TestAViewServesConcurrentLookups(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	all := BuildAll(c)
	on := c.On(testutil.SwitchDay)
	view, _ := all.Project(on)
	v, w := view.Lang("de"), Build(on).Lang("de")
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range w.terms.words {
				s := w.terms.words[(i*7+g*131)%len(w.terms.words)]
				vt, ok := v.Lookup(s)
				wt, _ := w.Lookup(s)
				if !ok || v.post.IDF(vt) != w.post.IDF(wt) || v.post.DocIDF(vt) != w.post.DocIDF(wt) || v.front.Categories(vt) != w.front.Categories(wt) {
					errs <- s
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for s := range errs {
		t.Errorf("the view's statistics of %q differ from the build's", s)
	}
}
