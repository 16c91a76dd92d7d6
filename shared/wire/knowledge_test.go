package wire

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

// TestKnowledgeComesFromThePrebuiltIndexAsNeeded: each function gets what it reads, from the
// prebuilt index: the lookup function the index without the files' bytes, the sync function the
// bytes without the index.
func TestKnowledgeComesFromThePrebuiltIndexAsNeeded(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, tc := range []struct {
		needs          Needs
		index, rawKept bool
	}{
		{Needs{Index: true}, true, false},
		{Needs{Raw: true}, false, true},
		{Needs{}, false, false},
		{Needs{Index: true, Raw: true}, true, true},
	} {
		logs.Reset()
		c, ix, err := loadKnowledge(config.Config{}, log, tc.needs)
		if err != nil {
			t.Fatal(err)
		}
		if (ix != nil) != tc.index {
			t.Errorf("%+v: index loaded %v", tc.needs, ix != nil)
		}
		if raw := c.Documents("en")[0].Raw != nil; raw != tc.rawKept {
			t.Errorf("%+v: Raw kept %v", tc.needs, raw)
		}
		if !strings.Contains(logs.String(), "knowledge loaded from the prebuilt index") {
			t.Errorf("%+v: the embedded prebuilt index was not used: %s", tc.needs, logs.String())
		}
	}
}

// TestStalePrebuiltIndexIsNotUsed: a KNOWLEDGE_DIR whose files changed after its index.bin was
// written starts from the files, and says so.
func TestStalePrebuiltIndexIsNotUsed(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, lang := range knowledge.Languages {
		for _, d := range c.Documents(lang) {
			path := filepath.Join(dir, lang, d.ID+".md")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, d.Raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	fresh, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, lexical.PrebuiltFile), lexical.Encode(lexical.Build(fresh), fresh), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := config.Config{KnowledgeDir: dir}
	if _, ix, err := loadKnowledge(cfg, log, Needs{Index: true}); err != nil || ix == nil ||
		!strings.Contains(logs.String(), "knowledge loaded from the prebuilt index") {
		t.Fatalf("fresh index: %v\n%s", err, logs.String())
	}
	// One procedure edited after the index was written.
	path := filepath.Join(dir, "en", "damage-procedure.md")
	raw, _ := os.ReadFile(path)
	edited := bytes.Replace(raw, []byte("within 2 business days"), []byte("within 3 business days"), 1)
	if bytes.Equal(raw, edited) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	c2, ix, err := loadKnowledge(cfg, log, Needs{Index: true})
	if err != nil || ix == nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "prebuilt index not used") || !strings.Contains(logs.String(), "changed since") {
		t.Errorf("the stale index was not reported:\n%s", logs.String())
	}
	d := c2.Document("en", "damage-procedure")
	if !strings.Contains(strings.Join(sectionTexts(d), " "), "within 3 business days") {
		t.Error("the corpus is not the edited files")
	}
}

func sectionTexts(d *knowledge.Document) []string {
	var out []string
	for _, s := range d.Sections {
		out = append(out, s.Content)
	}
	return out
}
