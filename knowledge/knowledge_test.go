package knowledge

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestEmbeddedCorpusFollowsTheContract(t *testing.T) {
	c, err := Embedded()
	if err != nil {
		t.Fatalf("embedded corpus: %v", err)
	}
	want := []string{"access-failure", "accident-procedure", "breakdown-assistance", "damage-procedure",
		"ev-charging", "fines-and-parking", "incident-escalation", "lost-and-found", "theft-and-misuse",
		"vehicle-cleaning", "vehicle-relocation"}
	categories := map[string]string{"damage-procedure": "damage", "accident-procedure": "safety",
		"breakdown-assistance": "assistance", "ev-charging": "charging", "vehicle-cleaning": "vehicle-care",
		"lost-and-found": "customer-service", "theft-and-misuse": "security", "fines-and-parking": "compliance",
		"access-failure": "access", "vehicle-relocation": "operations", "incident-escalation": "operations"}
	for _, lang := range Languages {
		docs := c.Documents(lang)
		if len(docs) != len(want) {
			t.Fatalf("%s: %d procedures, want %d", lang, len(docs), len(want))
		}
		for i, d := range docs {
			if d.ID != want[i] {
				t.Errorf("%s: procedure %d is %q, want %q", lang, i, d.ID, want[i])
			}
			if d.Category != categories[d.ID] {
				t.Errorf("%s/%s: category %q, want %q", lang, d.ID, d.Category, categories[d.ID])
			}
			if d.Path != "procedures/"+lang+"/"+d.ID+".md" {
				t.Errorf("path %q", d.Path)
			}
			other := c.Document(otherLang(lang), d.ID)
			if other.Version != d.Version || other.EffectiveDate != d.EffectiveDate {
				t.Errorf("%s: version/effective date differ between languages", d.ID)
			}
			if other.Title == d.Title {
				t.Errorf("%s: the %s title equals the %s one; the German files are written in German", d.ID, lang, otherLang(lang))
			}
		}
	}
	d := c.Document("en", "damage-procedure")
	if d.Title != "Damage handling procedure" || c.Document("de", "damage-procedure").Title != "Schadensbearbeitung" {
		t.Errorf("titles do not follow docs/corpus.md: %q", d.Title)
	}
	s := &d.Sections[1]
	if got := d.Source(s); !strings.HasPrefix(got, "procedures/en/damage-procedure.md#2-") {
		t.Errorf("source %q", got)
	}
	if got := d.Breadcrumb(s); got != d.Title+" > "+s.Heading {
		t.Errorf("breadcrumb %q", got)
	}
}

