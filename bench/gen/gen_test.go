package gen

import (
	"bytes"
	"os"
	"path/filepath"
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
