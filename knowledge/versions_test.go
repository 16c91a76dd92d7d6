package knowledge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

func TestVersionInForceOnEachDay(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	for _, lang := range knowledge.Languages {
		for _, tc := range []struct {
			day, access, damage string
			ahead               bool
		}{
			{"2026-12-31", "1.4", "1.3", false},
			{testutil.SwitchDay, "1.5", "1.3", false},
			{testutil.ComingDay, "1.5", "1.4", false},
			{testutil.AheadDay, "1.5", "1.4", true},
		} {
			on := c.On(tc.day)
			if got := on.Document(lang, "access-failure").Version; got != tc.access {
				t.Errorf("%s %s: access-failure %s in force, want %s", lang, tc.day, got, tc.access)
			}
			if got := on.Document(lang, "damage-procedure").Version; got != tc.damage {
				t.Errorf("%s %s: damage-procedure %s in force, want %s", lang, tc.day, got, tc.damage)
			}
			if got := on.Document(lang, testutil.AheadID) != nil; got != tc.ahead {
				t.Errorf("%s %s: %s in force %v, want %v", lang, tc.day, testutil.AheadID, got, tc.ahead)
			}
			want := 11
			if tc.ahead {
				want = 12
			}
			if n := len(on.Documents(lang)); n != want {
				t.Errorf("%s %s: %d procedures in force, want %d", lang, tc.day, n, want)
			}
		}
	}
	if got := len(c.Versions("de", "access-failure")); got != 2 {
		t.Errorf("%d versions of access-failure on file, want 2", got)
	}
}

func TestNextVersionWithinTheWindow(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	for _, tc := range []struct {
		day  string
		days int
		want string
	}{
		{"2027-01-02", 30, "1.4"}, // ten days ahead
		{"2027-01-02", 10, "1.4"}, // the last day of the window counts
		{"2027-01-02", 9, ""},     // one day beyond it
		{"2027-01-12", 30, ""},    // in force now: nothing is coming
		{"2026-03-01", 300, ""},   // 2027-01-12 is 317 days after 2026-03-01
	} {
		got := ""
		if d := c.NextVersion("en", "damage-procedure", tc.day, tc.days); d != nil {
			got = d.Version
		}
		if got != tc.want {
			t.Errorf("next version on %s within %d days: %q, want %q", tc.day, tc.days, got, tc.want)
		}
	}
}

func TestTodayBeginsAtMidnightInTheZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := testutil.LoadVersioned(t)
	// 23:30 and 00:30 in Berlin around the switch are 22:30 and 23:30 UTC of the same UTC day.
	before := time.Date(2026, 12, 31, 22, 30, 0, 0, time.UTC)
	after := time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC)
	if got := c.On(knowledge.Today(before, berlin)).Document("en", "access-failure").Version; got != "1.4" {
		t.Errorf("23:30 in Berlin on the eve: version %s in force, want 1.4", got)
	}
	if got := c.On(knowledge.Today(after, berlin)).Document("en", "access-failure").Version; got != "1.5" {
		t.Errorf("00:30 in Berlin on the day: version %s in force, want 1.5", got)
	}
	if got := knowledge.Today(after, time.UTC); got != "2026-12-31" {
		t.Errorf("the same instant in UTC is %s, want 2026-12-31", got)
	}
}

func TestVersionRulesNameTheFileOnce(t *testing.T) {
	for _, tc := range []struct {
		name, file, version, date, want string
	}{
		{"same date", "access-failure@1.6.md", "1.6", "2026-03-01", "one version per effective date"},
		{"same version", "access-failure@1.4.md", "1.4", "2027-02-01", `version "1.4" takes effect on 2027-02-01`},
		{"lower version later", "access-failure@1.3.md", "1.3", "2027-02-01", "a later effective date must carry a higher version"},
		{"name and version differ", "access-failure@1.7.md", "1.8", "2027-02-01", "must equal the version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testutil.VersionedDir(t)
			src, err := os.ReadFile(filepath.Join(dir, "en", "access-failure.md"))
			if err != nil {
				t.Fatal(err)
			}
			s := strings.Replace(string(src), `version: "1.4"`, `version: "`+tc.version+`"`, 1)
			s = strings.Replace(s, "effective_date: 2026-03-01", "effective_date: "+tc.date, 1)
			if err := os.WriteFile(filepath.Join(dir, "en", tc.file), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = knowledge.LoadDir(dir)
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(dir, "en", tc.file)+":") || !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q does not name %s and %q", msg, tc.file, tc.want)
			}
			if n := strings.Count(msg, tc.file+":"); n != 1 {
				t.Errorf("%s reported %d times:\n%s", tc.file, n, msg)
			}
		})
	}
}

func TestEveryLanguageHoldsTheSameVersions(t *testing.T) {
	t.Run("a version in one language only", func(t *testing.T) {
		dir := testutil.VersionedDir(t)
		if err := os.Remove(filepath.Join(dir, "de", "access-failure@1.5.md")); err != nil {
			t.Fatal(err)
		}
		_, err := knowledge.LoadDir(dir)
		if err == nil {
			t.Fatal("a corpus with access-failure 1.5 in English only loaded")
		}
		msg := err.Error()
		file := filepath.Join(dir, "en", "access-failure@1.5.md")
		if !strings.Contains(msg, file+":") || !strings.Contains(msg, ": versions: ") || !strings.Contains(msg, "de/access-failure@1.5.md") {
			t.Fatalf("error %q does not name %s, the rule and the missing de file", msg, file)
		}
		if n := strings.Count(msg, "access-failure@1.5.md:"); n != 1 {
			t.Errorf("reported %d times:\n%s", n, msg)
		}
	})
	t.Run("one version, two effective dates", func(t *testing.T) {
		dir := testutil.VersionedDir(t)
		file := filepath.Join(dir, "de", "access-failure@1.5.md")
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := testutil.ReplaceLine(string(src), "effective_date: ", "effective_date: 2027-01-05")
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = knowledge.LoadDir(dir)
		if err == nil {
			t.Fatal("a corpus whose languages give 1.5 different dates loaded")
		}
		msg := err.Error()
		if !strings.Contains(msg, file+":") || !strings.Contains(msg, "2027-01-05") || !strings.Contains(msg, "same effective date") {
			t.Fatalf("error %q does not name %s and the two dates", msg, file)
		}
		if n := strings.Count(msg, "access-failure@1.5.md:"); n != 1 {
			t.Errorf("reported %d times:\n%s", n, msg)
		}
	})
}

func TestAFileNamedLikeAVersionIsNeverSkipped(t *testing.T) {
	for _, name := range []string{"access-failure@1.6.MD", "access-failure@.md", "access-failure@v2.md", "access-failure.Md", "access-failure@1.6.txt"} {
		t.Run(name, func(t *testing.T) {
			dir := testutil.VersionedDir(t)
			if err := os.WriteFile(filepath.Join(dir, "en", name), []byte("---\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := knowledge.LoadDir(dir)
			if err == nil {
				t.Fatalf("%s was skipped without a word", name)
			}
			want := filepath.Join(dir, "en", name) + ": file-name: "
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not hold %q", err, want)
			}
		})
	}
	dir := testutil.VersionedDir(t)
	if err := os.WriteFile(filepath.Join(dir, "en", "notes.txt"), []byte("not a procedure"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := knowledge.LoadDir(dir); err != nil {
		t.Errorf("a file that does not look like a procedure was refused: %v", err)
	}
}