func otherLang(l string) string {
	if l == "en" {
		return "de"
	}
	return "en"
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"2. Immediate actions":            "2-immediate-actions",
		"4. Escalation & follow-up":       "4-escalation--follow-up",
		"2. Sofortmaßnahmen":              "2-sofortmaßnahmen",
		"3. Fernzugriff über die Konsole": "3-fernzugriff-über-die-konsole",
	} {
		if got := Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// good is a valid procedure; each rule case below breaks it in one place.
func good() string {
	para := strings.Repeat("The operations agent checks the vehicle status in the Fleet Ops console and records it. ", 7)
	return `---
id: test-procedure
title: Test procedure
version: "1.0"
effective_date: 2026-03-01
language: en
category: testing
keywords: [alpha, beta, gamma, delta, epsilon]
entities: [vehicle, console]
owner: fleet-operations
---
# Test procedure

## 1. Scope
` + para + `
## 2. Immediate actions
` + para + `
## 3. Documentation
` + para + `
## 4. Escalation
` + para + `
`
}

func TestParseAcceptsAValidFile(t *testing.T) {
	d, err := Parse("procedures/en/test-procedure.md", []byte(good()))
	if err != nil {
		t.Fatalf("valid file rejected: %v", err)
	}
	if len(d.Sections) != 4 || d.Sections[1].Heading != "2. Immediate actions" || d.Sections[1].Anchor != "2-immediate-actions" {
		t.Fatalf("sections parsed wrongly: %+v", d.Sections)
	}
	if !strings.HasPrefix(d.Sections[0].Content, "The operations agent") {
		t.Errorf("content %q", d.Sections[0].Content)
	}
}

func TestEachRuleRejectsABadFile(t *testing.T) {
	longBody := strings.Repeat("word ", 950)
	cases := []struct {
		name, rule, file string
		edit             func(string) string
	}{
		{"no front matter", "front-matter", "", func(s string) string { return strings.TrimPrefix(s, "---\n") }},
		{"unclosed front matter", "front-matter", "", func(s string) string { return strings.Replace(s, "\n---\n#", "\n#", 1) }},
		{"invalid yaml", "front-matter", "", func(s string) string { return strings.Replace(s, "keywords: [", "keywords: [[", 1) }},
		{"unknown field", "front-matter", "", func(s string) string { return strings.Replace(s, "owner:", "author:", 1) }},
		{"bad id", "id", "", func(s string) string { return strings.Replace(s, "id: test-procedure", "id: Test_Procedure", 1) }},
		{"id differs from file", "id", "procedures/en/other-name.md", func(s string) string { return s }},
		{"missing title", "title", "", func(s string) string { return strings.Replace(s, "title: Test procedure", "title: \"\"", 1) }},
		{"unquoted version", "version", "", func(s string) string { return strings.Replace(s, `version: "1.0"`, "version: 1.0", 1) }},
		{"version not dotted numbers", "version", "", func(s string) string { return strings.Replace(s, `version: "1.0"`, `version: "v1-beta"`, 1) }},
		{"bad date", "effective_date", "", func(s string) string { return strings.Replace(s, "2026-03-01", "2026-13-40", 1) }},
		{"language differs from folder", "language", "", func(s string) string { return strings.Replace(s, "language: en", "language: de", 1) }},
		{"bad category", "category", "", func(s string) string { return strings.Replace(s, "category: testing", "category: Test Cat", 1) }},
		{"too few keywords", "keywords", "", func(s string) string {
			return strings.Replace(s, "[alpha, beta, gamma, delta, epsilon]", "[alpha, beta]", 1)
		}},
		{"too many keywords", "keywords", "", func(s string) string {
			many := make([]string, 31)
			for i := range many {
				many[i] = "k" + strings.Repeat("x", i+1)
			}
			return strings.Replace(s, "[alpha, beta, gamma, delta, epsilon]", "["+strings.Join(many, ", ")+"]", 1)
		}},
		{"duplicate keyword", "keywords", "", func(s string) string { return strings.Replace(s, "epsilon]", "alpha]", 1) }},
		{"no entities", "entities", "", func(s string) string { return strings.Replace(s, "[vehicle, console]", "[]", 1) }},
		{"heading differs from title", "heading", "", func(s string) string { return strings.Replace(s, "# Test procedure", "# Another title", 1) }},
		{"too few sections", "sections", "", func(s string) string {
			return strings.Replace(s, "## 4. Escalation\n", "", 1)
		}},
		{"sections out of order", "sections", "", func(s string) string { return strings.Replace(s, "## 3. Documentation", "## 5. Documentation", 1) }},
		{"unnumbered section", "sections", "", func(s string) string { return strings.Replace(s, "## 3. Documentation", "## Documentation", 1) }},
		{"empty section", "sections", "", func(s string) string {
			i := strings.Index(s, "## 2. Immediate actions\n") + len("## 2. Immediate actions\n")
			j := strings.Index(s, "## 3.")
			return s[:i] + s[j:]
		}},
		{"too short", "length", "", func(s string) string {
			return strings.ReplaceAll(s, strings.Repeat("The operations agent checks the vehicle status in the Fleet Ops console and records it. ", 6), "")
		}},
		{"too long", "length", "", func(s string) string { return s + longBody }},
		{"email address", "personal-data", "", func(s string) string { return s + "Write to fleet.ops@example.com.\n" }},
		{"phone number", "personal-data", "", func(s string) string { return s + "Call +49 30 1234567 at once.\n" }},
		{"licence plate", "personal-data", "", func(s string) string { return s + "The car B-XY 1234 was moved.\n" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "procedures/en/test-procedure.md"
			}
			_, err := Parse(file, []byte(tc.edit(good())))
			if err == nil {
				t.Fatal("accepted a file that breaks the rule")
			}
			var re *RuleError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a RuleError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, file) || !strings.Contains(msg, `rule "`+tc.rule+`"`) {
				t.Errorf("message %q does not name the file %s and the rule %q", msg, file, tc.rule)
			}
		})
	}
}

func TestInternalExtensionsAreNotPersonalData(t *testing.T) {
	s := good() + "Call Fleet Ops Control on ext. 4400 or the damage desk on Durchwahl 4410; call 112 in an emergency.\n"
	if _, err := Parse("procedures/en/test-procedure.md", []byte(s)); err != nil {
		t.Fatalf("extensions rejected: %v", err)
	}
}

