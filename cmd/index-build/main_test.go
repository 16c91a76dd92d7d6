package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

// TestVersionedCorpusGetsAnIndexOfEveryVersion: index-build accepts a valid corpus with versions
// on file and writes an index that loads with every version and serves each day's set.
func TestVersionedCorpusGetsAnIndexOfEveryVersion(t *testing.T) {
	dir := testutil.VersionedDir(t)
	if err := run(dir, ""); err != nil {
		t.Fatalf("index-build refused a valid versioned corpus: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, lexical.PrebuiltFile))
	if err != nil {
		t.Fatal(err)
	}
	ix, c, err := lexical.Load(b, lexical.LoadOptions{Procs: os.DirFS(dir), Syns: os.DirFS(filepath.Join(dir, knowledge.SynonymsDir))})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ix.Lang("en").Docs); got != 14 {
		t.Errorf("%d English documents in the index, want 14 (every version on file)", got)
	}
	day, ok := ix.Project(c.On(testutil.SwitchDay))
	if !ok || day.Lang("en").InForce() != 11 {
		t.Fatalf("the index of %s: %v, %d documents in force, want 11", testutil.SwitchDay, ok, day.Lang("en").InForce())
	}
}
