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

// TestEachRuleRejectsABadFile: each rule's fault in a file otherwise valid is reported alone, as
// "file:line: rule: message", at the line as the file counts it (the front matter's first key is
// line 2), in words a user knows (no Go type names), once.
func TestEachRuleRejectsABadFile(t *testing.T) {
	const f = "procedures/en/test-procedure.md"
	longBody := strings.Repeat("word ", 950)
	cases := []struct {
		name, file string
		edit       func(string) string
		want       []string // the whole error, one line a fault; "" stands for f
	}{
		{"no front matter", "", func(s string) string { return strings.TrimPrefix(s, "---\n") },
			[]string{":1: front-matter: the file must start with a YAML front matter block between two '---' lines"}},
		{"unclosed front matter", "", func(s string) string { return strings.Replace(s, "\n---\n#", "\n#", 1) },
			[]string{":1: front-matter: the file must start with a YAML front matter block between two '---' lines"}},
		{"invalid yaml", "", func(s string) string { return strings.Replace(s, "keywords: [", "keywords: [[", 1) },
			[]string{":8: front-matter: invalid YAML: did not find expected ',' or ']'"}},
		{"invalid yaml, scanner", "", func(s string) string {
			return strings.Replace(s, "owner: fleet-operations", "owner: fleet: operations", 1)
		},
			[]string{":10: front-matter: invalid YAML: mapping values are not allowed in this context"}},
		{"invalid yaml, a list item among the keys", "", func(s string) string { return strings.Replace(s, "id: test-procedure", "- test-procedure", 1) },
			[]string{":3: front-matter: invalid YAML: did not find expected '-' indicator"}},
		{"not a mapping", "", func(s string) string {
			return "---\n- a\n- b\n---\n" + s[strings.Index(s, "# Test"):]
		}, []string{":2: front-matter: the front matter must be \"key: value\" lines"}},
		{"unknown key", "", func(s string) string { return strings.Replace(s, "owner:", "author:", 1) },
			[]string{`:10: front-matter: unknown key "author"; the keys are id, title, version, effective_date, language, category, keywords, entities, owner`}},
		{"duplicate key", "", func(s string) string { return strings.Replace(s, "version:", "title: Another title\nversion:", 1) },
			[]string{`:4: front-matter: key "title" is given twice (first on line 3)`}},
		{"bad id", "", func(s string) string { return strings.Replace(s, "id: test-procedure", "id: Test_Procedure", 1) },
			[]string{`:2: id: id "Test_Procedure" must match ^[a-z0-9-]{3,64}$`}},
		{"id differs from file", "procedures/en/other-name.md", func(s string) string { return s },
			[]string{`:2: id: id "test-procedure" must equal the file name "other-name"`}},
		{"missing title", "", func(s string) string { return strings.Replace(s, "title: Test procedure", "title: \"\"", 1) },
			[]string{`:3: title: title is required`}},
		{"title is a list", "", func(s string) string {
			return strings.Replace(s, "title: Test procedure", "title: [Test, procedure]", 1)
		},
			[]string{`:3: title: title must be one value, not a list or a mapping`}},
		{"unquoted version", "", func(s string) string { return strings.Replace(s, `version: "1.0"`, "version: 1.0", 1) },
			[]string{`:4: version: version must be a quoted string such as "1.3", got a number`}},
		{"missing version", "", func(s string) string { return strings.Replace(s, "version: \"1.0\"\n", "", 1) },
			[]string{`:1: version: version must be a quoted string such as "1.3", got nothing`}},
		{"version not dotted numbers", "", func(s string) string { return strings.Replace(s, `version: "1.0"`, `version: "v1-beta"`, 1) },
			[]string{`:4: version: version "v1-beta" must be dotted numbers such as "1.3"`}},
		{"bad date", "", func(s string) string { return strings.Replace(s, "2026-03-01", "2026-13-40", 1) },
			[]string{`:5: effective_date: effective_date "2026-13-40" must be an ISO date (YYYY-MM-DD)`}},
		{"date as German text writes it", "", func(s string) string { return strings.Replace(s, "2026-03-01", "01.12.2026", 1) },
			[]string{`:5: effective_date: effective_date "01.12.2026" must be an ISO date (YYYY-MM-DD)`}},
		{"language differs from folder", "", func(s string) string { return strings.Replace(s, "language: en", "language: de", 1) },
			[]string{`:6: language: language "de" must match the folder "en"`}},
		{"bad category", "", func(s string) string { return strings.Replace(s, "category: testing", "category: Test Cat", 1) },
			[]string{`:7: category: category "Test Cat" must be a lowercase slug`}},
		{"too few keywords", "", func(s string) string {
			return strings.Replace(s, "[alpha, beta, gamma, delta, epsilon]", "[alpha, beta]", 1)
		}, []string{`:8: keywords: 2 keywords, want 5..30`}},
		{"too many keywords", "", func(s string) string {
			many := make([]string, 31)
			for i := range many {
				many[i] = "k" + strings.Repeat("x", i+1)
			}
			return strings.Replace(s, "[alpha, beta, gamma, delta, epsilon]", "["+strings.Join(many, ", ")+"]", 1)
		}, []string{`:8: keywords: 31 keywords, want 5..30`}},
		{"keywords not a list", "", func(s string) string {
			return strings.Replace(s, "[alpha, beta, gamma, delta, epsilon]", "alpha beta", 1)
		},
			[]string{`:8: keywords: keywords must be a list of phrases such as [a, b c]`}},
		{"keyword is a list", "", func(s string) string { return strings.Replace(s, "epsilon]", "[epsilon, zeta]]", 1) },
			[]string{`:8: keywords: each of the keywords must be a phrase, not a list or a mapping`}},
		{"duplicate keyword", "", func(s string) string { return strings.Replace(s, "epsilon]", "alpha]", 1) },
			[]string{`:8: keywords: duplicate entry "alpha"`}},
		{"blank keyword on its own line", "", func(s string) string {
			return strings.Replace(s, "keywords: [alpha, beta, gamma, delta, epsilon]", "keywords:\n  - alpha\n  - beta\n  - gamma\n  - delta\n  - epsilon\n  - \"\"", 1)
		}, []string{`:14: keywords: blank entry`}},
		{"no entities", "", func(s string) string { return strings.Replace(s, "[vehicle, console]", "[]", 1) },
			[]string{`:9: entities: at least one entity is required`}},
		{"heading differs from title", "", func(s string) string { return strings.Replace(s, "# Test procedure", "# Another title", 1) },
			[]string{`:12: heading: the body must start with the heading "# Test procedure"`}},
		{"no heading, no title", "", func(s string) string {
			return strings.Replace(strings.Replace(s, "# Test procedure\n", "", 1), "title: Test procedure\n", "", 1)
		}, []string{`:1: title: title is required`, `:12: heading: the body must start with a heading "# <title>"`}},
		{"too few sections", "", func(s string) string { return strings.Replace(s, "## 4. Escalation\n", "", 1) },
			[]string{`: sections: 3 numbered sections, want at least 4`}},
		{"sections out of order", "", func(s string) string { return strings.Replace(s, "## 3. Documentation", "## 5. Documentation", 1) },
			[]string{`:18: sections: section "5. Documentation" is numbered 5, want 3`}},
		{"unnumbered section", "", func(s string) string { return strings.Replace(s, "## 3. Documentation", "## Documentation", 1) },
			[]string{`:18: sections: heading "## Documentation" must read '## 3. Name'`}},
		{"empty section", "", func(s string) string {
			return strings.Replace(s, "## 4. Escalation\n", "## 4. Escalation\n\n## 5. Closing\n", 1)
		},
			[]string{`:20: sections: section "4. Escalation" has no content`}},
		{"text before the first section", "", func(s string) string {
			return strings.Replace(s, "# Test procedure\n", "# Test procedure\nAn introduction.\nOn two lines.\n", 1)
		}, []string{`:13: sections: text before the first numbered section: "An introduction."`}},
		{"too short", "", func(s string) string {
			return strings.ReplaceAll(s, strings.Repeat("The operations agent checks the vehicle status in the Fleet Ops console and records it. ", 6), "")
		}, []string{`: length: body has 76 words, want 400..900`}},
		{"too long", "", func(s string) string { return s + longBody },
			[]string{`: length: body has 1386 words, want 400..900`}},
		{"email address", "", func(s string) string { return s + "Write to fleet.ops@example.com.\n" },
			[]string{`:22: personal-data: e-mail address "fleet.ops@example.com"`}},
		{"phone number", "", func(s string) string { return s + "Call +49 30 1234567 at once.\n" },
			[]string{`:22: personal-data: phone-number-like digits "+49 30 1234567" (only internal extensions such as 'ext. 4410' are allowed)`}},
		{"licence plate", "", func(s string) string { return s + "The car B-XY 1234 was moved.\n" },
			[]string{`:22: personal-data: licence-plate-like text "B-XY 1234"`}},
		{"CRLF line ends count the same", "", func(s string) string {
			return strings.ReplaceAll(strings.Replace(s, "version:", "title: Another title\nversion:", 1), "\n", "\r\n")
		}, []string{`:4: front-matter: key "title" is given twice (first on line 3)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = f
			}
			_, err := Parse(file, []byte(tc.edit(good())))
			if err == nil {
				t.Fatal("accepted a file that breaks the rule")
			}
			var re *RuleError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a RuleError", err)
			}
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = file + w
			}
			if got := err.Error(); got != strings.Join(want, "\n") {
				t.Errorf("error\n%s\nwant\n%s", got, strings.Join(want, "\n"))
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

// TestLoadChecksAcrossLanguages: the rules across files and folders, each fault reported once at
// the path as the folder was given, and none that only follows from another.
func TestLoadChecksAcrossLanguages(t *testing.T) {
	en := good()
	de := strings.Replace(good(), "language: en", "language: de", 1)
	other := func(s string) string { return strings.ReplaceAll(s, "test-procedure", "other-procedure") }
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"missing in one language", map[string]string{"en/test-procedure.md": en, "de/other-procedure.md": other(de)},
			[]string{`en/other-procedure.md: languages: procedure "other-procedure" exists in another language but not in "en"`,
				`de/test-procedure.md: languages: procedure "test-procedure" exists in another language but not in "de"`}},
		{"category differs", map[string]string{"en/test-procedure.md": en, "de/test-procedure.md": strings.Replace(de, "category: testing", "category: other", 1)},
			[]string{`de/test-procedure.md:7: category: category "other" differs from "testing" used for test-procedure in another language`}},
		{"no procedures in a language", map[string]string{"en/test-procedure.md": en},
			[]string{`de: languages: no procedures for language "de"`}},
		{"unsupported language folder", map[string]string{"en/test-procedure.md": en, "de/test-procedure.md": de, "fr/test-procedure.md": en},
			[]string{`fr: language: folder "fr" is not a supported language: the corpus folder holds one folder per language (en, de) and optionally synonyms/`}},
		{"the parent of the corpus folder", map[string]string{"procedures/en/test-procedure.md": en, "procedures/de/test-procedure.md": de, "testdata/x.md": en},
			[]string{`procedures: language: this folder holds the language folders (en/, de/): use it as the corpus folder (KNOWLEDGE_DIR, index-build -dir), not its parent`}},
		{"every broken file is reported, and nothing that follows from it",
			map[string]string{"en/test-procedure.md": strings.Replace(en, `"1.0"`, "1.0", 1), "de/test-procedure.md": strings.Replace(de, "2026-03-01", "soon", 1),
				"en/other-procedure.md": other(strings.Replace(en, "title:", "title: x\ntitle:", 1)), "de/other-procedure.md": other(de)},
			[]string{`de/test-procedure.md:5: effective_date: effective_date "soon" must be an ISO date (YYYY-MM-DD)`,
				`en/other-procedure.md:4: front-matter: key "title" is given twice (first on line 3)`,
				`en/test-procedure.md:4: version: version must be a quoted string such as "1.3", got a number`}},
		{"a language whose only file is broken is not reported empty", map[string]string{"en/test-procedure.md": en, "de/test-procedure.md": strings.Replace(de, "owner:", "author:", 1)},
			[]string{`de/test-procedure.md:10: front-matter: unknown key "author"; the keys are id, title, version, effective_date, language, category, keywords, entities, owner`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			_, err := Load(fsys)
			if err == nil {
				t.Fatal("loaded")
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("error\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestErrorsNameTheFolderAsGiven: LoadDir's errors name the files under the folder as the user
// gave it, not as the corpus names them (procedures/<language>/...).
func TestErrorsNameTheFolderAsGiven(t *testing.T) {
	dir := t.TempDir()
	for _, lang := range Languages {
		if err := os.MkdirAll(filepath.Join(dir, lang), 0o755); err != nil {
			t.Fatal(err)
		}
		body := strings.Replace(good(), "language: en", "language: "+lang, 1)
		if lang == "en" {
			body = strings.Replace(body, "version:", "title: Again\nversion:", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, lang, "test-procedure.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadDir(dir)
	want := filepath.Join(dir, "en", "test-procedure.md") + `:4: front-matter: key "title" is given twice (first on line 3)`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
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