func TestLoadChecksAcrossLanguages(t *testing.T) {
	en := good()
	de := strings.Replace(good(), "language: en", "language: de", 1)
	t.Run("missing in one language", func(t *testing.T) {
		fsys := fstest.MapFS{
			"en/test-procedure.md":  {Data: []byte(en)},
			"de/other-procedure.md": {Data: []byte(strings.ReplaceAll(de, "test-procedure", "other-procedure"))},
		}
		_, err := Load(fsys)
		if err == nil || !strings.Contains(err.Error(), `rule "languages"`) || !strings.Contains(err.Error(), "procedures/de/test-procedure.md") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("category differs", func(t *testing.T) {
		fsys := fstest.MapFS{
			"en/test-procedure.md": {Data: []byte(en)},
			"de/test-procedure.md": {Data: []byte(strings.Replace(de, "category: testing", "category: other", 1))},
		}
		_, err := Load(fsys)
		if err == nil || !strings.Contains(err.Error(), `rule "category"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unsupported language folder", func(t *testing.T) {
		fsys := fstest.MapFS{
			"en/test-procedure.md": {Data: []byte(en)},
			"de/test-procedure.md": {Data: []byte(de)},
			"fr/test-procedure.md": {Data: []byte(en)},
		}
		_, err := Load(fsys)
		if err == nil || !strings.Contains(err.Error(), "procedures/fr") || !strings.Contains(err.Error(), `rule "language"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("every broken file is reported", func(t *testing.T) {
		fsys := fstest.MapFS{
			"en/test-procedure.md": {Data: []byte(strings.Replace(en, `"1.0"`, "1.0", 1))},
			"de/test-procedure.md": {Data: []byte(strings.Replace(de, "2026-03-01", "soon", 1))},
		}
		_, err := Load(fsys)
		if err == nil || !strings.Contains(err.Error(), "procedures/en/test-procedure.md") || !strings.Contains(err.Error(), "procedures/de/test-procedure.md") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLoadDirReadsAFolder(t *testing.T) {
	dir := t.TempDir()
	for _, lang := range Languages {
		if err := os.MkdirAll(filepath.Join(dir, lang), 0o755); err != nil {
			t.Fatal(err)
		}
		body := strings.Replace(good(), "language: en", "language: "+lang, 1)
		if err := os.WriteFile(filepath.Join(dir, lang, "test-procedure.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Document("de", "test-procedure"); d == nil || d.Language != "de" {
		t.Fatalf("document not loaded: %+v", d)
	}
	if _, err := LoadDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing folder loaded")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good()))
	f.Add([]byte("---\nid: x\n---\n# x\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := Parse("procedures/en/test-procedure.md", raw)
		if err == nil && (d == nil || len(d.Sections) < minSections) {
			t.Fatalf("accepted a document without its sections: %+v", d)
		}
	})
}

// TestEmbeddedCorpusPassesEveryRule runs every rule, the personal-data scan included, on the
// embedded files: Embedded skips that scan at start-up because this test has run it.
func TestEmbeddedCorpusPassesEveryRule(t *testing.T) {
	sub, err := fs.Sub(embedded, "procedures")
	if err != nil {
		t.Fatal(err)
	}
	full, err := Load(sub)
	if err != nil {
		t.Fatalf("the embedded corpus breaks a rule: %v", err)
	}
	fast, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range Languages {
		if len(full.Documents(lang)) != len(fast.Documents(lang)) || len(full.Documents(lang)) == 0 {
			t.Errorf("%s: %d documents with every rule, %d from Embedded", lang, len(full.Documents(lang)), len(fast.Documents(lang)))
		}
	}
	// The scan does run in Load: a phone number in an embedded file's copy is found.
	raw, _ := fs.ReadFile(sub, "en/damage-procedure.md")
	if _, err := Parse("procedures/en/damage-procedure.md", append(raw, []byte("\nCall +49 170 1234567.\n")...)); err == nil ||
		!strings.Contains(err.Error(), "personal-data") {
		t.Errorf("Parse did not scan for personal data: %v", err)
	}
}

func TestValidSlugKeepsItsLimits(t *testing.T) {
	for _, tc := range []struct {
		s      string
		lo, hi int
		want   bool
	}{
		{"ab", 3, 64, false},
		{"abc", 3, 64, true},
		{strings.Repeat("a", 64), 3, 64, true},
		{strings.Repeat("a", 65), 3, 64, false},
		{"Abc", 3, 64, false},
		{"a_b", 2, 64, false},
	} {
		if got := validSlug(idPattern, tc.s, tc.lo, tc.hi); got != tc.want {
			t.Errorf("%q in %d..%d: %v, want %v", tc.s, tc.lo, tc.hi, got, tc.want)
		}
	}
}

// BenchmarkEmbeddedFingerprint measures what every cold start pays to compare the embedded files
// with the fingerprint of the embedded prebuilt index: reading and hashing every procedure and
// synonym file (Restore, without documents).
func BenchmarkEmbeddedFingerprint(b *testing.B) {
	c, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	procs, syns, err := EmbeddedSources()
	if err != nil {
		b.Fatal(err)
	}
	want := c.Fingerprint()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Restore(nil, procs, syns, want, false); err != nil {
			b.Fatal(err)
		}
	}
}
