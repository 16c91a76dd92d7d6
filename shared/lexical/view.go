package lexical

import (
	"math"
	"sync/atomic"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// One index holds every version on file (BuildAll, and its prebuilt form); the index of a day is
// a view of it onto the versions in force that day (Project). A view shares every array of the
// index of every version (vocabulary, postings, front matter, phrases, sentences, passages and
// documents, with their ids, and the documents' category and domain ids) and owns only what the
// day decides: which documents and passages are not in force (dead: a search never ranks them,
// the front matter and the phrases never match them, DocIndex never names them, and a term only
// they hold is unknown), the average length and length normalisation of the passages in force,
// and the statistics of each term over them (dayStats: idf over passages and procedures,
// front-matter documents and categories, and the title weights they make), each computed as a
// build of those documents alone computes it, so that a view ranks and judges as that build
// does. No text is analysed and nothing of the corpus's size is copied or counted: a view costs a
// pass over its passages and documents (about 1.4 ms for both languages at 10,000 procedures),
// and each term a lookup uses a walk over its postings the first time. The analysis of questions
// is the index of every version's: for German, compounds are split against the words of every
// version on file.

// BuildAll analyses every version on file of c (knowledge.Corpus.All): the index a prebuilt
// index holds and every day's index is a view of.
func BuildAll(c *knowledge.Corpus) *Index { return Build(c.All()) }

// Project returns the index of on's documents (the versions in force on a day, a view of the
// corpus ix was built from with every version): ix itself when those are all of ix's documents,
// as for a corpus without versions on a day when every procedure is in force, else a view of ix
// (see view). ok is false when a document of on is not one of ix's.
func (ix *Index) Project(on *knowledge.Corpus) (*Index, bool) {
	out := &Index{langs: map[string]*Lang{}}
	same := true
	for lang, l := range ix.langs {
		p, ok := l.project(on.Documents(lang))
		if !ok {
			return nil, false
		}
		same = same && p == l
		out.langs[lang] = p
	}
	if same {
		return ix, true
	}
	return out, true
}

// project returns the language's index of docs, which must be among l.Docs in their order.
func (l *Lang) project(docs []*knowledge.Document) (*Lang, bool) {
	if sameDocs(l.Docs, docs) {
		if l.lazyStats {
			l.statsOnce.Do(l.statistics)
		}
		return l, true
	}
	keep, ok := keptDocs(l.Docs, docs)
	if !ok {
		return nil, false
	}
	// The view: l's arrays, the day's dead documents and passages, and the day's statistics.
	l.phr.derive(l.Docs, len(l.terms.words)) // a view shares the phrase index's
	deadDoc := make([]bool, len(l.Docs))
	for i := range deadDoc {
		deadDoc[i] = true
	}
	for _, d := range keep {
		deadDoc[d] = false
	}
	deadPassage := make([]bool, len(l.Passages))
	for i, p := range l.Passages {
		deadPassage[i] = deadDoc[p.Doc]
	}
	v := &Lang{Language: l.Language, Analyzer: l.Analyzer, Text: l.Text, Docs: l.Docs, Passages: l.Passages,
		terms: l.terms, uncovered: l.uncovered, shared: l.shared, sent: l.sent, scratch: l.scratch, sources: l.sources}
	lp, lf, lx := &l.post, &l.front, &l.phr
	v.post = Postings{postStart: lp.postStart, postPassage: lp.postPassage, postTF: lp.postTF, docStart: lp.docStart, dead: deadPassage}
	v.front = FrontMatter{frontStart: lf.frontStart, frontTerms: lf.frontTerms, frontDocStart: lf.frontDocStart,
		frontDoc: lf.frontDoc, dead: deadDoc, scratch: lf.scratch}
	v.phr = PhraseIndex{docPhrase: lx.docPhrase, phraseStart: lx.phraseStart, phraseTerms: lx.phraseTerms,
		termPhraseStart: lx.termPhraseStart, termPhrase: lx.termPhrase, phraseDoc: lx.phraseDoc,
		phraseShape: lx.phraseShape, phraseFirst: lx.phraseFirst, docKeywords: lx.docKeywords, dead: deadDoc, scratch: lx.scratch}
	// Category and domain ids are only compared: the view shares l's, which number every version's.
	v.categoryIDs, v.passageCat, v.docCat = l.categoryIDs, l.passageCat, l.docCat
	v.front.docDomain, v.front.domains, v.front.inForce = lf.docDomain, lf.domains, len(keep)
	live := v.post.liveAverage(v.Passages)
	v.post.lengths(v.Passages, live)
	day := newDayStats(v, docsOf(v.Passages, deadPassage), live, lp.Terms())
	v.post.day, v.front.day, v.phr.day = day, day, day
	return v, true
}

// dayStats are a view's statistics of its terms over the documents in force, each term's made on
// its first use and kept (a view costs a pass over its passages and documents, not over the
// postings of every term): a term's passages and procedures in force, its idf over passages (as
// Postings.statistics computes it), and the documents and categories in force whose front
// matter holds it (as FrontMatter.statistics counts them). Safe for concurrent use: two lookups
// that make a term's statistics at once store the same value.
type dayStats struct {
	post   *Postings
	front  *FrontMatter
	docOf  []uint32 // each passage's document plus one, 0 when not in force (docsOf)
	docCat []uint32 // each document's category id
	cats   int
	n, d   float64 // the passages and procedures the idf counts
	// chunks holds the terms' cells statChunk terms at a time, each chunk made when one of its
	// terms is first used: a lookup uses a few hundred terms of tens of thousands.
	chunks []atomic.Pointer[statCells]
}

// statChunk is how many terms' cells a chunk holds.
const statChunk = 256

// statCells are the statistics of statChunk terms, each made once: counts is 1<<63 |
// procedures<<32 | passages; idfs the idf's bits (an idf is never 0); fronts 1<<63 |
// categories<<32 | documents whose front matter holds the term.
type statCells struct {
	counts, idfs, fronts [statChunk]atomic.Uint64
}

// newDayStats returns the statistics of a view's V terms (docOf, its live passages in force,
// and its categories and documents in force already set).
func newDayStats(v *Lang, docOf []uint32, live, V int) *dayStats {
	return &dayStats{post: &v.post, front: &v.front, docOf: docOf, docCat: v.docCat, cats: len(v.categoryIDs),
		n: v.post.idfBase(live), d: float64(v.front.inForce), chunks: make([]atomic.Pointer[statCells], (V+statChunk-1)/statChunk)}
}

// cells returns the chunk of the term's cells, made on first use.
func (s *dayStats) cells(t Term) *statCells {
	p := &s.chunks[t/statChunk]
	if c := p.Load(); c != nil {
		return c
	}
	p.CompareAndSwap(nil, new(statCells))
	return p.Load()
}

// held returns the passages and procedures in force that hold the term.
func (s *dayStats) held(t Term) (passages, docs uint32) {
	cell := &s.cells(t).counts[t%statChunk]
	if c := cell.Load(); c != 0 {
		return uint32(c), uint32(c>>32) &^ (1 << 31)
	}
	n, d := s.post.count(int(t), s.docOf)
	cell.Store(1<<63 | uint64(d)<<32 | uint64(n))
	return uint32(n), uint32(d)
}

// idf is the term's idf over passages in force.
func (s *dayStats) idf(t Term) float64 {
	cell := &s.cells(t).idfs[t%statChunk]
	if c := cell.Load(); c != 0 {
		return math.Float64frombits(c)
	}
	w := s.post.unseen
	if n, _ := s.held(t); n > 0 {
		w = bm25IDF(s.n, float64(n))
	}
	cell.Store(math.Float64bits(w))
	return w
}

// docIDF is the term's idf over procedures in force (0 for a term no passage in force holds).
func (s *dayStats) docIDF(t Term) float64 {
	n, d := s.held(t)
	if n == 0 {
		return 0
	}
	return bm25IDF(s.d, float64(d))
}

// known reports whether a document in force holds the term, in a passage or its front matter.
func (s *dayStats) known(t Term) bool {
	if n, _ := s.held(t); n > 0 {
		return true
	}
	docs, _ := s.frontOf(t)
	return docs > 0
}

// frontOf returns how many documents in force, and of how many categories, hold the term in their
// front matter.
func (s *dayStats) frontOf(t Term) (docs, categories int) {
	cell := &s.cells(t).fronts[t%statChunk]
	if c := cell.Load(); c != 0 {
		return int(uint32(c)), int(c>>32) & math.MaxUint16
	}
	seen := make([]uint64, (s.cats+63)/64)
	for _, d := range s.front.docs(t) {
		if !s.front.live(d) {
			continue
		}
		docs++
		if c := s.docCat[d]; seen[c>>6]&(1<<(c&63)) == 0 {
			seen[c>>6] |= 1 << (c & 63)
			categories++
		}
	}
	categories = min(categories, math.MaxUint16)
	cell.Store(1<<63 | uint64(categories)<<32 | uint64(docs))
	return docs, categories
}

// titleWeight is a document's title weight, the sum of its title words' idf in their order, as
// PhraseIndex.titleWeights makes it.
func (s *dayStats) titleWeight(x *PhraseIndex, doc int) float64 {
	w := 0.0
	for _, t := range x.words(x.docPhrase[doc]) {
		w += s.idf(t)
	}
	return w
}

// sameDocs reports whether docs are all of all, in order.
func sameDocs(all, docs []*knowledge.Document) bool {
	if len(docs) != len(all) {
		return false
	}
	for i, d := range docs {
		if d != all[i] {
			return false
		}
	}
	return true
}

// keptDocs are the indexes of docs in all, ascending; false when one is not there.
func keptDocs(all, docs []*knowledge.Document) ([]int, bool) {
	keep := make([]int, 0, len(docs))
	j := 0
	for _, d := range docs {
		for j < len(all) && all[j] != d {
			j++
		}
		if j == len(all) {
			return nil, false
		}
		keep = append(keep, j)
		j++
	}
	return keep, true
}

// footprint is about how many bytes of heap an index holds of its own: for a view, its dead
// marks, its length normalisation and, at most, every chunk of its term statistics (its arrays,
// documents, text, analysis and scratch pools are the index of every version's, and so are the
// values kept with KeptShared); what Epochs counts against its byte bound.
func (ix *Index) footprint() int64 {
	var n int64
	for _, l := range ix.langs {
		V, P, D := int64(len(l.terms.words)), int64(len(l.Passages)), int64(len(l.Docs))
		n += (V/statChunk + 1) * (8 + statChunk*3*8) // the chunks of term statistics, once all made
		n += P * (1 + 8 + 4)                         // dead passages, lenNorm, docOf
		n += D                                       // dead documents
	}
	return n
}
