package lexical

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// TestProjectionIsTheBuildOfTheDay: the index of every version projected onto a day's versions in
// force is, array for array, the index a build of those versions alone makes (the English index;
// the German one splits compounds against every version's words), on every set of the versioned
// test corpus, before its first date included.
func TestProjectionIsTheBuildOfTheDay(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	all := BuildAll(c)
	for _, day := range []string{"2000-01-01", "2026-06-01", "2026-12-31", testutil.SwitchDay, testutil.ComingDay, testutil.AheadDay} {
		on := c.On(day)
		p, ok := all.Project(on)
		if !ok {
			t.Fatalf("%s: not projected", day)
		}
		want := Build(on)
		var got, exp encoder
		p.Lang("en").encode(&got)
		want.Lang("en").encode(&exp)
		if !bytes.Equal(got.buf.Bytes(), exp.buf.Bytes()) {
			t.Errorf("%s: the projected English index differs from the build of the day's versions", day)
		}
		pl, wl := p.Lang("en"), want.Lang("en")
		if len(pl.post.idf) != len(wl.post.idf) || pl.post.avgLen != wl.post.avgLen {
			t.Fatalf("%s: statistics differ", day)
		}
		for i := range pl.post.idf {
			if pl.post.idf[i] != wl.post.idf[i] || pl.post.docIDF[i] != wl.post.docIDF[i] || pl.front.frontCats[i] != wl.front.frontCats[i] {
				t.Fatalf("%s: term %q: idf %v/%v, docIDF %v/%v", day, pl.terms.words[i], pl.post.idf[i], wl.post.idf[i], pl.post.docIDF[i], wl.post.docIDF[i])
			}
		}
		for _, lang := range knowledge.Languages {
			if n, m := len(p.Lang(lang).Docs), len(on.Documents(lang)); n != m {
				t.Errorf("%s %s: %d documents, want %d", day, lang, n, m)
			}
			if n, m := len(p.Lang(lang).Passages), len(want.Lang(lang).Passages); n != m {
				t.Errorf("%s %s: %d passages, want %d", day, lang, n, m)
			}
		}
	}
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

// A value kept with KeptShared is made once for a language and every projection of it; one kept
// with Kept is each projection's own.
func TestProjectionsShareKeptSharedValues(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	all := BuildAll(c)
	var sharedKey, ownKey = new(int), new(int)
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
		if p.Lang("en") != all.Lang("en") && p.Lang("en").Kept(ownKey, mk) == all.Lang("en").Kept(ownKey, mk) {
			t.Errorf("%s: a projection shares a value kept with Kept", day)
		}
	}
}
