package judge

import "github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"

// A question that needs two procedures splits its informative words between them. The masks
// below say which of a question's words a procedure or a section holds, a bit per word (the
// first 64 words; a longer question's further words are not told apart), so that a caller can
// tell a procedure holding another part of the question from one competing for the same words.

// maxMaskWords is how many of a question's informative words a mask tells apart.
const maxMaskWords = 64

// held is the mask of the words has holds: the word itself, one of its compound parts, or one of
// its synonyms.
func (q Question) held(has func(lexical.Term) bool) uint64 {
	var m uint64
	for i, w := range q.words[:min(len(q.words), maxMaskWords)] {
		if w.known && has(w.term.t) {
			m |= 1 << i
			continue
		}
		for _, t := range q.terms[w.partsFrom:w.altsTo] {
			if has(t.t) {
				m |= 1 << i
				break
			}
		}
	}
	return m
}

// DocHeld is the mask of q's words that the document doc's sections or front matter hold.
func DocHeld(l *lexical.Lang, q Question, doc int) uint64 {
	post, front := l.Postings(), l.FrontMatter()
	return q.held(func(t lexical.Term) bool { return post.DocHas(doc, t) || front.Has(doc, t) })
}

// PassageHeld is the mask of q's words that the passage's own text holds.
func PassageHeld(l *lexical.Lang, q Question, passage int) uint64 {
	post := l.Postings()
	return q.held(func(t lexical.Term) bool { return post.PassageHas(passage, t) })
}

// WordSpecific is how specific word i of q is to few procedures: the idf over procedures of the
// word's term (for a word the corpus does not know, the best of its parts and synonyms). Words
// every procedure uses ("customer", "car") weigh almost nothing.
func (q Question) WordSpecific(i int) float64 {
	w := q.words[i]
	if w.known {
		return w.term.docIDF
	}
	best := 0.0
	for _, t := range q.terms[w.partsFrom:w.altsTo] {
		best = max(best, t.docIDF)
	}
	return best
}

// WordTerms appends to out the index terms of word i of q that a search for it uses: the word's
// own term when the corpus knows it, and its known parts and synonyms.
func WordTerms(l *lexical.Lang, q Question, i int, out []string) []string {
	w := q.words[i]
	if w.known {
		out = append(out, l.String(w.term.t))
	}
	for _, t := range q.terms[w.partsFrom:w.altsTo] {
		out = append(out, l.String(t.t))
	}
	return out
}

// WordString names word i of q in a reason: its term, or its first known part or synonym.
func WordString(l *lexical.Lang, q Question, i int) string {
	if w := q.words[i]; w.known {
		return l.String(w.term.t)
	}
	if ts := WordTerms(l, q, i, nil); len(ts) > 0 {
		return ts[0]
	}
	return ""
}

// FrontHeld is the mask of q's words that the document doc's front matter (title, keywords,
// entities, category) holds.
func FrontHeld(l *lexical.Lang, q Question, doc int) uint64 {
	front := l.FrontMatter()
	return q.held(func(t lexical.Term) bool { return front.Has(doc, t) })
}

// PassagesHeld sets held[i] to the mask of q's words that passage lo+i of the document doc holds
// (PassageHeld of each), for each of its passages [lo, hi) (Postings.DocPassages); held must
// have room for them. A term's postings in the document are read once, not searched a passage
// at a time, and the cost does not grow with the corpus.
func PassagesHeld(l *lexical.Lang, q Question, doc int, held []uint64) {
	post := l.Postings()
	lo, hi := post.DocPassages(doc)
	clear(held[:hi-lo])
	mark := func(i int, t lexical.Term) {
		for _, p := range post.DocPostings(doc, t) {
			held[int(p)-lo] |= 1 << i
		}
	}
	for i, w := range q.words[:min(len(q.words), maxMaskWords)] {
		if w.known {
			mark(i, w.term.t)
		}
		for _, t := range q.terms[w.partsFrom:w.altsTo] {
			mark(i, t.t)
		}
	}
}
