// Package lexical is the analysed form of the corpus shared by the L0 keyword layer and the demo
// provider's BM25: per language, an interned vocabulary, the postings of every term over the
// section passages, and every document's front matter as term ids with an inverted index from a
// term to the documents whose front matter holds it. Every lookup structure is a flat array
// indexed by term, passage or document id, so that a query's cost follows the postings of its
// terms, not the size of the corpus. It is built once per cold start (or loaded from its
// prebuilt form, see Encode) and is read-only afterwards (a day's view of it, see view.go, makes
// each term's statistics on first use, in atomic cells), so it is safe for concurrent use.
package lexical

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// BM25 parameters: Lucene's defaults.
const (
	K1 = 1.2
	B  = 0.75
)

// Index holds one Lang per corpus language.
type Index struct {
	langs map[string]*Lang
}

// Term is an index term: its position in the language's sorted vocabulary.
type Term uint32

// Lang is the analysed corpus of one language.
type Lang struct {
	// Language is the language's code ("en", "de").
	Language string
	// Analyzer analyses questions: the index's analysis, plus synonyms and a compound splitter
	// that also knows the synonyms' words.
	Analyzer *textproc.Analyzer
	// Docs are the language's documents sorted by id, as Corpus.Documents returns them: in a
	// day's view of the index of every version, every version on file (InForce counts those in
	// force that day, and DocIndex finds a procedure's version in force; see view.go).
	Docs []*knowledge.Document
	// Passages are the sections of all documents, ordered by document id, then section number:
	// that order breaks score ties.
	Passages []Passage

	// Text is the index's own analysis, of passage text (Analyzer's without the synonyms).
	Text  *textproc.Analyzer
	terms termTable
	// uncovered returns the corpus's uncovered-topic rules of the language (see UncoveredRules).
	uncovered func() *synonyms.Set

	// The index's parts, one file each, each with its build, prebuilt form and check: the
	// passages' postings (postings.go), the documents' front-matter terms (front.go), their
	// phrases (phrases.go), and the passages' sentences (sentences.go).
	post  Postings
	front FrontMatter
	phr   PhraseIndex
	sent  SentenceIndex

	// passageCat is each passage's document category as an index into categoryIDs' keys,
	// derived from Docs (see docStatistics): a filtered search reads it for every passage it
	// scored.
	passageCat  []uint32
	categoryIDs map[string]uint32
	docCat      []uint32 // each document's category id

	scratch *searchPool // for Search; a day's view shares its index's (see newScratch)

	// sources keeps each passage's evidence source once made (see Source); a day's view shares
	// its index's (see newScratch).
	sources *passageSources

	// lazyStats marks a loaded index of every version whose statistics were left out (see
	// load): computed once (statsOnce) if a day ever needs the index as it is (Project).
	lazyStats bool
	statsOnce sync.Once

	// shared is what callers derive from what a language and its day views share (see
	// KeptShared): the index's, which every view of it points to.
	shared *keptValues
}

// KeptShared returns the value mk derives from l under key, made once, on the first call with
// that key, and kept with the language and every day's view of it (see view.go): a value derived
// only from what they share (the analyzers, the uncovered-topic rules, the documents, passages
// and phrases with their ids and texts; not the statistics or what is in force), made once for
// the language and all its epochs and bounded by what is on file, whatever days are asked. A key
// is a caller's own package-level pointer, one per kind of value (the judge keeps its compiled
// uncovered-topic rules here, the lookup service its hit-reason texts), so that the keys are as
// few as the callers.
func (l *Lang) KeptShared(key any, mk func(*Lang) any) any { return l.shared.value(key, l, mk) }

// value returns key's value, made by mk from l on the first call.
func (k *keptValues) value(key any, l *Lang, mk func(*Lang) any) any {
	e := k.entry(key)
	e.once.Do(func() { e.v = mk(l) })
	return e.v
}

// keptValues are a language's kept values: a list of a few entries, read without a lock and
// searched by comparing keys (a sync.Map would hash the key at every read, and could make a
// value twice when two first calls race).
type keptValues struct {
	list atomic.Pointer[[]*keptValue]
	mu   sync.Mutex // serialises additions
}

type keptValue struct {
	key  any
	once sync.Once
	v    any
}

