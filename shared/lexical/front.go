package lexical

import (
	"math"
	"slices"
)

// frontMatter is every document's front matter as terms: per document its front-matter terms,
// sorted, at frontTerms[frontStart[d]:frontStart[d+1]]; per term the documents whose front
// matter holds it, ascending, at frontDoc[frontDocStart[t]:frontDocStart[t+1]], and the number
// of categories whose front matter holds it (see frontStatistics).
type frontMatter struct {
	frontStart    []uint32
	frontTerms    []Term
	frontDocStart []uint32
	frontDoc      []uint32
	frontCats     []uint16
	// docDomain is each document's category without surrounding space, as an index into
	// domains, derived from Docs (see docStatistics): L0 groups its leading matches by it, where
	// reading the documents costs a cache miss each on a large corpus.
	docDomain []uint32
	domains   []string
}

// indexFront fills each document's sorted front-matter terms, its phrases, and the inverted
// index from a term to the documents whose front matter holds it.
func (l *Lang) indexFront(all []analysed) {
	V := len(l.terms.words)
	id := func(t string) Term { return l.terms.ids[t] }
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
	next := slices.Clone(frontCount[:V])
	for di := range all {
		for _, t := range l.frontOf(di) {
			l.frontDoc[next[t]] = uint32(di)
			next[t]++
		}
	}
}

// frontStatistics counts each term's categories (docCat: each document's category id).
func (l *Lang) frontStatistics(docCat []uint32) {
	V := len(l.terms.words)
	l.frontCats = make([]uint16, V)
	// catSeen[c] is the last term (plus one) counted with category id c: the distinct categories
	// of a term's documents are counted in one pass over them, not by searching a list of the
	// categories seen so far, which took a sixth of a prebuilt index's load at 10,000
	// procedures, where a common term's documents span every category.
	catSeen := make([]uint32, len(l.categoryIDs))
	for t := range V {
		cats, stamp := 0, uint32(t)+1
		for _, d := range l.frontDoc[l.frontDocStart[t]:l.frontDocStart[t+1]] {
			if c := docCat[d]; catSeen[c] != stamp {
				catSeen[c], cats = stamp, cats+1
			}
		}
		l.frontCats[t] = uint16(min(cats, math.MaxUint16))
	}
}

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

// frontCategoriesOf is FrontCategories of a term.
func (l *Lang) frontCategoriesOf(t Term) int { return int(l.frontCats[t]) }

// frontDocs returns the documents whose front matter holds the term, ascending.
func (l *Lang) frontDocs(t Term) []uint32 { return l.frontDoc[l.frontDocStart[t]:l.frontDocStart[t+1]] }

// docWeights accumulates a weight per document for one query (see sparse); Release returns it.
type docWeights struct {
	l *Lang
	sparse[float64]
}

// docWeights returns an empty accumulator; Release returns it.
func (l *Lang) docWeights() *docWeights {
	a, _ := l.docScratch.Get().(*docWeights)
	if a == nil || len(a.v) != len(l.Docs) {
		a = &docWeights{l: l, sparse: newSparse[float64](len(l.Docs))}
	}
	return a
}

// Add adds w, which must be positive, to the document's weight.
func (a *docWeights) Add(doc uint32, w float64) { a.add(doc, w) }

// Weight returns the document's weight.
func (a *docWeights) Weight(doc uint32) float64 { return a.v[doc] }

// Touched returns the documents with a weight, in the order they were first added.
func (a *docWeights) Touched() []uint32 { return a.touched }

// Release clears the accumulator and returns it to the pool; it must not be used afterwards.
func (a *docWeights) Release() {
	a.clear()
	a.l.docScratch.Put(a)
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
