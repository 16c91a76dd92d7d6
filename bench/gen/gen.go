// Package gen writes synthetic corpora of a chosen size for the benchmarks, in the layout
// knowledge.LoadDir reads (<dir>/<language>/<id>.md and <dir>/synonyms/<language>/*.txt).
//
// A corpus of n procedures holds n/2 ids, each in English and German, as the corpus rules
// require. The embedded procedures (11 ids) are always written unchanged, so that every
// evaluation question keeps its answer; the embedded synonym rules are written back as
// synonym files of the same names. The other ids are distractors, each derived from one embedded
// procedure (round robin) in both languages:
//
//   - Every content word of the title, keywords and entities (four letters or more, not a stop
//     word, not an acronym) and a share of the body's content words, drawn per distractor
//     between 50 % and 90 % of its distinct words, are replaced by words of a synthetic
//     vocabulary. The replacement is one-to-one within a distractor and kept through the whole
//     file, so a word that recurs in the source recurs in the distractor, and the words kept
//     are what makes it a plausible near miss for the questions about its source.
//   - The synthetic vocabulary of each language has 600·g^0.6 words for g distractor ids (about
//     9,000 words at 220 procedures, 100,000 at 10,000), drawn with Zipf–Mandelbrot frequencies
//     (rank r weighs 1/(r+2.7)), so the corpus's vocabulary grows with its size as a real
//     corpus's does (Heaps' law) instead of repeating the same words. Words are built from
//     syllables of each language's shape (German with umlauts, noun suffixes and compounds of
//     two shorter vocabulary words, capitalised where the source word is); no synthetic word is
//     a word of the embedded procedures or a stop word.
//   - There is one new category per 40 distractor ids; a distractor keeps its source's category
//     with probability 0.4 and otherwise takes a new one.
//   - Ids are the slug of the English title's first words and a serial number, unique.
//
// The section structure (headings, numbering, lists, lengths, numbers and time limits) is the
// source's. Everything is derived from the seed: the same n and seed write the same bytes.
package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Sizes are the corpus sizes (procedures, both languages) the benchmarks compare.
var Sizes = []int{22, 220, 2200, 10000}

// DefaultSeed is the seed the benchmarks use.
const DefaultSeed = 20260301

// Stats describes a written corpus.
type Stats struct {
	Procedures    int            // files written, both languages
	Generated     int            // distractor ids (each in both languages)
	Categories    int            // distinct categories
	Vocabulary    map[string]int // synthetic vocabulary size per language
	DistinctWords map[string]int // distinct lower-cased words of the written files per language
}

// Write writes a corpus of n procedures (n/2 ids in each language) into dir, which must not
// hold another corpus. n must be even and at least the embedded corpus's size.
func Write(dir string, n int, seed uint64) (Stats, error) {
	base, err := knowledge.Embedded()
	if err != nil {
		return Stats{}, err
	}
	procs := base.Documents("en")
	if n%2 != 0 || n/2 < len(procs) {
		return Stats{}, fmt.Errorf("corpus size %d: want an even number of at least %d", n, 2*len(procs))
	}
	g := n/2 - len(procs)
	st := Stats{Procedures: n, Generated: g, Vocabulary: map[string]int{}, DistinctWords: map[string]int{}}
	for _, lang := range knowledge.Languages {
		if err := os.MkdirAll(filepath.Join(dir, lang), 0o755); err != nil {
			return st, err
		}
		for _, d := range base.Documents(lang) {
			if err := os.WriteFile(filepath.Join(dir, lang, d.ID+".md"), d.Raw, 0o644); err != nil {
				return st, err
			}
		}
		if err := writeSynonyms(dir, lang, base.Synonyms(lang)); err != nil {
			return st, err
		}
	}

	known := realWords(base)
	vocab := map[string]*vocabulary{}
	for i, lang := range knowledge.Languages {
		vocab[lang] = newVocabulary(lang, vocabSize(g), known, rand.New(rand.NewPCG(seed, uint64(i+1))))
		st.Vocabulary[lang] = len(vocab[lang].words)
	}
	cats := categories(g, known, rand.New(rand.NewPCG(seed, 100)))
	catSet := map[string]bool{}
	for _, d := range procs {
		catSet[d.Category] = true
	}

	for i := range g {
		src := procs[i%len(procs)].ID
		r := rand.New(rand.NewPCG(seed, uint64(1000+i)))
		cat := base.Document("en", src).Category
		if len(cats) > 0 && r.Float64() >= 0.4 {
			cat = cats[r.IntN(len(cats))]
		}
		catSet[cat] = true
		share := 0.5 + 0.4*r.Float64()
		docs := map[string]*knowledge.Document{}
		for li, lang := range knowledge.Languages {
			dr := rand.New(rand.NewPCG(seed^uint64(li+1)<<40, uint64(1000+i)))
			docs[lang] = derive(base.Document(lang, src), vocab[lang], share, dr)
			docs[lang].Category = cat
		}
		id := slug(docs["en"].Title, i)
		for _, lang := range knowledge.Languages {
			d := docs[lang]
			d.ID = id
			if err := os.WriteFile(filepath.Join(dir, lang, id+".md"), render(d), 0o644); err != nil {
				return st, err
			}
		}
	}
	st.Categories = len(catSet)
	for _, lang := range knowledge.Languages {
		n, err := distinctWords(filepath.Join(dir, lang))
		if err != nil {
			return st, err
		}
		st.DistinctWords[lang] = n
	}
	return st, nil
}

