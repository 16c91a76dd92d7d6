package lexical

import (
	"math"
	"slices"
	"sync"
)

// FrontMatter is the index part of every document's front matter as terms: per document its
// front-matter terms, sorted, at frontTerms[frontStart[d]:frontStart[d+1]]; per term the
// documents whose front matter holds it, ascending, at frontDoc[frontDocStart[t]:frontDocStart[t+1]],
// and the number of categories whose front matter holds it (see statistics). It owns its build,
// its statistics, its prebuilt form (encode, decode) and its check.
type FrontMatter struct {
	frontStart    []uint32
	frontTerms    []Term
	frontDocStart []uint32
	frontDoc      []uint32
	frontCats     []uint16
	// docDomain is each document's category without surrounding space, as an index into
	// domains, derived from the documents (see Lang.docStatistics): L0 groups its leading
	// matches by it, where reading the documents costs a cache miss each on a large corpus.
	docDomain []uint32
	domains   []string

	// dead marks the documents not in force in a day's view of the index of every version, and
	// day holds the statistics of its terms (see view.go; frontCats is then unused); both nil in
	// an index whose documents are all in force. inForce is how many are.
	dead    []bool
	day     *dayStats
	inForce int

	scratch *sync.Pool // *docWeights; a day's view shares its index's (see newScratch)
}

// build fills each document's sorted front-matter terms and the inverted index from a term to
// the documents whose front matter holds it.
func (f *FrontMatter) build(all []analysed, terms termTable) {
	V := len(terms.words)
	frontCount := make([]uint32, V+1)
	for _, an := range all {
		f.frontStart = append(f.frontStart, uint32(len(f.frontTerms)))
		ts := make([]Term, 0, len(an.front))
		for _, t := range an.front {
			ts = append(ts, terms.ids[t])
		}
		slices.Sort(ts)
		ts = slices.Compact(ts)
		for _, t := range ts {
			frontCount[t+1]++
		}
		f.frontTerms = append(f.frontTerms, ts...)
	}
	f.frontStart = append(f.frontStart, uint32(len(f.frontTerms)))
	for t := range V {
		frontCount[t+1] += frontCount[t]
	}
	f.frontDocStart = frontCount
	f.frontDoc = make([]uint32, frontCount[V])
	next := slices.Clone(frontCount[:V])
	for di := range all {
		for _, t := range f.of(di) {
			f.frontDoc[next[t]] = uint32(di)
			next[t]++
		}
	}
}

// statistics counts each term's categories (docCat: each document's category id, of cats).
func (f *FrontMatter) statistics(docCat []uint32, cats int) {
	V := len(f.frontDocStart) - 1
	f.frontCats = make([]uint16, V)
	// catSeen[c] is the last term (plus one) counted with category id c: the distinct categories
	// of a term's documents are counted in one pass over them, not by searching a list of the
	// categories seen so far, which took a sixth of a prebuilt index's load at 10,000
	// procedures, where a common term's documents span every category.
	catSeen := make([]uint32, cats)
	for t := range V {
		n, stamp := 0, uint32(t)+1
		for _, d := range f.frontDoc[f.frontDocStart[t]:f.frontDocStart[t+1]] {
			if c := docCat[d]; catSeen[c] != stamp {
				catSeen[c], n = stamp, n+1
			}
		}
		f.frontCats[t] = uint16(min(n, math.MaxUint16))
	}
}

// of returns a document's front-matter terms, sorted.
func (f *FrontMatter) of(doc int) []Term { return f.frontTerms[f.frontStart[doc]:f.frontStart[doc+1]] }

// Has reports whether the document's front matter holds the term, in any phrase, whole or as a
// compound's part.
func (f *FrontMatter) Has(doc int, t Term) bool {
	_, ok := lowerBound(f.of(doc), t)
	return ok
}

// Categories is the number of categories whose documents' front matter holds the term: 1 for a
// term that points to one domain, more for words every procedure uses ("customer", "vehicle").
func (f *FrontMatter) Categories(t Term) int {
	if f.day != nil {
		_, n := f.day.frontOf(t)
		return n
	}
	return int(f.frontCats[t])
}

// docs returns the documents whose front matter holds the term, ascending: in a day's view,
// those not in force too (see live).
func (f *FrontMatter) docs(t Term) []uint32 {
	return f.frontDoc[f.frontDocStart[t]:f.frontDocStart[t+1]]
}

// live reports whether the document is in force.
func (f *FrontMatter) live(doc uint32) bool { return f.dead == nil || !f.dead[doc] }

// liveDocs is the number of documents in force whose front matter holds the term.
func (f *FrontMatter) liveDocs(t Term) int {
	if f.day != nil {
		n, _ := f.day.frontOf(t)
		return n
	}
	return len(f.docs(t))
}

// Domain returns a document's category without surrounding space, and an id that is the same
// for every document of that category.
func (f *FrontMatter) Domain(doc int) (id uint32, name string) {
	id = f.docDomain[doc]
	return id, f.domains[id]
}

// encodeTerms writes each document's terms; encodeDocs the inverted index (version 6 of the
// format writes the phrases between the two).
func (f *FrontMatter) encodeTerms(e *encoder) {
	e.u32s(f.frontStart)
	e.terms(f.frontTerms)
}

func (f *FrontMatter) encodeDocs(e *encoder) {
	e.u32s(f.frontDocStart)
	e.u32s(f.frontDoc)
}

// decodeTerms and decodeDocs read what encodeTerms and encodeDocs wrote.
func (f *FrontMatter) decodeTerms(d *decoder) { f.frontStart, f.frontTerms = d.u32s(), d.terms() }

func (f *FrontMatter) decodeDocs(d *decoder) { f.frontDocStart, f.frontDoc = d.u32s(), d.u32s() }

// check verifies the decoded arrays against a vocabulary of V terms and D documents.
func (f *FrontMatter) check(V, D int) error {
	switch {
	case !offsetsTo(f.frontStart, D, len(f.frontTerms)) || !idsBelow(f.frontTerms, V):
		return badPrebuilt("front-matter terms")
	case !offsetsTo(f.frontDocStart, V, len(f.frontDoc)) || !idsBelow(f.frontDoc, D):
		return badPrebuilt("front-matter documents")
	}
	return nil
}

// Front is the analysed front matter of one document: its phrases (title, category, each
// keyword, each entity) as the stems of their words, and every term it holds.
type Front struct {
	l   *Lang
	doc int
}

// Front returns the analysed front matter of a document.
func (l *Lang) Front(doc int) Front { return Front{l: l, doc: doc} }

func (f Front) phrase(i int) []Term { return f.l.phr.words(f.l.phr.docPhrase[f.doc] + uint32(i)) }

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
func (f Front) Has(t Term) bool { return f.l.front.Has(f.doc, t) }

// FrontMatter returns the language's front-matter terms.
func (l *Lang) FrontMatter() *FrontMatter { return &l.front }

// docWeights accumulates a weight per document for one query (see sparse); Release returns it.
type docWeights struct {
	f *FrontMatter
	sparse[float64]
}

// weights returns an empty accumulator of a weight per document; Release returns it.
func (f *FrontMatter) weights() *docWeights {
	a, _ := f.scratch.Get().(*docWeights)
	if n := len(f.frontStart) - 1; a == nil || len(a.v) != n {
		a = &docWeights{f: f, sparse: newSparse[float64](n)}
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
	a.f.scratch.Put(a)
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
