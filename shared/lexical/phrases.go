package lexical

import (
	"slices"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// PhraseIndex is the index part of every document's front-matter phrases (title, category, each
// keyword, each entity) as the stems of their words: document d's phrases start at docPhrase[d],
// and phrase i is phraseTerms[phraseStart[i]:phraseStart[i+1]]. The phrases that hold a term,
// ascending, are at termPhrase[termPhraseStart[t]:termPhraseStart[t+1]], and each phrase's
// document is phraseDoc[p]: derived from the phrases (see statistics). It owns its build, its
// statistics, its prebuilt form (encode, decode) and its check.
type PhraseIndex struct {
	docPhrase       []uint32
	phraseStart     []uint32
	phraseTerms     []Term
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
	// keyword or entity) whose text the front matter writes the same; a title or category
	// phrase is its own. L0 names the phrases a question holds whole in its hints once per
	// text, and on a large corpus many documents share a keyword. It is made with the index and
	// kept in its prebuilt form (intern): interning the texts at every load took a tenth of a
	// cold start's load at 10,000 procedures.
	phraseFirst []uint32
	// docKeywords is each document's number of keywords, derived from the documents (see
	// statistics): Phrase reads it for every phrase a question's terms touch, where reading the
	// document itself costs a cache miss on a large corpus.
	docKeywords []uint32

	// derived makes statistics run once (derive): a language's day views share what it derives.
	derived sync.Once

	// dead marks the documents not in force in a day's view of the index of every version (their
	// phrases are never hit), and day its statistics (see view.go; titleIDF is then unused); both
	// nil in an index whose documents are all in force.
	dead []bool
	day  *dayStats

	scratch *sync.Pool // *phraseHits; a day's view shares its index's (see newScratch)
}

// build fills every document's phrases from the analysed documents.
func (x *PhraseIndex) build(all []analysed, terms termTable) {
	for _, an := range all {
		x.docPhrase = append(x.docPhrase, uint32(len(x.phraseStart)))
		for _, ph := range an.phrases {
			x.phraseStart = append(x.phraseStart, uint32(len(x.phraseTerms)))
			for _, t := range ph {
				x.phraseTerms = append(x.phraseTerms, terms.ids[t])
			}
		}
	}
	x.docPhrase = append(x.docPhrase, uint32(len(x.phraseStart)))
	x.phraseStart = append(x.phraseStart, uint32(len(x.phraseTerms)))
}

// statistics derives each phrase's document and shape, each document's number of keywords and
// the inverted phrase index over a vocabulary of V terms: count, then fill, phrases in ascending
// order per term. They hold for every day's view of the index (the title weights, which the
// day's idf makes, are titleWeights').
func (x *PhraseIndex) statistics(docs []*knowledge.Document, V int) {
	phrases := len(x.phraseStart) - 1
	x.docKeywords = make([]uint32, len(docs))
	x.phraseDoc = make([]uint32, phrases)
	x.phraseShape = make([]uint8, phrases)
	for d, doc := range docs {
		x.docKeywords[d] = uint32(len(doc.Keywords))
		first := x.docPhrase[d]
		for p := first; p < x.docPhrase[d+1]; p++ {
			x.phraseDoc[p] = uint32(d)
			kind := min(int(p-first), PhraseKeyword)
			if kind == PhraseKeyword && int(p-first)-2 >= len(doc.Keywords) {
				kind = PhraseEntity
			}
			words := min(int(x.phraseStart[p+1]-x.phraseStart[p]), shapeMaxWords)
			x.phraseShape[p] = uint8(kind | words<<2)
		}
	}
	x.termPhraseStart = make([]uint32, V+1)
	for _, t := range x.phraseTerms {
		x.termPhraseStart[t+1]++
	}
	for t := range V {
		x.termPhraseStart[t+1] += x.termPhraseStart[t]
	}
	x.termPhrase = make([]uint32, len(x.phraseTerms))
	next := slices.Clone(x.termPhraseStart[:V])
	for p := range phrases {
		for _, t := range x.words(uint32(p)) {
			x.termPhrase[next[t]] = uint32(p)
			next[t]++
		}
	}
}

// titleWeights sets each document's title weight from the idf of its title's words.
func (x *PhraseIndex) titleWeights(idf []float64) {
	x.titleIDF = make([]float64, len(x.docPhrase)-1)
	for d := range x.titleIDF {
		// Summed in the title's order: a float sum depends on its order, and the ranking on it.
		for _, t := range x.words(x.docPhrase[d]) {
			x.titleIDF[d] += idf[t]
		}
	}
}

// derive runs statistics once.
func (x *PhraseIndex) derive(docs []*knowledge.Document, V int) {
	x.derived.Do(func() { x.statistics(docs, V) })
}

// intern sets phraseFirst from the phrases' texts in docs (after statistics, which Phrase reads).
func (x *PhraseIndex) intern(docs []*knowledge.Document) {
	x.phraseFirst = make([]uint32, x.Len())
	first := map[string]uint32{}
	for p := range uint32(x.Len()) {
		kind, text := x.String(docs, p)
		if kind == PhraseTitle || kind == PhraseCategory {
			x.phraseFirst[p] = p
			continue
		}
		f, ok := first[text]
		if !ok {
			f = p
			first[text] = f
		}
		x.phraseFirst[p] = f
	}
}

// Phrase kinds, by a phrase's place among its document's phrases.
const (
	PhraseTitle = iota
	PhraseCategory
	PhraseKeyword
	PhraseEntity
)

// words returns a phrase's words.
func (x *PhraseIndex) words(p uint32) []Term {
	return x.phraseTerms[x.phraseStart[p]:x.phraseStart[p+1]]
}

// termPhrases returns the front-matter phrases (of every document) that hold the term, ascending.
func (x *PhraseIndex) termPhrases(t Term) []uint32 {
	return x.termPhrase[x.termPhraseStart[t]:x.termPhraseStart[t+1]]
}

// Len is the number of front-matter phrases of every document: phrases are 0..Len()-1.
func (x *PhraseIndex) Len() int { return len(x.phraseDoc) }

// Phrase returns a phrase's document, its kind (PhraseTitle, ...), its index among the
// document's keywords or entities (0 for a title or category), and its words.
func (x *PhraseIndex) Phrase(p uint32) (doc, kind, index int, words []Term) {
	doc = int(x.phraseDoc[p])
	i := int(p - x.docPhrase[doc])
	kind, index = i, 0
	if i >= 2 {
		kind, index = PhraseKeyword, i-2
		if k := int(x.docKeywords[doc]); index >= k {
			kind, index = PhraseEntity, index-k
		}
	}
	return doc, kind, index, x.words(p)
}

// shapeMaxWords is the most words phraseShape holds: a phrase of that many or more is counted
// from its bounds.
const shapeMaxWords = 63

// shapeOf returns a phrase's kind and number of words, as Phrase does, without reading its
// document or words.
func (x *PhraseIndex) shapeOf(p uint32) (kind, words int) {
	s := x.phraseShape[p]
	kind, words = int(s&3), int(s>>2)
	if words == shapeMaxWords {
		words = int(x.phraseStart[p+1] - x.phraseStart[p])
	}
	return kind, words
}

// docOf returns a phrase's document.
func (x *PhraseIndex) docOf(p uint32) int { return int(x.phraseDoc[p]) }

// String returns a phrase's kind and its text as the front matter of docs writes it: the title,
// the category, a keyword or an entity.
func (x *PhraseIndex) String(docs []*knowledge.Document, p uint32) (kind int, text string) {
	doc, kind, i, _ := x.Phrase(p)
	d := docs[doc]
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

// PhraseString returns a phrase's kind and its text as the front matter writes it: the title,
// the category, a keyword or an entity.
func (l *Lang) PhraseString(p uint32) (kind int, text string) { return l.phr.String(l.Docs, p) }

// PhraseIndex returns the language's front-matter phrases.
func (l *Lang) PhraseIndex() *PhraseIndex { return &l.phr }

// textID returns the id of a phrase's text, the same for every keyword and entity phrase of that
// text and no other; a title's or category's id is its own (see phraseFirst).
func (x *PhraseIndex) textID(p uint32) uint32 { return x.phraseFirst[p] }

// titleWeight returns the sum of the idf of a document's title words (Front.Title), in their order.
func (x *PhraseIndex) titleWeight(doc int) float64 {
	if x.day != nil {
		return x.day.titleWeight(x, doc)
	}
	return x.titleIDF[doc]
}

// encode writes the phrases and their text ids.
func (x *PhraseIndex) encode(e *encoder) {
	e.u32s(x.docPhrase)
	e.u32s(x.phraseStart)
	e.terms(x.phraseTerms)
	e.u32s(x.phraseFirst)
}

// decode reads what encode wrote.
func (x *PhraseIndex) decode(d *decoder) {
	x.docPhrase, x.phraseStart, x.phraseTerms, x.phraseFirst = d.u32s(), d.u32s(), d.terms(), d.u32s()
}

// check verifies the decoded phrases against a vocabulary of V terms and the documents: offsets
// and ids in range, each document with its title, its category and one phrase per keyword and
// entity, and valid text ids (see firstsValid).
func (x *PhraseIndex) check(V int, docs []*knowledge.Document) error {
	switch {
	case !offsetsTo(x.phraseStart, len(x.phraseStart)-1, len(x.phraseTerms)) || !idsBelow(x.phraseTerms, V) ||
		!offsetsTo(x.docPhrase, len(docs), len(x.phraseStart)-1):
		return badPrebuilt("front-matter phrases")
	case len(x.phraseFirst) != len(x.phraseStart)-1:
		return badPrebuilt("phrase texts")
	}
	for di, d := range docs {
		if int(x.docPhrase[di+1]-x.docPhrase[di]) != 2+len(d.Keywords)+len(d.Entities) ||
			int(x.docPhrase[di+1]) > len(x.phraseStart)-1 {
			return badPrebuilt("phrases of " + d.ID)
		}
		if !x.firstsValid(di) {
			return badPrebuilt("phrase texts")
		}
	}
	return nil
}

// firstsValid reports whether each of a document's phrases names a valid first phrase of its
// text: a keyword's or entity's is itself or an earlier keyword or entity that is its own first;
// a title's and a category's is itself.
func (x *PhraseIndex) firstsValid(di int) bool {
	at := x.docPhrase[di]
	for p := at; p < x.docPhrase[di+1]; p++ {
		f := x.phraseFirst[p]
		if p < at+2 {
			if f != p {
				return false
			}
			continue
		}
		// docPhrase ascends strictly (every document has a title and a category).
		fd, _ := slices.BinarySearch(x.docPhrase, f+1)
		if f > p || x.phraseFirst[f] != f || f-x.docPhrase[fd-1] < 2 {
			return false
		}
	}
	return true
}

// phraseHits counts, for one query, how many of its terms each front-matter phrase holds (see
// sparse); Release returns it.
type phraseHits struct {
	x *PhraseIndex
	sparse[uint16]
}

// phraseHits returns the counts of the query's terms per phrase, found through the inverted
// phrase index. terms must not repeat, so a count is at most the number of a question's
// distinct terms, far below the counter's limit.
func (x *PhraseIndex) hits(terms []Term) *phraseHits {
	h, _ := x.scratch.Get().(*phraseHits)
	if h == nil || len(h.v) != x.Len() {
		h = &phraseHits{x: x, sparse: newSparse[uint16](x.Len())}
	}
	for _, t := range terms {
		for _, p := range x.termPhrases(t) {
			if x.dead == nil || !x.dead[x.phraseDoc[p]] {
				h.add(p, 1)
			}
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
	h.x.scratch.Put(h)
}
