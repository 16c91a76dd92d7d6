// Package judge judges a question against the analysed corpus (shared/lexical): how much of its
// informative words a passage, a procedure or a text holds (Support), which of its words they
// hold (the masks of parts.go), and whether it names a topic the procedures do not cover
// (UncoveredTopic). The index stores; the judge reads it through the index parts' methods.
package judge

import (
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Support is how much of a question's informative words a passage holds, weighted by IDF. It is
// the lexical evidence the service judges a block by: it does not collapse on a
// long, chatty question, because words the corpus does not know are counted apart (Unknown)
// instead of diluting the share of the words it does know.
type Support struct {
	// Words is the number of the question's informative words (distinct stems of at least three
	// characters with a letter, stop words excluded: "e", "km", "80" are not informative).
	Words int
	// Known is the IDF weight of the informative words the corpus holds; Unknown counts the
	// others (typos, words of other subjects, chat).
	Known   float64
	Unknown int
	// Matched is the number of informative words the passage or its document's front matter
	// holds; Weight is their IDF weight (a compound counts by the share of its known parts).
	Matched int
	Weight  float64
	// Specific is the weight of the matched words by how few procedures use them (BM25's idf
	// over procedures): words of one procedure's subject weigh much, words every procedure
	// uses ("customer", "report", "day") almost nothing.
	Specific float64
}

// Share is Weight over Known: the part of the question's known vocabulary the passage holds.
func (s Support) Share() float64 {
	if s.Known == 0 {
		return 0
	}
	return s.Weight / s.Known
}

// Informative reports whether a term counts as an informative word of a question.
func Informative(term string) bool {
	if len(term) < 3 {
		return false
	}
	for _, r := range term {
		if r < '0' || r > '9' {
			return true
		}
	}
	return false
}

// Question is a question's informative words resolved against the index once, so that the
// lexical support of several passages does not look each word up again: each distinct word
// (a word is counted once) with the terms of it, its compound parts and its synonyms that
// some passage holds.
type Question struct {
	words []questionWord
	terms []questionTerm // the words' parts and synonyms, each word's a stretch of it
}

// Words is the number of the question's distinct informative words.
func (q Question) Words() int { return len(q.words) }

// Word is informative word i of the question as the analyzer made it (its stem).
func (q Question) Word(i int) string { return q.words[i].text }

// Cleared is q emptied for reuse, its arrays kept. The words' strings stay in them, unread,
// until AppendQuestion overwrites them: clearing strings costs a write barrier each while a
// collection marks.
func (q Question) Cleared() Question {
	return Question{words: q.words[:0], terms: q.terms[:0]}
}

// Size is the number of entries of its arrays in use, for a caller that pools them.
func (q Question) Size() int { return len(q.words) + len(q.terms) }

// questionWord is one informative word of a Question.
type questionWord struct {
	text  string       // the word as the analyzer made it (its stem)
	term  questionTerm // the word's own term; known false when no passage holds it
	known bool
	// parts and alts are the word's known compound parts and known synonyms, as stretches
	// [from, to) of Question.terms.
	partsFrom, partsTo, altsTo int
	complete                   bool
	altKnown                   float64 // SynonymWeight times the best idf of the known synonyms
}

// questionTerm is a term some passage holds, with its idf over passages and over procedures.
type questionTerm struct {
	t           lexical.Term
	idf, docIDF float64
}

// NewQuestion resolves the question's words (textproc.Analyzer.QuestionWords) against l, for
// PassageSupport and the others.
func NewQuestion(l *lexical.Lang, query []textproc.Group) Question {
	return AppendQuestion(l, Question{}, query)
}

// AppendQuestion is NewQuestion reusing the arrays of q, which it overwrites.
func AppendQuestion(l *lexical.Lang, q Question, query []textproc.Group) Question {
	q.words, q.terms = q.words[:0], q.terms[:0]
	// A word is counted once. A typical question's few words are searched; a long question's
	// are hashed, so that its cost stays linear.
	var seen map[string]bool
	if len(query) > 16 {
		seen = make(map[string]bool, len(query))
	}
	for i, g := range query {
		if seen != nil {
			if seen[g.Term] {
				continue
			}
			seen[g.Term] = true
		} else if slices.ContainsFunc(query[:i], func(e textproc.Group) bool { return e.Term == g.Term }) {
			continue
		}
		if !Informative(g.Term) {
			continue
		}
		w := questionWord{text: g.Term, complete: g.Complete}
		w.term, w.known = questionTermOf(l, g.Term)
		w.partsFrom = len(q.terms)
		if !w.known {
			for _, p := range g.Parts {
				if t, ok := questionTermOf(l, p); ok {
					q.terms = append(q.terms, t)
				}
			}
		}
		w.partsTo = len(q.terms)
		for _, a := range g.Alts {
			if t, ok := questionTermOf(l, a.Term); ok {
				q.terms = append(q.terms, t)
				w.altKnown = max(w.altKnown, lexical.SynonymWeight*t.idf)
			}
		}
		w.altsTo = len(q.terms)
		q.words = append(q.words, w)
	}
	return q
}

// questionTermOf resolves a string to a term some passage holds.
func questionTermOf(l *lexical.Lang, s string) (questionTerm, bool) {
	t, ok := l.Lookup(s)
	if !ok || !l.Postings().Known(t) {
		return questionTerm{}, false
	}
	post := l.Postings()
	return questionTerm{t: t, idf: post.IDF(t), docIDF: post.DocIDF(t)}, true
}

// PassageSupport measures the lexical support of a passage for the question's words.
func PassageSupport(l *lexical.Lang, q Question, passage int) Support {
	post, front, doc := l.Postings(), l.FrontMatter(), l.Passages[passage].Doc
	return q.support(func(t lexical.Term) bool { return post.PassageHas(passage, t) || front.Has(doc, t) })
}

// DocSupport is PassageSupport over a whole procedure: the words any of its sections or its
// front matter holds.
func DocSupport(l *lexical.Lang, q Question, doc int) Support {
	post, front := l.Postings(), l.FrontMatter()
	return q.support(func(t lexical.Term) bool { return post.DocHas(doc, t) || front.Has(doc, t) })
}

// TextSupport is PassageSupport for a passage that is not in the index, such as a RAGcore chunk:
// text is analysed here, and the front matter of the document docID counts as for an indexed
// passage.
func TextSupport(l *lexical.Lang, q Question, text, docID string) Support {
	var terms []lexical.Term
	for _, s := range l.Text.Terms(text) {
		if t, ok := l.Lookup(s); ok {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	doc := l.DocIndex(docID)
	front := l.FrontMatter()
	return q.support(func(t lexical.Term) bool {
		if _, ok := slices.BinarySearch(terms, t); ok {
			return true
		}
		return doc >= 0 && front.Has(doc, t)
	})
}

// support measures the question's words against has, which reports whether the passage (or
// document, or text) with its front matter holds a term that some passage holds.
func (q Question) support(has func(lexical.Term) bool) Support {
	var s Support
	for _, g := range q.words {
		s.Words++
		// A synonym the passage holds stands in for a word it lacks, at SynonymWeight.
		alt, altSpecific := 0.0, 0.0
		for _, a := range q.terms[g.partsTo:g.altsTo] {
			if has(a.t) {
				alt = max(alt, lexical.SynonymWeight*a.idf)
				altSpecific = max(altSpecific, a.docIDF)
			}
		}
		if g.known {
			w := g.term.idf
			s.Known += w
			switch {
			case has(g.term.t):
				s.Matched++
				s.Weight += w
				s.Specific += g.term.docIDF
			case alt > 0:
				s.Matched++
				s.Weight += min(w, alt)
				s.Specific += lexical.SynonymWeight * altSpecific
			}
			continue
		}
		// An unknown compound counts as one word by the mean weight of its known parts, halved
		// when only part of the compound is known.
		var partKnown, partHave, partSpecific float64
		parts := q.terms[g.partsFrom:g.partsTo]
		n := len(parts)
		for _, p := range parts {
			partKnown += p.idf
			if has(p.t) {
				partHave += p.idf
				partSpecific = max(partSpecific, p.docIDF)
			}
		}
		if n == 0 {
			// A word the corpus does not know counts as known through a synonym it knows.
			if alt > 0 {
				s.Known += alt
				s.Matched++
				s.Weight += alt
				s.Specific += lexical.SynonymWeight * altSpecific
				continue
			}
			if g.altKnown > 0 {
				s.Known += g.altKnown
				continue
			}
			s.Unknown++
			continue
		}
		partKnown, partHave = partKnown/float64(n), partHave/float64(n)
		if !g.complete {
			partKnown, partHave = partKnown/2, partHave/2
		}
		s.Known += partKnown
		switch {
		case partHave > 0:
			s.Matched++
			s.Weight += max(partHave, min(partKnown, alt))
			s.Specific += partSpecific * partHave / partKnown
		case alt > 0:
			s.Specific += lexical.SynonymWeight * altSpecific
			s.Matched++
			s.Weight += min(partKnown, alt)
		}
	}
	return s
}

// AppendHeld appends to out, each once, the index terms by which the passage's own text (its
// front matter aside) holds the question's informative words: the word's own term, else the
// first of its compound parts or synonyms the passage holds. At most limit terms are appended.
func AppendHeld(l *lexical.Lang, q Question, passage int, out []lexical.Term, limit int) []lexical.Term {
	post := l.Postings()
	n := 0
	for _, w := range q.words {
		if n == limit {
			break
		}
		held, ok := w.term.t, w.known && post.PassageHas(passage, w.term.t)
		if !ok {
			for _, t := range q.terms[w.partsFrom:w.altsTo] {
				if post.PassageHas(passage, t.t) {
					held, ok = t.t, true
					break
				}
			}
		}
		if ok && !slices.Contains(out, held) {
			out = append(out, held)
			n++
		}
	}
	return out
}
