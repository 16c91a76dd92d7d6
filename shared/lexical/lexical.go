// Package lexical is the analysed form of the corpus shared by the L0 keyword layer and the demo
// provider's BM25: per language, an interned vocabulary, the postings of every term over the
// section passages, and every document's front matter as term ids with an inverted index from a
// term to the documents whose front matter holds it. Every lookup structure is a flat array
// indexed by term, passage or document id, so that a query's cost follows the postings of its
// terms, not the size of the corpus. It is built once per cold start (or loaded from its
// prebuilt form, see Encode) and is read-only afterwards, so it is safe for concurrent use.
package lexical

import (
	"math"
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
	// Docs are the language's documents sorted by id, as Corpus.Documents returns them.
	Docs []*knowledge.Document
	// Passages are the sections of all documents, ordered by document id, then section number:
	// that order breaks score ties.
	Passages []Passage

	text  *textproc.Analyzer // the index's own analysis, for passage text
	terms termTable
	// uncovered compiles the corpus's uncovered-topic rules on first use (see UncoveredTopic).
	uncovered func() *uncoveredRules

	// Per term (indexed by Term): its postings, passages ascending, at
	// postPassage[postStart[t]:postStart[t+1]] with the term's frequency in postTF; its BM25
	// idf over passages (the idf of an unseen term for a term only the front matter has) and
	// over procedures; the number of categories whose front matter holds it; the documents whose
	// front matter holds it, ascending, at frontDoc[frontDocStart[t]:frontDocStart[t+1]].
	postStart     []uint32
	postPassage   []uint32
	postTF        []uint16
	idf           []float64
	docIDF        []float64
	frontCats     []uint16
	frontDocStart []uint32
	frontDoc      []uint32

	// Per document: its passages [docStart[d], docStart[d+1]); its front-matter terms, sorted,
	// at frontTerms[frontStart[d]:frontStart[d+1]]; its phrases from docPhrase[d] (see Front).
	docStart   []uint32
	frontStart []uint32
	frontTerms []Term
	docPhrase  []uint32
	// phrases holds the words of every front-matter phrase: phrase i is
	// phraseTerms[phraseStart[i]:phraseStart[i+1]].
	phraseStart []uint32
	phraseTerms []Term
	// The phrases that hold a term, ascending, at termPhrase[termPhraseStart[t]:...[t+1]], and
	// each phrase's document: derived from the phrases (see statistics).
	termPhraseStart []uint32
	termPhrase      []uint32
	phraseDoc       []uint32
	// phraseShape is each phrase's kind (the low two bits) and number of words (the other six,
	// shapeMaxWords for that many or more), and titleIDF each document's title weight (the sum
	// of its title words' idf), derived from the phrases (see statistics): L0 reads them for
	// every phrase a question's terms touch, thousands on a large corpus, where reading the
	// phrase's bounds and document costs a cache miss each.
	phraseShape []uint8
	titleIDF    []float64
	// phraseFirst is, for each keyword and entity phrase, the first phrase (of any document,
	// keyword or entity) whose text the front matter writes the same; a title or category phrase
	// is its own. L0 names the phrases a question holds whole in its hints once per text, and on
	// a large corpus many documents share a keyword. It is made with the index and kept in its
	// prebuilt form (internPhrases): interning the texts at every load took a tenth of a cold
	// start's load at 10,000 procedures.
	phraseFirst []uint32

	unseen float64
	avgLen float64
	// lenNorm is each passage's BM25 length normalisation, K1 * (1 - B + B*len/avgLen), derived
	// from the passages (see statistics): Search reads it for every posting it walks.
	lenNorm []float64
	// docKeywords is each document's number of keywords, derived from Docs (see statistics):
	// Phrase reads it for every phrase a question's terms touch, where reading the document
	// itself costs a cache miss on a large corpus.
	docKeywords []uint32
	// passageCat is each passage's document category as an index into categoryIDs' keys,
	// derived from Docs (see statistics): a filtered search reads it for every passage it
	// scored.
	passageCat  []uint32
	categoryIDs map[string]uint32
	// docDomain is each document's category without surrounding space, as an index into
	// domains, derived from Docs (see statistics): L0 groups its leading matches by it, where
	// reading the documents costs a cache miss each on a large corpus.
	docDomain []uint32
	domains   []string

	// byID is each document's index in Docs by its id (derived, see statistics); PassageOf finds
	// a section among the document's few passages by its anchor.
	byID map[string]uint32

	scratch       sync.Pool // *searchScratch over passages, for Search
	docScratch    sync.Pool // *DocWeights
	phraseScratch sync.Pool // *PhraseHits

	// sources keeps each passage's evidence source once made (see Source); made at first use.
	sourcesOnce sync.Once
	sources     []atomic.Pointer[string]

	// Per passage, its content's sentences as Focus reads them, analysed when the index is
	// built (see sentences). Passage p's sentences are [sentStart[p], sentStart[p+1]), sentence
	// s stating the kinds of fact sentKinds[s]. The distinct terms of its sentences, in the
	// order they first occur, are sentTerms[sentTermStart[p]:sentTermStart[p+1]]; term i of
	// them is in the sentences whose bits are set in its maskWords(p) words from
	// sentMasks[maskStart[p]+i*maskWords(p)] (bit j of word k: sentence 16k+j of the passage;
	// most passages have at most 16 sentences, so one word).
	sentStart     []uint32
	sentKinds     []uint16
	sentTermStart []uint32
	sentTerms     []Term
	maskStart     []uint32
	sentMasks     []uint16
}