// vocabSize is the synthetic vocabulary of one language for g distractor ids.
func vocabSize(g int) int {
	if g == 0 {
		return 0
	}
	return int(600 * math.Pow(float64(g), 0.6))
}

// writeSynonyms writes a language's synonym rules back into files named as the embedded ones.
func writeSynonyms(dir, lang string, set *synonyms.Set) error {
	files := map[string][]string{}
	var order []string
	for _, r := range set.Rules() {
		name := r.Source
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[:i]
		}
		name = filepath.Base(name)
		if files[name] == nil {
			order = append(order, name)
		}
		files[name] = append(files[name], r.String())
	}
	if len(order) == 0 {
		return nil
	}
	sdir := filepath.Join(dir, knowledge.SynonymsDir, lang)
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return err
	}
	for _, name := range order {
		body := "# The embedded rules of " + name + ", written back for a generated corpus.\n" + strings.Join(files[name], "\n") + "\n"
		if err := os.WriteFile(filepath.Join(sdir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// realWords is every lower-cased word of the embedded procedures, both languages, so that no
// synthetic word collides with one.
func realWords(c *knowledge.Corpus) map[string]bool {
	known := map[string]bool{}
	for _, lang := range knowledge.Languages {
		for _, d := range c.Documents(lang) {
			eachWord(string(d.Raw), func(w string) { known[strings.ToLower(w)] = true })
		}
	}
	return known
}

// eachWord calls f with every maximal run of letters in s.
func eachWord(s string, f func(string)) {
	eachWordAt(s, func(start, end int) { f(s[start:end]) })
}

// distinctWords counts the distinct lower-cased words of the files of one folder.
func distinctWords(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	seen := map[string]struct{}{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, err
		}
		eachWord(string(raw), func(w string) { seen[strings.ToLower(w)] = struct{}{} })
	}
	return len(seen), nil
}

// categories returns the new category slugs for g distractor ids: one per 40, each two
// English-shaped words (ASCII, as a slug must be).
func categories(g int, known map[string]bool, r *rand.Rand) []string {
	n := (g + 39) / 40
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		c := syllableWord(r, shapes["en"], 1+r.IntN(2)) + "-" + syllableWord(r, shapes["en"], 1+r.IntN(2))
		if seen[c] || known[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out
}

// slug is a distractor's id: its English title's first three words of four letters or more and
// a serial number.
func slug(title string, i int) string {
	var parts []string
	eachWord(strings.ToLower(title), func(w string) {
		if len(parts) < 3 && len(w) >= 4 && isASCIIWord(w) {
			parts = append(parts, w)
		}
	})
	s := strings.Join(parts, "-")
	if len(s) > 48 {
		s = s[:48]
	}
	return strings.Trim(s+fmt.Sprintf("-%05d", i), "-")
}

func isASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

// derive returns a distractor of src: the words of its front matter and share of its body's
// distinct content words replaced, one-to-one, by synthetic words drawn from v.
func derive(src *knowledge.Document, v *vocabulary, share float64, r *rand.Rand) *knowledge.Document {
	a := textproc.New(src.Language)
	content := func(w string) bool {
		if utf8.RuneCountInString(w) < 4 {
			return false
		}
		for i, c := range w {
			if i > 0 && unicode.IsUpper(c) {
				return false // an acronym or a product name such as "SoC"
			}
		}
		toks := a.Tokens(w)
		return len(toks) == 1 && !a.IsStop(toks[0])
	}
	repl := map[string]string{} // lower-cased source word -> synthetic word
	used := map[string]bool{}
	pick := func(key string) {
		if _, ok := repl[key]; ok {
			return
		}
		w := v.draw(r, used)
		used[w] = true
		repl[key] = w
	}
	front := append([]string{src.Title}, src.Keywords...)
	front = append(front, src.Entities...)
	for _, t := range front {
		eachWord(t, func(w string) {
			if content(w) {
				pick(strings.ToLower(w))
			}
		})
	}
	decided := map[string]bool{}
	for _, s := range src.Sections {
		eachWord(s.Heading+"\n"+s.Content, func(w string) {
			key := strings.ToLower(w)
			if !content(w) || decided[key] {
				return
			}
			decided[key] = true
			if r.Float64() < share {
				pick(key)
			}
		})
	}
	sub := func(s string) string { return substitute(s, repl) }
	d := &knowledge.Document{
		Title: sub(src.Title), Version: src.Version, EffectiveDate: src.EffectiveDate,
		Language: src.Language, Owner: src.Owner,
	}
	for _, k := range src.Keywords {
		d.Keywords = append(d.Keywords, sub(k))
	}
	for _, e := range src.Entities {
		d.Entities = append(d.Entities, sub(e))
	}
	for _, s := range src.Sections {
		d.Sections = append(d.Sections, knowledge.Section{Number: s.Number, Heading: sub(s.Heading), Content: sub(s.Content)})
	}
	return d
}

// substitute replaces the words of s found in repl (by their lower-cased form), keeping a
// capitalised word capitalised.
func substitute(s string, repl map[string]string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	last := 0
	eachWordAt(s, func(start, end int) {
		w := s[start:end]
		to, ok := repl[strings.ToLower(w)]
		if !ok {
			return
		}
		b.WriteString(s[last:start])
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
			to = capitalise(to)
		}
		b.WriteString(to)
		last = end
	})
	b.WriteString(s[last:])
	return b.String()
}

// eachWordAt calls f with the byte offsets of every maximal run of letters in s.
func eachWordAt(s string, f func(start, end int)) {
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsLetter(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			f(start, i)
			start = -1
		}
	}
	if start >= 0 {
		f(start, len(s))
	}
}

func capitalise(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}

// frontMatter is the written header, in the order and with the fields the corpus rules name.
type frontMatter struct {
	ID            string   `yaml:"id"`
	Title         string   `yaml:"title"`
	Version       string   `yaml:"version"`
	EffectiveDate string   `yaml:"effective_date"`
	Language      string   `yaml:"language"`
	Category      string   `yaml:"category"`
	Keywords      []string `yaml:"keywords,flow"`
	Entities      []string `yaml:"entities,flow"`
	Owner         string   `yaml:"owner,omitempty"`
}

// render writes a document as a procedure file.
func render(d *knowledge.Document) []byte {
	head, err := yaml.Marshal(frontMatter{
		ID: d.ID, Title: d.Title, Version: d.Version, EffectiveDate: d.EffectiveDate, Language: d.Language,
		Category: d.Category, Keywords: d.Keywords, Entities: d.Entities, Owner: d.Owner,
	})
	if err != nil {
		panic(err) // a struct of strings always marshals
	}
	var b strings.Builder
	b.WriteString("---\n")
	b.Write(head)
	b.WriteString("---\n# " + d.Title + "\n")
	for _, s := range d.Sections {
		b.WriteString("\n## " + s.Heading + "\n" + s.Content + "\n")
	}
	return []byte(b.String())
}

// vocabulary is a synthetic vocabulary with Zipf–Mandelbrot frequencies.
type vocabulary struct {
	words []string
	cdf   []float64 // cumulative weights, rank order
}

// shape is a language's syllable inventory.
type shape struct {
	onsets, nuclei, codas, suffixes []string
	suffixRate                      float64
	compoundRate                    float64 // share of words made of two earlier words
}

var shapes = map[string]shape{
	"en": {
		onsets:     []string{"b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "cl", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "sp", "st", "str", "th", "tr", "ch", "sk", "sl"},
		nuclei:     []string{"a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou", "ai", "ee", "oo", "y"},
		codas:      []string{"", "", "", "n", "r", "s", "t", "l", "nd", "st", "ck", "ng", "rt", "m", "x", "ld"},
		suffixes:   []string{"ing", "er", "ion", "ment", "al", "ness", "ure", "ive", "age", "ity", "ance", "or"},
		suffixRate: 0.35,
	},
	"de": {
		onsets:       []string{"b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "w", "z", "sch", "st", "sp", "kr", "br", "gr", "pf", "tr", "fr", "kl", "bl", "schw", "dr"},
		nuclei:       []string{"a", "e", "i", "o", "u", "ä", "ö", "ü", "ei", "au", "ie", "eu", "a", "e", "e", "i"},
		codas:        []string{"", "", "n", "r", "l", "t", "s", "ch", "ck", "ng", "nd", "rt", "tz", "st", "lt", "rn", "ff"},
		suffixes:     []string{"ung", "keit", "heit", "er", "en", "e", "lich", "schaft", "ling", "nis", "ig", "isch"},
		suffixRate:   0.4,
		compoundRate: 0.25,
	},
}

// newVocabulary builds n distinct words of lang's shape, none of them in known or a stop word.
func newVocabulary(lang string, n int, known map[string]bool, r *rand.Rand) *vocabulary {
	sh := shapes[lang]
	a := textproc.New(lang)
	v := &vocabulary{}
	seen := map[string]bool{}
	for len(v.words) < n {
		var w string
		if len(v.words) > 100 && r.Float64() < sh.compoundRate {
			// A compound of two earlier words, as German writes them ("Ladekabel").
			x, y := v.words[r.IntN(len(v.words))], v.words[r.IntN(len(v.words))]
			if utf8.RuneCountInString(x)+utf8.RuneCountInString(y) > 18 {
				continue
			}
			w = x + y
		} else {
			w = syllableWord(r, sh, syllables(r))
		}
		if utf8.RuneCountInString(w) < 4 || seen[w] || known[w] {
			continue
		}
		if toks := a.Tokens(w); len(toks) != 1 || a.IsStop(toks[0]) {
			continue
		}
		seen[w] = true
		v.words = append(v.words, w)
	}
	v.cdf = make([]float64, n)
	sum := 0.0
	for i := range n {
		sum += 1 / (float64(i+1) + 2.7)
		v.cdf[i] = sum
	}
	return v
}

// syllables is a word's number of syllables: one (30 %), two (50 %) or three (20 %).
func syllables(r *rand.Rand) int {
	switch x := r.Float64(); {
	case x < 0.3:
		return 1
	case x < 0.8:
		return 2
	}
	return 3
}

// syllableWord is a word of syllables syllables of shape sh, with a suffix at sh.suffixRate.
func syllableWord(r *rand.Rand, sh shape, syllables int) string {
	var b strings.Builder
	for range syllables {
		b.WriteString(sh.onsets[r.IntN(len(sh.onsets))])
		b.WriteString(sh.nuclei[r.IntN(len(sh.nuclei))])
		b.WriteString(sh.codas[r.IntN(len(sh.codas))])
	}
	if r.Float64() < sh.suffixRate {
		b.WriteString(sh.suffixes[r.IntN(len(sh.suffixes))])
	}
	return b.String()
}

// draw returns a word by its Zipf–Mandelbrot frequency that is not in used.
func (v *vocabulary) draw(r *rand.Rand, used map[string]bool) string {
	total := v.cdf[len(v.cdf)-1]
	for range 64 {
		i, _ := slices.BinarySearch(v.cdf, r.Float64()*total)
		if i >= len(v.words) {
			i = len(v.words) - 1
		}
		if w := v.words[i]; !used[w] {
			return w
		}
	}
	// A distractor uses a few hundred words; the vocabulary has thousands: the first unused
	// word from a random rank on always exists.
	for i := r.IntN(len(v.words)); ; i = (i + 1) % len(v.words) {
		if !used[v.words[i]] {
			return v.words[i]
		}
	}
}
