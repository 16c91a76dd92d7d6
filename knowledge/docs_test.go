package knowledge

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The minimal valid pair of docs/corpus.md is what a user copies into KNOWLEDGE_DIR: it must
// load, so the page cannot drift from the rules.
func TestDocumentedMinimalPairLoads(t *testing.T) {
	raw, err := os.ReadFile("../docs/corpus.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```markdown\n(.*?)\n```").FindAllStringSubmatch(string(raw), -1)
	if len(blocks) != 2 {
		t.Fatalf("%d markdown blocks in docs/corpus.md, want the English and the German file", len(blocks))
	}
	dir := t.TempDir()
	for i, lang := range []string{"en", "de"} {
		if err := os.MkdirAll(filepath.Join(dir, lang), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, lang, "winter-tyres.md"), []byte(blocks[i][1]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("the documented pair does not load: %v", err)
	}
	for _, lang := range []string{"en", "de"} {
		if d := c.Document(lang, "winter-tyres"); d == nil || len(d.Sections) < 4 {
			t.Errorf("%s: %+v", lang, d)
		}
	}
}