// maskBits is how many sentences one word of a sentence mask covers.
const maskBits = 16

// maskWords is how many words each of passage p's sentence masks has.
func (l *Lang) maskWords(p int) int {
	return (int(l.sentStart[p+1]-l.sentStart[p]) + maskBits - 1) / maskBits
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
		ix.langs[lang].setUncovered(c)
	}
	return ix
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

func buildLang(lang string, docs []*knowledge.Document, syns *synonyms.Set) *Lang {
	a, q := analyzers(lang, docs, syns)
	l := &Lang{Language: lang, Analyzer: q, text: a, Docs: docs}
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
	l.terms = newTermTable(words)
	l.index(all)
	l.sentences(all)
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

// sentences fills, for Focus, every passage's sentence arrays from the analysed documents:
// each sentence's distinct terms and the kinds of fact it states. They are part of the build,
// and of the prebuilt index, so that no lookup analyses a passage (about 0.15 ms a passage,
// were it done on first use) and nothing grows with the questions asked.
func (l *Lang) sentences(all []analysed) {
	P := len(l.Passages)
	l.sentStart = make([]uint32, 0, P+1)
	l.sentTermStart = make([]uint32, 0, P+1)
	l.maskStart = make([]uint32, 0, P+1)
	// slot[t] is term t's index among the current passage's terms plus one, 0 when it has none.
	slot := make([]uint32, len(l.terms.words))
	for _, an := range all {
		for si, texts := range an.sentences {
			l.sentStart = append(l.sentStart, uint32(len(l.sentKinds)))
			l.sentTermStart = append(l.sentTermStart, uint32(len(l.sentTerms)))
			l.maskStart = append(l.maskStart, uint32(len(l.sentMasks)))
			bounds := an.bounds[si]
			words := (len(texts) + maskBits - 1) / maskBits
			first := len(l.sentTerms)
			var masks []uint16 // words per term of the passage, in the order of sentTerms
			for i, text := range texts {
				for _, w := range an.passages[si][bounds[i]:bounds[i+1]] {
					t := l.terms.ids[w]
					if slot[t] == 0 {
						l.sentTerms = append(l.sentTerms, t)
						slot[t] = uint32(len(l.sentTerms) - first)
						masks = append(masks, make([]uint16, words)...)
					}
					masks[int(slot[t]-1)*words+i/maskBits] |= 1 << (i % maskBits)
				}
				l.sentKinds = append(l.sentKinds, uint16(textproc.KindsOf(text, textproc.AllKinds)))
			}
			for _, t := range l.sentTerms[first:] {
				slot[t] = 0
			}
			l.sentMasks = append(l.sentMasks, masks...)
		}
	}
	l.sentStart = append(l.sentStart, uint32(len(l.sentKinds)))
	l.sentTermStart = append(l.sentTermStart, uint32(len(l.sentTerms)))
	l.maskStart = append(l.maskStart, uint32(len(l.sentMasks)))
}

// index fills the flat arrays from the analysed documents; the vocabulary is interned.
func (l *Lang) index(all []analysed) {
	V := len(l.terms.words)
	id := func(t string) Term { return l.terms.ids[t] }
	// Postings: count, then fill, so that each term's list is one ascending run.
	type tf struct {
		term Term
		n    uint16
	}
	var perPassage [][]tf
	counts := make([]uint32, V+1)
	total := 0
	for di, an := range all {
		l.docStart = append(l.docStart, uint32(len(l.Passages)))
		for si, ts := range an.passages {
			freq := map[Term]uint16{}
			for _, t := range ts {
				if n := freq[id(t)]; n < math.MaxUint16 {
					freq[id(t)] = n + 1
				}
			}
			row := make([]tf, 0, len(freq))
			for t, n := range freq {
				row = append(row, tf{t, n})
				counts[t+1]++
			}
			slices.SortFunc(row, func(x, y tf) int { return int(x.term) - int(y.term) })
			perPassage = append(perPassage, row)
			l.Passages = append(l.Passages, Passage{Doc: di, Section: si, Len: len(ts)})
			total += len(ts)
		}
	}
	l.docStart = append(l.docStart, uint32(len(l.Passages)))
	for t := range V {
		counts[t+1] += counts[t]
	}
	l.postStart = counts
	l.postPassage = make([]uint32, counts[V])
	l.postTF = make([]uint16, counts[V])
	next := slices.Clone(counts[:V])
	for pi, row := range perPassage {
		for _, e := range row {
			l.postPassage[next[e.term]] = uint32(pi)
			l.postTF[next[e.term]] = e.n
			next[e.term]++
		}
	}
	if len(l.Passages) > 0 {
		l.avgLen = float64(total) / float64(len(l.Passages))
	}

	// Front matter: each document's sorted terms, its phrases, and the inverted index.
	frontCount := make([]uint32, V+1)
	for _, an := range all {
		l.frontStart = append(l.frontStart, uint32(len(l.frontTerms)))
		l.docPhrase = append(l.docPhrase, uint32(len(l.phraseStart)))
		terms := make([]Term, 0, len(an.front))
		for _, t := range an.front {
			terms = append(terms, id(t))
		}
		slices.Sort(terms)
		terms = slices.Compact(terms)
		for _, t := range terms {
			frontCount[t+1]++
		}
		l.frontTerms = append(l.frontTerms, terms...)
		for _, ph := range an.phrases {
			l.phraseStart = append(l.phraseStart, uint32(len(l.phraseTerms)))
			for _, t := range ph {
				l.phraseTerms = append(l.phraseTerms, id(t))
			}
		}
	}
	l.frontStart = append(l.frontStart, uint32(len(l.frontTerms)))
	l.docPhrase = append(l.docPhrase, uint32(len(l.phraseStart)))
	l.phraseStart = append(l.phraseStart, uint32(len(l.phraseTerms)))
	for t := range V {
		frontCount[t+1] += frontCount[t]
	}
	l.frontDocStart = frontCount
	l.frontDoc = make([]uint32, frontCount[V])
	next = slices.Clone(frontCount[:V])
	for di := range all {
		for _, t := range l.frontOf(di) {
			l.frontDoc[next[t]] = uint32(di)
			next[t]++
		}
	}
	l.statistics()
	l.internPhrases()
}

// internPhrases sets phraseFirst from the phrases' texts (after statistics, which Phrase reads).
func (l *Lang) internPhrases() {
	l.phraseFirst = make([]uint32, l.Phrases())
	first := map[string]uint32{}
	for p := range uint32(l.Phrases()) {
		kind, text := l.PhraseString(p)
		if kind == PhraseTitle || kind == PhraseCategory {
			l.phraseFirst[p] = p
			continue
		}
		f, ok := first[text]
		if !ok {
			f = p
			first[text] = f
		}
		l.phraseFirst[p] = f
	}
}

// statistics computes what depends only on the postings and the front matter: the idf of every
// term over passages and over procedures, and the categories per front-matter term. It runs
// after a build and after a load, so the prebuilt form need not carry it.
func (l *Lang) statistics() {
	V := len(l.terms.words)
	// The idf over passages counts at least MinIDFPassages of them (see there).
	N, D := float64(max(len(l.Passages), MinIDFPassages)), float64(len(l.Docs))
	l.unseen = bm25IDF(N, 0)
	l.docKeywords = make([]uint32, len(l.Docs))
	l.categoryIDs = map[string]uint32{}
	docCat := make([]uint32, len(l.Docs))
	l.docDomain, l.domains = make([]uint32, len(l.Docs)), nil
	domainIDs := map[string]uint32{}
	l.byID = make(map[string]uint32, len(l.Docs))
	for i, d := range l.Docs {
		l.byID[d.ID] = uint32(i)
		name := strings.TrimSpace(d.Category)
		dom, ok := domainIDs[name]
		if !ok {
			dom = uint32(len(l.domains))
			domainIDs[name] = dom
			l.domains = append(l.domains, name)
		}
		l.docDomain[i] = dom
		l.docKeywords[i] = uint32(len(d.Keywords))
		id, ok := l.categoryIDs[d.Category]
		if !ok {
			id = uint32(len(l.categoryIDs))
			l.categoryIDs[d.Category] = id
		}
		docCat[i] = id
	}
	l.passageCat = make([]uint32, len(l.Passages))
	for i, p := range l.Passages {
		l.passageCat[i] = docCat[p.Doc]
	}
	l.lenNorm = make([]float64, len(l.Passages))
	for i, p := range l.Passages {
		l.lenNorm[i] = K1 * (1 - B + B*float64(p.Len)/l.avgLen)
	}
	l.idf = make([]float64, V)
	l.docIDF = make([]float64, V)
	l.frontCats = make([]uint16, V)
	// catSeen[c] is the last term (plus one) counted with category id c: the distinct categories
	// of a term's documents are counted in one pass over them, not by searching a list of the
	// categories seen so far, which took a sixth of a prebuilt index's load at 10,000
	// procedures, where a common term's documents span every category.
	catSeen := make([]uint32, len(l.categoryIDs))
	for t := range V {
		ps := l.postPassage[l.postStart[t]:l.postStart[t+1]]
		if len(ps) == 0 {
			l.idf[t] = l.unseen
		} else {
			l.idf[t] = bm25IDF(N, float64(len(ps)))
			n, last := 0, -1
			for _, p := range ps {
				if d := l.Passages[p].Doc; d != last {
					n, last = n+1, d
				}
			}
			l.docIDF[t] = bm25IDF(D, float64(n))
		}
		cats, stamp := 0, uint32(t)+1
		for _, d := range l.frontDoc[l.frontDocStart[t]:l.frontDocStart[t+1]] {
			if c := docCat[d]; catSeen[c] != stamp {
				catSeen[c], cats = stamp, cats+1
			}
		}
		l.frontCats[t] = uint16(min(cats, math.MaxUint16))
	}
	// The inverted phrase index: count, then fill, phrases in ascending order per term.
	phrases := len(l.phraseStart) - 1
	l.phraseDoc = make([]uint32, phrases)
	for d := range l.Docs {
		for p := l.docPhrase[d]; p < l.docPhrase[d+1]; p++ {
			l.phraseDoc[p] = uint32(d)
		}
	}
	l.phraseShape = make([]uint8, phrases)
	l.titleIDF = make([]float64, len(l.Docs))
	for d := range l.Docs {
		first := l.docPhrase[d]
		for p := first; p < l.docPhrase[d+1]; p++ {
			kind := min(int(p-first), PhraseKeyword)
			if kind == PhraseKeyword && int(p-first)-2 >= len(l.Docs[d].Keywords) {
				kind = PhraseEntity
			}
			words := min(int(l.phraseStart[p+1]-l.phraseStart[p]), shapeMaxWords)
			l.phraseShape[p] = uint8(kind | words<<2)
		}
		// Summed in the title's order: a float sum depends on its order, and the ranking on it.
		for _, t := range l.Front(d).Title() {
			l.titleIDF[d] += l.idf[t]
		}
	}
	l.termPhraseStart = make([]uint32, V+1)
	for _, t := range l.phraseTerms {
		l.termPhraseStart[t+1]++
	}
	for t := range V {
		l.termPhraseStart[t+1] += l.termPhraseStart[t]
	}
	l.termPhrase = make([]uint32, len(l.phraseTerms))
	next := slices.Clone(l.termPhraseStart[:V])
	for p := range phrases {
		for _, t := range l.phraseTerms[l.phraseStart[p]:l.phraseStart[p+1]] {
			l.termPhrase[next[t]] = uint32(p)
			next[t]++
		}
	}
}

// MinIDFPassages is the fewest passages the idf over passages counts: a corpus of fewer (one or
// two procedures) is taken as part of a corpus of this many, the others not holding its words.
// Over five passages the idf has no range, every word of a procedure's subject is in all of
// them and weighs almost nothing, and the evidence rules, whose figures are sums of idf (see
// shared/retrieval), could never ground an answer. Below the 64 passages of the embedded
// corpus's languages, so that its figures are its own.
const MinIDFPassages = 48

func bm25IDF(N, n float64) float64 { return math.Log(1 + (N-n+0.5)/(n+0.5)) }

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
	return t, ok
}

