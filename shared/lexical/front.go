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
