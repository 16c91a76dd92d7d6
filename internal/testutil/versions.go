package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// The versioned test corpus (VersionedDir) around these days, in Europe/Berlin:
const (
	// SwitchDay is the day access-failure 1.5 (five remote-unlock attempts instead of three)
	// replaces 1.4.
	SwitchDay = "2027-01-01"
	// ComingDay is the day damage-procedure 1.4 replaces 1.3.
	ComingDay = "2027-01-12"
	// AheadDay is the day the procedure AheadID, whose only version lies ahead, takes effect.
	AheadDay = "2027-03-01"
	// AheadID is the procedure with no version in force before AheadDay.
	AheadID = "vehicle-inspection"
)

// VersionedDir writes a KNOWLEDGE_DIR folder holding the embedded procedures and synonyms,
// knowledge/testdata/versions (access-failure@1.5.md from SwitchDay, damage-procedure@1.4.md
// from ComingDay, both languages), and a procedure AheadID whose one version takes effect on
// AheadDay: 11 procedures, 13 files per language before AheadDay.
func VersionedDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	procs, syns, err := knowledge.EmbeddedSources()
	if err != nil {
		t.Fatal(err)
	}
	copyTree(t, procs, dir)
	copyTree(t, syns, filepath.Join(dir, knowledge.SynonymsDir))
	_, self, _, _ := runtime.Caller(0)
	copyTree(t, os.DirFS(filepath.Join(filepath.Dir(self), "..", "..", "knowledge", "testdata", "versions")), dir)
	for _, lang := range knowledge.Languages {
		src, err := fs.ReadFile(procs, lang+"/vehicle-cleaning.md")
		if err != nil {
			t.Fatal(err)
		}
		title := map[string]string{"en": "Vehicle inspection", "de": "Fahrzeugprüfung"}[lang]
		old := map[string]string{"en": "Vehicle cleaning and hygiene", "de": "Fahrzeugreinigung und Hygiene"}[lang]
		s := strings.ReplaceAll(string(src), old, title)
		s = strings.Replace(s, "id: vehicle-cleaning", "id: "+AheadID, 1)
		s = ReplaceLine(s, "version: ", `version: "1.0"`)
		s = ReplaceLine(s, "effective_date: ", "effective_date: "+AheadDay)
		write(t, filepath.Join(dir, lang, AheadID+"@1.0.md"), s)
	}
	return dir
}

// LoadVersioned loads VersionedDir's corpus.
func LoadVersioned(t testing.TB) (*knowledge.Corpus, string) {
	t.Helper()
	dir := VersionedDir(t)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

// ReplaceLine replaces the first line of s that starts with prefix (a front-matter key) by line.
func ReplaceLine(s, prefix, line string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = line
			break
		}
	}
	return strings.Join(lines, "\n")
}

func copyTree(t testing.TB, src fs.FS, dst string) {
	t.Helper()
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		write(t, filepath.Join(dst, filepath.FromSlash(p)), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, file, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ManyVersionsDir writes VersionedDir's folder with n more versions of lost-and-found in every
// language, "9.1" to "9.<n>", taking effect on n days in a row from 2027-04-01: n more sets of
// versions in force, for the tests that cycle as_of over many of them; days are their dates.
func ManyVersionsDir(t testing.TB, n int) (dir string, days []string) {
	t.Helper()
	dir = VersionedDir(t)
	for _, lang := range knowledge.Languages {
		src, err := os.ReadFile(filepath.Join(dir, lang, "lost-and-found.md"))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= n; i++ {
			version := "9." + strconv.Itoa(i)
			day := knowledge.AddDays("2027-04-01", i-1)
			s := ReplaceLine(string(src), "version: ", `version: "`+version+`"`)
			s = ReplaceLine(s, "effective_date: ", "effective_date: "+day)
			write(t, filepath.Join(dir, lang, "lost-and-found@"+version+".md"), s)
			if lang == knowledge.Languages[0] {
				days = append(days, day)
			}
		}
	}
	return dir, days
}

// EmbeddedSources returns copies of the embedded procedures and synonym files as map file
// systems, for a test to change.
func EmbeddedSources(t testing.TB) (procs, syns fstest.MapFS) {
	t.Helper()
	p, s, err := knowledge.EmbeddedSources()
	if err != nil {
		t.Fatal(err)
	}
	copyFS := func(src fs.FS) fstest.MapFS {
		out := fstest.MapFS{}
		err := fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(src, path)
			out[path] = &fstest.MapFile{Data: b}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return copyFS(p), copyFS(s)
}

// Doc is a small English document for a test's own corpus: its id and category, one section
// (headed "H", anchored apart) per text in sections.
func Doc(id, category string, sections ...string) *knowledge.Document {
	d := &knowledge.Document{ID: id, Title: "T", Language: "en", Category: category, Path: "procedures/en/" + id + ".md"}
	for i, s := range sections {
		d.Sections = append(d.Sections, knowledge.Section{Number: i + 1, Heading: "H", Anchor: knowledge.Anchor("H" + string(rune('a'+i))), Content: s})
	}
	return d
}
