package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// VersionedNumber is the version AddVersions writes: above every version the generator writes.
const VersionedNumber = "99.0"

var (
	versionLine   = regexp.MustCompile(`(?m)^version: .*$`)
	effectiveLine = regexp.MustCompile(`(?m)^effective_date: .*$`)
)

// AddVersions writes, beside the corpus Write wrote in dir, a version VersionedNumber
// (<id>@99.0.md, the same text) of the first n ids in name order, in every language, taking
// effect on dates[i%len(dates)] for the i-th: a corpus with n·languages version files whose
// sets of versions in force change on those dates. Every date must follow the corpus's own
// effective dates. It returns how many ids it versioned.
func AddVersions(dir string, n int, dates []string) (int, error) {
	if len(dates) == 0 {
		return 0, fmt.Errorf("no effective dates")
	}
	entries, err := os.ReadDir(filepath.Join(dir, knowledge.Languages[0]))
	if err != nil {
		return 0, err
	}
	var ids []string
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".md") && !strings.Contains(name, knowledge.VersionSeparator) {
			ids = append(ids, strings.TrimSuffix(name, ".md"))
		}
	}
	slices.Sort(ids)
	ids = ids[:min(n, len(ids))]
	for i, id := range ids {
		for _, lang := range knowledge.Languages {
			b, err := os.ReadFile(filepath.Join(dir, lang, id+".md"))
			if err != nil {
				return 0, err
			}
			b = versionLine.ReplaceAll(b, []byte(`version: "`+VersionedNumber+`"`))
			b = effectiveLine.ReplaceAll(b, []byte("effective_date: "+dates[i%len(dates)]))
			name := id + knowledge.VersionSeparator + VersionedNumber + ".md"
			if err := os.WriteFile(filepath.Join(dir, lang, name), b, 0o644); err != nil {
				return 0, err
			}
		}
	}
	return len(ids), nil
}