// String returns the term's text.
func (l *Lang) String(t Term) string { return l.terms.words[t] }

// Known reports whether a passage holds the term (the front matter alone does not count).
func (l *Lang) Known(t Term) bool { return l.postStart[t+1] > l.postStart[t] }

func (l *Lang) postings(t Term) []uint32 { return l.postPassage[l.postStart[t]:l.postStart[t+1]] }

// PassageHas reports whether the passage holds the term.
func (l *Lang) PassageHas(passage int, t Term) bool {
	_, ok := slices.BinarySearch(l.postings(t), uint32(passage))
	return ok
}

// DocHas reports whether any passage of the document holds the term.
func (l *Lang) DocHas(doc int, t Term) bool {
	ps := l.postings(t)
	i, _ := slices.BinarySearch(ps, l.docStart[doc])
	return i < len(ps) && ps[i] < l.docStart[doc+1]
}

// DocPassages returns the passages of one document as the range [lo, hi).
func (l *Lang) DocPassages(doc int) (lo, hi int) { return int(l.docStart[doc]), int(l.docStart[doc+1]) }

// FrontCategories is the number of categories whose documents' front matter holds term: 1 for a
// term that points to one domain, more for words every procedure uses ("customer", "vehicle").
func (l *Lang) FrontCategories(term string) int {
	if t, ok := l.Lookup(term); ok {
		return int(l.frontCats[t])
	}
	return 0
}

