package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
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
		c, ix, _, err := loadKnowledge(config.Config{}, log, tc.needs)
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
	if _, ix, _, err := loadKnowledge(cfg, log, Needs{Index: true}); err != nil || ix == nil ||
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
	c2, ix, _, err := loadKnowledge(cfg, log, Needs{Index: true})
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

// TestEditedEmbeddedProcedureIsServed: a procedure edited after `go generate ./knowledge` last
// wrote the embedded index is compiled into the binary as edited; a start serves the edit
// (parsed at start, not the stale index) and names the command that refreshes the index.
func TestEditedEmbeddedProcedureIsServed(t *testing.T) {
	index, procs, syns, err := embeddedCorpus()
	if err != nil {
		t.Fatal(err)
	}
	edited := fstest.MapFS{}
	for _, lang := range knowledge.Languages {
		names, err := fs.Glob(procs, lang+"/*.md")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			raw, err := fs.ReadFile(procs, name)
			if err != nil {
				t.Fatal(err)
			}
			edited[name] = &fstest.MapFile{Data: raw}
		}
	}
	const file = "en/damage-procedure.md"
	raw := edited[file].Data
	// The keyword list is full (30): one keyword is replaced by a word no procedure uses.
	edited[file].Data = bytes.Replace(raw, []byte(" hubcap,"), []byte(" glitterbomb,"), 1)
	if bytes.Equal(raw, edited[file].Data) {
		t.Fatal("the edit changed nothing")
	}
	defer func(old func() ([]byte, fs.FS, fs.FS, error)) { embeddedCorpus = old }(embeddedCorpus)
	embeddedCorpus = func() ([]byte, fs.FS, fs.FS, error) { return index, edited, syns, nil }

	var logs bytes.Buffer
	cfg, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(context.Background(), cfg, &logs, Needs{Index: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "prebuilt index not used") || !strings.Contains(logs.String(), "go generate ./knowledge") {
		t.Errorf("the stale embedded index was not reported with its fix:\n%s", logs.String())
	}
	res, err := p.Lookup(nil).Lookup(context.Background(), lookup.LookupRequest{
		Question: "There is a glitterbomb all over the car, what do I do?", Language: "en", TopK: 5,
		Actor: port.Actor{ID: "agent-7"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Retrieval.L0.MatchedKeywords, "glitterbomb") {
		t.Errorf("the edited keyword is not matched: %+v", res.Retrieval.L0)
	}
	if res.Primary == nil || res.Primary.DocumentID != "damage-procedure" {
		t.Errorf("primary %+v, want the edited procedure", res.Primary)
	}

	// The files as the index was built from them: the index is used, and nothing is reported.
	embeddedCorpus = func() ([]byte, fs.FS, fs.FS, error) { return index, procs, syns, nil }
	logs.Reset()
	if _, err := New(context.Background(), cfg, &logs, Needs{Index: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "prebuilt index not used") {
		t.Errorf("the fresh embedded index was not used:\n%s", logs.String())
	}
}

// TestVersionedCorpusLoadsFromItsPrebuiltIndex: a KNOWLEDGE_DIR with versions on file and the
// index.bin index-build writes for it starts from that index (nothing parsed or analysed), knows
// every version, and serves each day's versions in force, projected from it.
func TestVersionedCorpusLoadsFromItsPrebuiltIndex(t *testing.T) {
	dir := prebuiltVersionedDir(t)
	var logs bytes.Buffer
	cfg := config.Config{KnowledgeDir: dir}
	p, err := New(context.Background(), cfg, &logs, Needs{Index: true,
		Clock: func() time.Time { return time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Contains(out, "parsed and analysed") || strings.Contains(out, "not used") {
		t.Fatalf("the versioned corpus did not start from its prebuilt index:\n%s", out)
	}
	if !p.Corpus.Versioned() || len(p.Corpus.Versions("de", "access-failure")) != 2 {
		t.Fatal("the restored corpus does not know every version")
	}
	for day, want := range map[string]string{"2026-12-31": "1.4", testutil.SwitchDay: "1.5"} {
		ep := p.Epochs.At(day)
		l := ep.Index.Lang("de")
		di := l.DocIndex("access-failure")
		if di < 0 || l.Docs[di].Version != want {
			t.Errorf("%s: access-failure (document %d) in the index is not %s", day, di, want)
		}
		if l.InForce() != 11 {
			t.Errorf("%s: %d documents in force in the index, want 11", day, l.InForce())
		}
	}
	if p.Epochs.At("2026-12-31").Index != p.Index {
		t.Error("today's index is not the one the parts hold")
	}
}

// The start log names the day and zone the versions were computed for, the procedures in force
// (not the files: a procedure whose only version lies ahead counts nowhere), the versions in
// force and coming, and where the corpus came from; the same for a function with the index and
// one without it.
func TestStartLogNamesTheVersionsOfTheDay(t *testing.T) {
	dir := prebuiltVersionedDir(t)
	clock := func() time.Time { return time.Date(2027, 1, 2, 8, 0, 0, 0, time.UTC) }
	var lines []map[string]any
	for _, index := range []bool{true, false} {
		var logs bytes.Buffer
		p, err := New(context.Background(), config.Config{KnowledgeDir: dir}, &logs, Needs{Index: index, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		logs.Reset()
		p.Initialised(context.Background(), "disabled")
		var line map[string]any
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatalf("%v: %s", err, logs.String())
		}
		lines = append(lines, line)
	}
	for _, line := range lines {
		for key, want := range map[string]any{
			"day": "2027-01-02", "time_zone": "Europe/Berlin", "knowledge": "prebuilt index",
			"procedures_in_force_en": 11.0, "procedures_in_force_de": 11.0,
		} {
			if line[key] != want {
				t.Errorf("%s: %v, want %v", key, line[key], want)
			}
		}
		inForce := fmt.Sprint(line["versions_in_force"])
		coming := fmt.Sprint(line["versions_coming"])
		if !strings.Contains(inForce, "access-failure 1.5 since 2027-01-01") || !strings.Contains(inForce, "damage-procedure 1.3") ||
			!strings.Contains(coming, "damage-procedure 1.4 on 2027-01-12") || !strings.Contains(coming, testutil.AheadID+" 1.0 on 2027-03-01") {
			t.Errorf("versions in force %s, coming %s", inForce, coming)
		}
	}
	for _, key := range []string{"day", "knowledge", "versions_in_force", "versions_coming", "procedures_in_force_en"} {
		if fmt.Sprint(lines[0][key]) != fmt.Sprint(lines[1][key]) {
			t.Errorf("%s differs between a function with the index and one without: %v, %v", key, lines[0][key], lines[1][key])
		}
	}
}

// prebuiltVersionedDir is the versioned test corpus (testutil.VersionedDir) with the index.bin
// index-build writes for it.
func prebuiltVersionedDir(t *testing.T) string {
	t.Helper()
	dir := testutil.VersionedDir(t)
	parsed, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, lexical.PrebuiltFile), lexical.Encode(lexical.BuildAll(parsed), parsed), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A function bounds the heap of the sets of versions it keeps by its memory (a sixteenth of its
// Go memory limit, at most lexical.DefaultEpochBytes); outside one the default holds.
func TestAFunctionBoundsTheSetsKeptByItsMemory(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	for _, c := range []struct {
		limit, want int64
	}{{0, lexical.DefaultEpochBytes}, {230 << 20, (230 << 20) / 16}, {8 << 30, lexical.DefaultEpochBytes}} {
		p, err := New(context.Background(), config.Config{MemoryLimitBytes: c.limit}, io.Discard, Needs{Index: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Epochs.ByteBound(); got != c.want {
			t.Errorf("memory limit %d: the sets kept may hold %d bytes, want %d", c.limit, got, c.want)
		}
	}
}
