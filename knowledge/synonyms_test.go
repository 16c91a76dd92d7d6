package knowledge

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func TestEmbeddedSynonymsLoad(t *testing.T) {
	c, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range Languages {
		files := map[string]int{}
		for _, r := range c.Synonyms(lang).Rules() {
			files[r.Source[:strings.LastIndexByte(r.Source, ':')]]++
		}
		if files[SynonymsDir+"/"+lang+"/operators.txt"] < 80 {
			t.Errorf("%s: %d curated rules, want at least 80 (%v)", lang, files[SynonymsDir+"/"+lang+"/operators.txt"], files)
		}
		t.Logf("%s: %v", lang, files)
	}
	if c.Synonyms("fr") == nil || c.Synonyms("fr").Len() != 0 {
		t.Error("an unknown language has synonyms")
	}
}

// TestEverySynonymFileHasAHeader checks that each file says where its rules come from and under
// which licence.
func TestEverySynonymFileHasAHeader(t *testing.T) {
	err := fs.WalkDir(embedded, SynonymsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(embedded, p)
		if err != nil {
			return err
		}
		head := string(raw[:min(len(raw), 4000)])
		for _, want := range []string{"# Source:", "# Licence:"} {
			if !strings.Contains(head, want) {
				t.Errorf("%s: no %q line in the header", p, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// corpusStems is every token of a language's procedures, folded and stemmed, the way the
// lexical index analyses them.
func corpusStems(c *Corpus, lang string) (map[string]bool, []string) {
	a := textproc.New(lang)
	stems := map[string]bool{}
	var texts []string
	for _, d := range c.Documents(lang) {
		texts = append(texts, d.Title, strings.Join(d.Keywords, " "), strings.Join(d.Entities, " "))
		for _, s := range d.Sections {
			texts = append(texts, s.Heading, s.Content)
		}
	}
	for _, t := range texts {
		for _, tok := range a.Tokens(t) {
			stems[a.Stem(tok)] = true
		}
	}
	return stems, texts
}

// TestCuratedSynonymsMapOntoTheCorpus checks that every term a curated rule maps onto (the right
// of "=>", every term of an equivalence) is made of words of that language's procedures, so that
// a typo in a curated rule fails here rather than silently matching nothing.
func TestCuratedSynonymsMapOntoTheCorpus(t *testing.T) {
	c, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range Languages {
		a := textproc.New(lang)
		stems, _ := corpusStems(c, lang)
		checked := 0
		for _, r := range c.Synonyms(lang).Rules() {
			if !strings.HasPrefix(r.Source, SynonymsDir+"/"+lang+"/operators.txt:") {
				continue
			}
			targets := r.Targets
			if !r.Mapping() {
				targets = r.Terms
			}
			for _, term := range targets {
				for _, tok := range a.Tokens(term) {
					if !stems[a.Stem(tok)] {
						t.Errorf("%s: %q: %q (stem %q) is not a word of the %s procedures", r.Source, term, tok, a.Stem(tok), lang)
					}
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("%s: no curated rule checked", lang)
		}
	}
}

// TestGeneratedSynonymsMapOntoTheCorpus checks the same for the generated files, whose targets
// the generator took from the corpus: it fails when a procedure loses a word that a generated
// rule needs, and then `make synonyms` writes the files again.
func TestGeneratedSynonymsMapOntoTheCorpus(t *testing.T) {
	c, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range Languages {
		a := textproc.New(lang)
		stems, _ := corpusStems(c, lang)
		for _, r := range c.Synonyms(lang).Rules() {
			if strings.HasPrefix(r.Source, SynonymsDir+"/"+lang+"/operators.txt:") || !r.Mapping() {
				continue
			}
			for _, term := range r.Targets {
				for _, tok := range a.Tokens(term) {
					if !stems[a.Stem(tok)] {
						t.Errorf("%s: %q is not a word of the %s procedures", r.Source, term, lang)
					}
				}
			}
		}
	}
}

// TestOperatorWordsReachTheProcedures shows the path an operator's word takes: the German
// compound splitter, built from the procedures plus the synonyms' vocabulary, splits
// "Putzrechnung" and "Stromtanke" into words the rules know; the rules then map every word, or
// its parts, onto words of the procedures.
func TestOperatorWordsReachTheProcedures(t *testing.T) {
	c, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	a := textproc.New("de")
	stems, texts := corpusStems(c, "de")
	m := c.Synonyms("de").Compile(a.Tokens)
	split := textproc.NewSplitter(a, append(texts, m.Vocabulary()...)...)

	// reach returns the stems of the procedures' words that tokens expand to.
	reach := func(tokens []string) []string {
		var out []string
		for _, e := range m.Expand(tokens, nil, nil) {
			for _, tok := range e.Tokens {
				if s := a.Stem(tok); stems[s] && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		word  string
		parts []string // the splitter's parts, when the word is a compound
		want  []string // some of the stems reached, from the word or from its parts
	}{
		{"Handy", nil, []string{a.Stem("smartphone")}},
		{"Karre", nil, []string{a.Stem("fahrzeug"), a.Stem("auto")}},
		{"E-Flitzer", nil, []string{a.Stem("elektrofahrzeug")}},
		{"Stromtanke", []string{"strom", "tanke"}, []string{a.Stem("ladesäule"), a.Stem("akku"), a.Stem("tankstelle")}},
		{"Putzrechnung", []string{"putz", "rechnung"}, []string{a.Stem("reinigungsgebühr"), a.Stem("reinigung"), a.Stem("gebühr")}},
		{"Knöllchen", nil, []string{a.Stem("strafzettel")}},
		{"Blitzer", nil, []string{a.Stem("radarfalle")}},
	} {
		toks := a.Tokens(tc.word)
		got := reach(toks)
		if len(toks) == 1 {
			parts, complete := split.Split(toks[0])
			if tc.parts != nil && (!complete || !slices.Equal(parts, tc.parts)) {
				t.Errorf("%s: split into %q (complete %v), want %q", tc.word, parts, complete, tc.parts)
			}
			for _, p := range parts {
				for _, s := range reach([]string{p}) {
					if !slices.Contains(got, s) {
						got = append(got, s)
					}
				}
			}
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s (tokens %q): reaches %q, want %q among them", tc.word, toks, got, w)
			}
		}
	}
}

func TestLoadReadsSynonymFiles(t *testing.T) {
	en := good()
	de := strings.Replace(good(), "language: en", "language: de", 1)
	corpus := func(extra map[string]string) fstest.MapFS {
		fsys := fstest.MapFS{
			"en/test-procedure.md": {Data: []byte(en)},
			"de/test-procedure.md": {Data: []byte(de)},
		}
		for name, data := range extra {
			fsys[name] = &fstest.MapFile{Data: []byte(data)}
		}
		return fsys
	}
	t.Run("files in name order, per language", func(t *testing.T) {
		c, err := Load(corpus(map[string]string{
			"synonyms/de/operators.txt": "Karre => Fahrzeug\n",
			"synonyms/de/extra.txt":     "# nothing but a comment\nKiste, Karre\n",
			"synonyms/de/README.md":     "not a synonym file",
			"synonyms/en/operators.txt": "motor => vehicle\n",
		}))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range c.Synonyms("de").Rules() {
			got = append(got, r.Source+" "+r.String())
		}
		want := []string{"synonyms/de/extra.txt:2 Kiste, Karre", "synonyms/de/operators.txt:1 Karre => Fahrzeug"}
		if !slices.Equal(got, want) {
			t.Errorf("de rules %q, want %q", got, want)
		}
		if c.Synonyms("en").Len() != 1 {
			t.Errorf("en: %d rules", c.Synonyms("en").Len())
		}
	})
	t.Run("uncovered topics are kept apart from the synonyms", func(t *testing.T) {
		c, err := Load(corpus(map[string]string{
			"synonyms/en/operators.txt": "motor => vehicle\n",
			"synonyms/en/uncovered.txt": "# topics\nper minute, tariff => pricing\nsalary => jobs\n",
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Synonyms("en").Rules(); len(got) != 1 || got[0].String() != "motor => vehicle" {
			t.Errorf("synonyms %v: an uncovered topic must never expand a question", got)
		}
		var got []string
		for _, r := range c.Uncovered("en").Rules() {
			got = append(got, r.Source+" "+r.String())
		}
		want := []string{"synonyms/en/uncovered.txt:2 per minute, tariff => pricing", "synonyms/en/uncovered.txt:3 salary => jobs"}
		if !slices.Equal(got, want) {
			t.Errorf("uncovered %q, want %q", got, want)
		}
		if c.Uncovered("de") == nil || c.Uncovered("de").Len() != 0 {
			t.Error("a language without the file has uncovered topics")
		}
	})
	t.Run("an uncovered topic's rule must map onto one topic name", func(t *testing.T) {
		_, err := Load(corpus(map[string]string{
			"synonyms/en/uncovered.txt": "# topics\nsalary, wage\nper minute => pricing, tariffs\nbonus => Jobs\nbudget => business\n",
		}))
		for _, want := range []string{
			`synonyms/en/uncovered.txt:2: uncovered: an uncovered topic's rule maps terms onto the topic`,
			`synonyms/en/uncovered.txt:3: uncovered: the topic must be one name of lower-case letters and hyphens, not "pricing, tariffs"`,
			`synonyms/en/uncovered.txt:4: uncovered: the topic must be one name`,
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v lacks %q", err, want)
			}
		}
		if err != nil && strings.Contains(err.Error(), ":5:") {
			t.Errorf("a good rule reported: %v", err)
		}
	})
	t.Run("no synonyms folder", func(t *testing.T) {
		c, err := Load(corpus(nil))
		if err != nil || c.Synonyms("de").Len() != 0 {
			t.Fatalf("%v, %d rules", err, c.Synonyms("de").Len())
		}
	})
	t.Run("a bad line is reported with the procedures' errors", func(t *testing.T) {
		fsys := corpus(map[string]string{
			"synonyms/en/operators.txt": "# header\nphone died, => battery\n",
			"synonyms/fr/operators.txt": "a, b\n",
		})
		fsys["de/test-procedure.md"] = &fstest.MapFile{Data: []byte(strings.Replace(de, "2026-03-01", "soon", 1))}
		_, err := Load(fsys)
		for _, want := range []string{`synonyms/en/operators.txt:2: synonyms: empty term before "=>"`, "synonyms/fr: language: ", "de/test-procedure.md:5: effective_date: "} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v lacks %q", err, want)
			}
		}
	})
}

func TestLoadDirReadsSynonymsWhenPresent(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, lang := range Languages {
		write(lang+"/test-procedure.md", strings.Replace(good(), "language: en", "language: "+lang, 1))
	}
	c, err := LoadDir(dir)
	if err != nil || c.Synonyms("de").Len() != 0 {
		t.Fatalf("without synonyms: %v, %d rules", err, c.Synonyms("de").Len())
	}
	write("synonyms/de/operators.txt", "Handy, Smartphone\n")
	if c, err = LoadDir(dir); err != nil || c.Synonyms("de").Len() != 1 {
		t.Fatalf("with synonyms: %v", err)
	}
	write("synonyms/de/operators.txt", "Handy\n")
	_, err = LoadDir(dir)
	var re *RuleError
	if want := filepath.Join(dir, "synonyms", "de", "operators.txt") + ":1: synonyms: "; err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &re) {
		t.Fatalf("bad file: %v", err)
	}
}