// Domain returns a document's category without surrounding space, and an id that is the same
// for every document of that category.
func (l *Lang) Domain(doc int) (id uint32, name string) {
	id = l.docDomain[doc]
	return id, l.domains[id]
}

// FrontCategoriesOf is FrontCategories of a term.
func (l *Lang) FrontCategoriesOf(t Term) int { return int(l.frontCats[t]) }

// FrontDocs returns the documents whose front matter holds the term, ascending.
func (l *Lang) FrontDocs(t Term) []uint32 { return l.frontDoc[l.frontDocStart[t]:l.frontDocStart[t+1]] }

// PassageOf returns the passage of a document's section, by section anchor.
func (l *Lang) PassageOf(docID, anchor string) (int, bool) {
	d, ok := l.byID[docID]
	if !ok {
		return 0, false
	}
	secs := l.Docs[d].Sections
	for p := l.docStart[d]; p < l.docStart[d+1]; p++ {
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
	l.sourcesOnce.Do(func() { l.sources = make([]atomic.Pointer[string], len(l.Passages)) })
	if s := l.sources[passage].Load(); s != nil {
		return *s
	}
	d, sec := l.Doc(passage)
	s := d.Source(sec)
	l.sources[passage].Store(&s)
	return s
}

// IDF is Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): never negative, and largest for
// a term that no passage contains.
func (l *Lang) IDF(term string) float64 {
	if t, ok := l.Lookup(term); ok {
		return l.idf[t]
	}
	return l.unseen
}

// IDFOf is IDF of a term.
func (l *Lang) IDFOf(t Term) float64 { return l.idf[t] }

// BestSection returns the passage of the document that shares the most idf weight with the
// terms; the document's first passage (its scope) when none shares any. Its cost follows the
// terms' postings within the document, not the document's length.
func (l *Lang) BestSection(doc int, terms []Term) int {
	lo, hi := l.DocPassages(doc)
	var small [32]float64
	var w []float64
	if hi-lo > len(small) {
		w = make([]float64, hi-lo)
	} else {
		w = small[:hi-lo]
	}
	for _, t := range terms {
		ps := l.postings(t)
		i, _ := slices.BinarySearch(ps, uint32(lo))
		for ; i < len(ps) && int(ps[i]) < hi; i++ {
			w[int(ps[i])-lo] += l.idf[t]
		}
	}
	best, bestW := lo, 0.0
	for i, x := range w {
		if x > bestW {
			best, bestW = lo+i, x
		}
	}
	return best
}