// entry returns key's entry, added when there is none.
func (k *keptValues) entry(key any) *keptValue {
	find := func() *keptValue {
		if p := k.list.Load(); p != nil {
			for _, e := range *p {
				if e.key == key {
					return e
				}
			}
		}
		return nil
	}
	if e := find(); e != nil {
		return e
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := find(); e != nil {
		return e
	}
	var list []*keptValue
	if p := k.list.Load(); p != nil {
		list = *p
	}
	e := &keptValue{key: key}
	list = append(slices.Clip(list), e)
	k.list.Store(&list)
	return e
}

// UncoveredRules returns the corpus's uncovered-topic rules of the language (knowledge.Corpus.Uncovered),
// nil when the index was given none.
func (l *Lang) UncoveredRules() *synonyms.Set {
	if l.uncovered == nil {
		return nil
	}
	return l.uncovered()
}

// Passage is one section of one document.
type Passage struct {
	Doc     int // index into Lang.Docs
	Section int // index into Document.Sections
	Len     int // number of terms
}

// termTable is the interned vocabulary: the sorted term strings and their ids.
type termTable struct {
	words []string
	ids   map[string]Term
}

func newTermTable(words []string) termTable {
	ids := make(map[string]Term, len(words))
	for i, w := range words {
		ids[w] = Term(i)
	}
	return termTable{words: words, ids: ids}
}

// Build analyses the corpus.
func Build(c *knowledge.Corpus) *Index {
	ix := &Index{langs: map[string]*Lang{}}
	for _, lang := range knowledge.Languages {
		ix.langs[lang] = buildLang(lang, c.Documents(lang), c.Synonyms(lang))
		ix.langs[lang].uncovered = uncoveredOf(c, lang)
	}
	return ix
}

// uncoveredOf returns the uncovered-topic rules of c's language lang, read on first use.
func uncoveredOf(c *knowledge.Corpus, lang string) func() *synonyms.Set {
	return sync.OnceValue(func() *synonyms.Set { return c.Uncovered(lang) })
}

// Lang returns the analysed corpus of lang, or nil for an unknown language.
func (ix *Index) Lang(lang string) *Lang { return ix.langs[lang] }

// analyzers returns the index's analysis of lang and the question analysis built on it.
func analyzers(lang string, docs []*knowledge.Document, syns *synonyms.Set) (text, question *textproc.Analyzer) {
	base := textproc.New(lang)
	text = base
	if lang == "de" {
		var texts []string
		for _, d := range docs {
			texts = append(texts, d.Title, strings.Join(d.Keywords, " "), strings.Join(d.Entities, " "))
			for _, s := range d.Sections {
				texts = append(texts, s.Heading, s.Content)
			}
		}
		// Compounds split against the synonyms' words as well, so that "Putzrechnung" gives
		// "putz" (a synonym of Reinigung) and "rechnung". Questions and the index split the
		// same way, so that a compound of the front matter matches the same compound asked.
		text = base.WithSplitter(textproc.NewSplitter(base, append(texts, splitVocabulary(syns, base)...)...))
	}
	return text, text.WithSynonyms(syns.CompileStemmed(base.Tokens, base.Stem))
}

// analysed is a document's analysis as term strings, before the vocabulary is interned.
type analysed struct {
	passages [][]string // per section, every term in order
	// sentences are, per section, its content's sentences (Sentences), and bounds where each
	// one's terms start in its passage's terms, and where the last one's end (see passageTerms).
	sentences [][]string
	bounds    [][]int
	phrases   [][]string // title, category, keywords..., entities...
	front     []string   // every term of the front matter
}

// BuildLang analyses one language's documents, sorted by id, with its synonyms: the index of a
// language that Build makes, for tests and tools that make their own documents.
func BuildLang(lang string, docs []*knowledge.Document, syns *synonyms.Set) *Lang {
	return buildLang(lang, docs, syns)
}

func buildLang(lang string, docs []*knowledge.Document, syns *synonyms.Set) *Lang {
	a, q := analyzers(lang, docs, syns)
	l := &Lang{Language: lang, Analyzer: q, Text: a, Docs: docs, shared: new(keptValues)}
	newScratch(l)
	vocab := map[string]struct{}{}
	all := make([]analysed, len(docs))
	for di, d := range docs {
		an := analyseFront(a, d)
		title, meta := a.Terms(d.Title), a.Terms(strings.Join(d.Keywords, "\n"))
		for _, s := range d.Sections {
			terms, sentences, bounds := passageTerms(a, title, s, meta)
			an.passages = append(an.passages, terms)
			an.sentences, an.bounds = append(an.sentences, sentences), append(an.bounds, bounds)
		}
		for _, ts := range an.passages {
			for _, t := range ts {
				vocab[t] = struct{}{}
			}
		}
		for _, t := range an.front {
			vocab[t] = struct{}{}
		}
		all[di] = an
	}
	words := make([]string, 0, len(vocab))
	for w := range vocab {
		words = append(words, w)
	}
	slices.Sort(words)
	// Every part is built from the analysed documents, the vocabulary interned.
	l.terms = newTermTable(words)
	l.Passages = l.post.build(all, l.terms)
	l.front.build(all, l.terms)
	l.phr.build(all, l.terms)
	l.docStatistics()
	l.statistics()
	l.phr.intern(l.Docs)
	l.sent.build(all, l.terms, len(l.Passages))
	return l
}

// passageTerms returns the terms a section's passage is indexed with: its document's title
// terms, its heading's, its content's and its document's keyword terms (meta), so that a section
// is found by the procedure it belongs to as well as by its own words; and where each of its
// content's sentences (Sentences, also returned) starts in them, and where the last one ends.
// The analysis is token by token, so the terms are those of the parts' text joined by line
// breaks (TestPassageTermsAreItsTextsTerms), and the content is analysed once, sentence by
// sentence.
func passageTerms(a *textproc.Analyzer, title []string, s knowledge.Section, meta []string) (terms, sentences []string, bounds []int) {
	terms = append(slices.Clip(title), a.Terms(s.Heading)...)
	sentences = textproc.Sentences(s.Content)
	bounds = []int{len(terms)}
	for _, text := range sentences {
		terms = append(terms, a.Terms(text)...)
		bounds = append(bounds, len(terms))
	}
	return append(terms, meta...), sentences, bounds
}

// statistics computes what depends only on the parts and the documents (after docStatistics):
// the idf of every term over passages and over procedures, the categories per front-matter term,
// the phrases' shapes and inverted index, and what each document's keywords make. It runs after
// a build and after a load, so the prebuilt form need not carry it.
func (l *Lang) statistics() {
	l.post.statistics(l.Passages, len(l.Docs))
	l.front.statistics(l.docCat, len(l.categoryIDs))
	l.phr.derive(l.Docs, len(l.terms.words))
	l.phr.titleWeights(l.post.idf)
}

// docStatistics derives from Docs each document's domain and category id and each passage's
// category id, after a build and at every load (a day's view shares them: ids are only compared).
func (l *Lang) docStatistics() {
	l.categoryIDs = map[string]uint32{}
	l.docCat = make([]uint32, len(l.Docs))
	l.front.docDomain, l.front.domains = make([]uint32, len(l.Docs)), nil
	domainIDs := map[string]uint32{}
	l.front.inForce = len(l.Docs)
	for i, d := range l.Docs {
		name := strings.TrimSpace(d.Category)
		dom, ok := domainIDs[name]
		if !ok {
			dom = uint32(len(l.front.domains))
			domainIDs[name] = dom
			l.front.domains = append(l.front.domains, name)
		}
		l.front.docDomain[i] = dom
		id, ok := l.categoryIDs[d.Category]
		if !ok {
			id = uint32(len(l.categoryIDs))
			l.categoryIDs[d.Category] = id
		}
		l.docCat[i] = id
	}
	l.passageCat = make([]uint32, len(l.Passages))
	for i, p := range l.Passages {
		l.passageCat[i] = l.docCat[p.Doc]
	}
}

// splitVocabulary is the words of the hand-curated synonym files (operators.txt): the words
// operators write in compounds ("Putz", "Strom", "Tanke"). The generated thesaurus files add
// thousands of general words that would split the procedures' own compounds into noise.
func splitVocabulary(syns *synonyms.Set, a *textproc.Analyzer) []string {
	curated := syns.Select(func(r synonyms.Rule) bool { return textproc.Curated(r.Source) })
	return curated.Compile(a.Tokens).Vocabulary()
}

// analyseFront analyses a document's front matter. A phrase is its words' stems: a question
// holds the phrase when it holds those words, whole or as a synonym's word. The compound parts
// of its words are front-matter terms too (for partial matches), but a phrase never needs them.
func analyseFront(a *textproc.Analyzer, d *knowledge.Document) analysed {
	var an analysed
	add := func(text string) {
		groups := a.Groups(text)
		an.front = append(an.front, textproc.Flatten(groups)...)
		words := make([]string, 0, len(groups))
		for _, g := range groups {
			if !slices.Contains(words, g.Term) {
				words = append(words, g.Term)
			}
		}
		an.phrases = append(an.phrases, words)
	}
	add(d.Title)
	add(strings.ReplaceAll(d.Category, "-", " "))
	for _, k := range d.Keywords {
		add(k)
	}
	for _, e := range d.Entities {
		add(e)
	}
	return an
}

// Lookup returns the term of a string, and whether the index holds it at all (in a passage or
// in the front matter).
func (l *Lang) Lookup(term string) (Term, bool) {
	t, ok := l.terms.ids[term]
	if ok && l.post.day != nil && !l.post.day.known(t) {
		return 0, false // only documents not in force hold it (see view.go)
	}
	return t, ok
}

// InForce is the number of the language's documents in force: all of Docs, or in a day's view
// of the index of every version those of the day (see view.go).
func (l *Lang) InForce() int { return l.front.inForce }

// String returns the term's text.
func (l *Lang) String(t Term) string { return l.terms.words[t] }

// PassageOf returns the passage of a document's section, by section anchor.
func (l *Lang) PassageOf(docID, anchor string) (int, bool) {
	d := l.DocIndex(docID)
	if d < 0 {
		return 0, false
	}
	secs := l.Docs[d].Sections
	for p := l.post.docStart[d]; p < l.post.docStart[d+1]; p++ {
		if secs[l.Passages[p].Section].Anchor == anchor {
			return int(p), true
		}
	}
	return 0, false
}

// Doc returns the document and section of a passage.
func (l *Lang) Doc(passage int) (*knowledge.Document, *knowledge.Section) {
	p := l.Passages[passage]
	d := l.Docs[p.Doc]
	return d, &d.Sections[p.Section]
}

// Source is the evidence source of a passage, "<path>#<anchor>" as knowledge.SectionSource
// makes it. Each passage's is made once and kept, as every lookup names the sources of the
// candidates it finds.
func (l *Lang) Source(passage int) string {
	src := l.sources
	src.once.Do(func() { src.list = make([]atomic.Pointer[string], len(l.Passages)) })
	if s := src.list[passage].Load(); s != nil {
		return *s
	}
	d, sec := l.Doc(passage)
	s := d.Source(sec)
	src.list[passage].Store(&s)
	return s
}

// passageSources are the evidence sources of a language's passages, each made on first use.
type passageSources struct {
	once sync.Once
	list []atomic.Pointer[string]
}

// docsByIDKey keys the index of each document id's first version in Docs (docsByID), made once
// for the language and every day's view of it, which share Docs: a lookup finds a dozen
// procedures by id, and at thousands of procedures a binary search over the ids was a twentieth
// of it.
var docsByIDKey = new(int)

// docsByID maps each document id of l to its first version in Docs.
func docsByID(l *Lang) any {
	m := make(map[string]int, len(l.Docs))
	for i := len(l.Docs) - 1; i >= 0; i-- {
		m[l.Docs[i].ID] = i
	}
	return m
}

// DocIndex returns the index of the document id in Docs, or -1: in a day's view, of its version
// in force.
func (l *Lang) DocIndex(id string) int {
	i, ok := l.KeptShared(docsByIDKey, docsByID).(map[string]int)[id]
	if !ok {
		return -1
	}
	// The first of the id's versions; in a view, the one in force.
	for ; i < len(l.Docs) && l.Docs[i].ID == id; i++ {
		if l.front.live(uint32(i)) {
			return i
		}
	}
	return -1
}
