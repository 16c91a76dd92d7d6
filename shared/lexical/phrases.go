package lexical

import "slices"

// phraseIndex is every document's front-matter phrases (title, category, each keyword, each
// entity) as the stems of their words: document d's phrases start at docPhrase[d], and phrase i
// is phraseTerms[phraseStart[i]:phraseStart[i+1]]. The phrases that hold a term, ascending, are
// at termPhrase[termPhraseStart[t]:termPhraseStart[t+1]], and each phrase's document is
// phraseDoc[p]: derived from the phrases (see phraseStatistics).
type phraseIndex struct {
	docPhrase       []uint32
	phraseStart     []uint32
	phraseTerms     []Term
	termPhraseStart []uint32
	termPhrase      []uint32
	phraseDoc       []uint32
	// phraseShape is each phrase's kind (the low two bits) and number of words (the other six,
	// shapeMaxWords for that many or more), and titleIDF each document's title weight (the sum
	// of its title words' idf), derived from the phrases (see phraseStatistics): L0 reads them
	// for every phrase a question's terms touch, thousands on a large corpus, where reading the
	// phrase's bounds and document costs a cache miss each.
	phraseShape []uint8
	titleIDF    []float64
	// phraseFirst is, for each keyword and entity phrase, the first phrase (of any document,
	// keyword or entity) whose text the front matter writes the same; a title or category
	// phrase is its own. L0 names the phrases a question holds whole in its hints once per
	// text, and on a large corpus many documents share a keyword. It is made with the index and
	// kept in its prebuilt form (internPhrases): interning the texts at every load took a tenth
	// of a cold start's load at 10,000 procedures.
	phraseFirst []uint32
	// docKeywords is each document's number of keywords, derived from Docs (see
	// docStatistics): Phrase reads it for every phrase a question's terms touch, where reading
	// the document itself costs a cache miss on a large corpus.
	docKeywords []uint32
}

// phraseStatistics derives each phrase's document and shape, each document's title weight (from
// the idf, see postingStatistics) and the inverted phrase index: count, then fill, phrases in
// ascending order per term.
func (l *Lang) phraseStatistics() {
	V := len(l.terms.words)
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

// Phrase kinds, by a phrase's place among its document's phrases.
const (
	PhraseTitle = iota
	PhraseCategory
	PhraseKeyword
	PhraseEntity
)

// termPhrases returns the front-matter phrases (of every document) that hold the term, ascending.
func (l *Lang) termPhrases(t Term) []uint32 {
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

// phraseShapeOf returns a phrase's kind and number of words, as Phrase does, without reading its
// document or words.
func (l *Lang) phraseShapeOf(p uint32) (kind, words int) {
	s := l.phraseShape[p]
	kind, words = int(s&3), int(s>>2)
	if words == shapeMaxWords {
		words = int(l.phraseStart[p+1] - l.phraseStart[p])
	}
	return kind, words
}

// phraseDocOf returns a phrase's document.
func (l *Lang) phraseDocOf(p uint32) int { return int(l.phraseDoc[p]) }

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

// phraseText returns a phrase's text (PhraseString) and an id that is the same for every keyword
// and entity phrase of that text and no other; a title's or category's id is its own.
func (l *Lang) phraseText(p uint32) (id uint32, text string) {
	id = l.phraseFirst[p]
	_, text = l.PhraseString(id)
	return id, text
}

// phraseTextID is phraseText's id alone.
func (l *Lang) phraseTextID(p uint32) uint32 { return l.phraseFirst[p] }

// titleWeight returns the sum of the idf of a document's title words (Front.Title), in their order.
func (l *Lang) titleWeight(doc int) float64 { return l.titleIDF[doc] }

// phraseHits counts, for one query, how many of its terms each front-matter phrase holds (see
// sparse); Release returns it.
type phraseHits struct {
	l *Lang
	sparse[uint16]
}

// phraseHits returns the counts of the query's terms per phrase, found through the inverted
// phrase index. terms must not repeat, so a count is at most the number of a question's
// distinct terms, far below the counter's limit.
func (l *Lang) phraseHits(terms []Term) *phraseHits {
	h, _ := l.phraseScratch.Get().(*phraseHits)
	if h == nil || len(h.v) != len(l.phraseDoc) {
		h = &phraseHits{l: l, sparse: newSparse[uint16](len(l.phraseDoc))}
	}
	for _, t := range terms {
		for _, p := range l.termPhrases(t) {
			h.add(p, 1)
		}
	}
	return h
}

// Touched returns the phrases holding at least one of the terms, in no particular order.
func (h *phraseHits) Touched() []uint32 { return h.touched }

// Count returns how many of the terms the phrase holds.
func (h *phraseHits) Count(p uint32) int { return int(h.v[p]) }

// Release clears the counts and returns them to the pool; h must not be used afterwards.
func (h *phraseHits) Release() {
	h.clear()
	h.l.phraseScratch.Put(h)
}
