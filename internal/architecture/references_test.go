package architecture

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside matches a reference to a file outside the repository: the project's code, comments and
// docs name its own files only.
var outside = regexp.MustCompile(`\.\./shared/|shared/spec/|shared/seeds|\bseeds/[0-9]`)

func TestNoReferenceOutsideTheRepository(t *testing.T) {
	r := root(t)
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == ".git" || name == "node_modules" || name == "testdata" || name == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".md") && !strings.HasSuffix(name, ".yaml") &&
			name != "Makefile" && name != "run" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := outside.FindIndex(raw); loc != nil && !strings.HasSuffix(path, "references_test.go") {
			rel, _ := filepath.Rel(r, path)
			t.Errorf("%s refers outside the repository: %q", rel, raw[loc[0]:min(len(raw), loc[1]+30)])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
