package lexical

import "slices"

// Front is the analysed front matter of one document: its phrases (title, category, each
// keyword, each entity) as the stems of their words, and every term it holds.
type Front struct {
	l   *Lang
	doc int
}

// Front returns the analysed front matter of a document.
func (l *Lang) Front(doc int) Front { return Front{l: l, doc: doc} }

func (f Front) phrase(i int) []Term {
	p := int(f.l.docPhrase[f.doc]) + i
	return f.l.phraseTerms[f.l.phraseStart[p]:f.l.phraseStart[p+1]]
}

// Title returns the distinct words of the title.
func (f Front) Title() []Term { return f.phrase(0) }

// Category returns the words of the category slug.
func (f Front) Category() []Term { return f.phrase(1) }

// Keyword returns the words of the document's i-th keyword (Document.Keywords[i]).
func (f Front) Keyword(i int) []Term { return f.phrase(2 + i) }

// Entity returns the words of the document's i-th entity (Document.Entities[i]).
func (f Front) Entity(i int) []Term { return f.phrase(2 + len(f.l.Docs[f.doc].Keywords) + i) }

// Has reports whether the front matter holds the term, in any phrase, whole or as a compound's
// part.
func (f Front) Has(t Term) bool {
	_, ok := slices.BinarySearch(f.l.frontOf(f.doc), t)
	return ok
}

func (l *Lang) frontOf(doc int) []Term { return l.frontTerms[l.frontStart[doc]:l.frontStart[doc+1]] }

// Phrase kinds, by a phrase's place among its document's phrases.
const (
	PhraseTitle = iota
	PhraseCategory
	PhraseKeyword
	PhraseEntity
)

// TermPhrases returns the front-matter phrases (of every document) that hold the term, ascending.
func (l *Lang) TermPhrases(t Term) []uint32 {
	return l.termPhrase[l.termPhraseStart[t]:l.termPhraseStart[t+1]]
}

// Phrases is the number of front-matter phrases of every document: phrases are 0..Phrases()-1.
func (l *Lang) Phrases() int { return len(l.phraseDoc) }

// Phrase returns a phrase's document, its kind (PhraseTitle, ...), its index among the
// document's keywords or entities (0 for a title or category), and its words.
func (l *Lang) Phrase(p uint32) (doc, kind, index int, words []Term) {
	doc = int(l.phraseDoc[p])
	i := int(p - l.docPhrase[doc])
	kind, index = i, 0
	if i >= 2 {
		kind, index = PhraseKeyword, i-2
		if k := int(l.docKeywords[doc]); index >= k {
			kind, index = PhraseEntity, index-k
		}
	}
	return doc, kind, index, l.phraseTerms[l.phraseStart[p]:l.phraseStart[p+1]]
}

// shapeMaxWords is the most words phraseShape holds: a phrase of that many or more is counted
// from its bounds.
const shapeMaxWords = 63

// PhraseShape returns a phrase's kind and number of words, as Phrase does, without reading its
// document or words.
func (l *Lang) PhraseShape(p uint32) (kind, words int) {
	s := l.phraseShape[p]
	kind, words = int(s&3), int(s>>2)
	if words == shapeMaxWords {
		words = int(l.phraseStart[p+1] - l.phraseStart[p])
	}
	return kind, words
}

// PhraseDoc returns a phrase's document.
func (l *Lang) PhraseDoc(p uint32) int { return int(l.phraseDoc[p]) }

// PhraseString returns a phrase's kind and its text as the front matter writes it: the title,
// the category, a keyword or an entity.
func (l *Lang) PhraseString(p uint32) (kind int, text string) {
	doc, kind, i, _ := l.Phrase(p)
	d := l.Docs[doc]
	switch kind {
	case PhraseTitle:
		return kind, d.Title
	case PhraseCategory:
		return kind, d.Category
	case PhraseKeyword:
		return kind, d.Keywords[i]
	}
	return kind, d.Entities[i]
}

// PhraseText returns a phrase's text (PhraseString) and an id that is the same for every keyword
// and entity phrase of that text and no other; a title's or category's id is its own.
func (l *Lang) PhraseText(p uint32) (id uint32, text string) {
	id = l.phraseFirst[p]
	_, text = l.PhraseString(id)
	return id, text
}

// PhraseTextID is PhraseText's id alone.
func (l *Lang) PhraseTextID(p uint32) uint32 { return l.phraseFirst[p] }

// TitleIDF returns the sum of the idf of a document's title words (Front.Title), in their order.
func (l *Lang) TitleIDF(doc int) float64 { return l.titleIDF[doc] }

// DocWeights accumulates a weight per document for one query (see sparse); Release returns it.
type DocWeights struct {
	l *Lang
	sparse[float64]
}

// DocWeights returns an empty accumulator; Release returns it.
func (l *Lang) DocWeights() *DocWeights {
	a, _ := l.docScratch.Get().(*DocWeights)
	if a == nil || len(a.v) != len(l.Docs) {
		a = &DocWeights{l: l, sparse: newSparse[float64](len(l.Docs))}
	}
	return a
}

// Add adds w, which must be positive, to the document's weight.
func (a *DocWeights) Add(doc uint32, w float64) { a.add(doc, w) }

// Weight returns the document's weight.
func (a *DocWeights) Weight(doc uint32) float64 { return a.v[doc] }

// Touched returns the documents with a weight, in the order they were first added.
func (a *DocWeights) Touched() []uint32 { return a.touched }

// Release clears the accumulator and returns it to the pool; it must not be used afterwards.
func (a *DocWeights) Release() {
	a.clear()
	a.l.docScratch.Put(a)
}

// PhraseHits counts, for one query, how many of its terms each front-matter phrase holds (see
// sparse); Release returns it.
type PhraseHits struct {
	l *Lang
	sparse[uint16]
}

// PhraseHits returns the counts of the query's terms per phrase, found through the inverted
// phrase index. terms must not repeat, so a count is at most the number of a question's
// distinct terms, far below the counter's limit.
func (l *Lang) PhraseHits(terms []Term) *PhraseHits {
	h, _ := l.phraseScratch.Get().(*PhraseHits)
	if h == nil || len(h.v) != len(l.phraseDoc) {
		h = &PhraseHits{l: l, sparse: newSparse[uint16](len(l.phraseDoc))}
	}
	for _, t := range terms {
		for _, p := range l.TermPhrases(t) {
			h.add(p, 1)
		}
	}
	return h
}

// Touched returns the phrases holding at least one of the terms, in no particular order.
func (h *PhraseHits) Touched() []uint32 { return h.touched }

// Count returns how many of the terms the phrase holds.
func (h *PhraseHits) Count(p uint32) int { return int(h.v[p]) }

// Release clears the counts and returns them to the pool; h must not be used afterwards.
func (h *PhraseHits) Release() {
	h.clear()
	h.l.phraseScratch.Put(h)
}

// sparse is an accumulator over ids for one query: a value per id, and the ids touched, so that
// clearing it costs what the query touched. The accumulators are pooled per language, so that
// nothing a query allocates grows with the corpus.
type sparse[T float64 | uint16] struct {
	v       []T
	touched []uint32
}

func newSparse[T float64 | uint16](n int) sparse[T] { return sparse[T]{v: make([]T, n)} }

// add adds x, which must be positive, to the value of id.
func (s *sparse[T]) add(id uint32, x T) {
	if s.v[id] == 0 {
		s.touched = append(s.touched, id)
	}
	s.v[id] += x
}

func (s *sparse[T]) clear() {
	for _, id := range s.touched {
		s.v[id] = 0
	}
	s.touched = s.touched[:0]
}
