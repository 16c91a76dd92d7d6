package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// TestWriteIsDeterministicAndLoads writes the same corpus twice: the files are byte for byte the
// same, the corpus loads with knowledge.LoadDir (every corpus rule, the personal-data scan
// included) and holds the embedded procedures unchanged.
func TestWriteIsDeterministicAndLoads(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	sa, err := Write(a, 220, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(b, 220, DefaultSeed); err != nil {
		t.Fatal(err)
	}
	if diff := compareDirs(t, a, b); diff != "" {
		t.Fatalf("two runs with one seed differ: %s", diff)
	}
	c, err := knowledge.LoadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range knowledge.Languages {
		if got := len(c.Documents(lang)); got != 110 {
			t.Errorf("%s: %d procedures, want 110", lang, got)
		}
		for _, d := range emb.Documents(lang) {
			if g := c.Document(lang, d.ID); g == nil || !bytes.Equal(g.Raw, d.Raw) {
				t.Errorf("%s/%s: the embedded procedure is missing or changed", lang, d.ID)
			}
		}
		if c.Synonyms(lang).Len() != emb.Synonyms(lang).Len() {
			t.Errorf("%s: %d synonym rules, want the embedded %d", lang, c.Synonyms(lang).Len(), emb.Synonyms(lang).Len())
		}
	}
	t.Logf("%+v", sa)
}

func compareDirs(t *testing.T, a, b string) string {
	t.Helper()
	var diff string
	err := filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || diff != "" {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			diff = rel
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return diff
}

// TestAddVersionsWritesAValidVersionedCorpus: the versions AddVersions writes load, in every
// language, and each is in force from its date on and not before.
func TestAddVersionsWritesAValidVersionedCorpus(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, 22, DefaultSeed); err != nil {
		t.Fatal(err)
	}
	dates := []string{"2026-05-01", "2026-06-01"}
	n, err := AddVersions(dir, 3, dates)
	if err != nil || n != 3 {
		t.Fatalf("%d versioned, %v", n, err)
	}
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	versioned := 0
	for _, lang := range knowledge.Languages {
		for _, d := range c.Documents(lang) {
			vs := c.Versions(lang, d.ID)
			if len(vs) == 1 {
				continue
			}
			versioned++
			last := vs[len(vs)-1]
			if last.Version != VersionedNumber || !slices.Contains(dates, last.EffectiveDate) {
				t.Errorf("%s %s: last version %s from %s", lang, d.ID, last.Version, last.EffectiveDate)
			}
			if got := c.On(last.EffectiveDate).Document(lang, d.ID); got != last {
				t.Errorf("%s %s: not in force on its day", lang, d.ID)
			}
			if got := c.On("2026-04-30").Document(lang, d.ID); got == last {
				t.Errorf("%s %s: in force before its day", lang, d.ID)
			}
		}
	}
	if versioned != 3*len(knowledge.Languages) {
		t.Errorf("%d procedures with versions, want %d", versioned, 3*len(knowledge.Languages))
	}
}
