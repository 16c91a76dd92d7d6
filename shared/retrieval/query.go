package retrieval

import (
	"slices"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// question is a request's question analysed once, in the day's index of its language: every
// step of a lookup (L0, L1, the evidence paths, fusion, the verdict, the uncovered topics, the
// complements and their sentences, the hit reasons) reads its words from here, never splitting
// the text again (the text is read again only for the kinds of fact it asks for). Its arrays are
// pooled: it is valid until it is released.
type question struct {
	// text is the question NFKC-normalised, as it is analysed and sent to the provider (the
	// trace hashes it as received).
	text string
	// words are its words as the analyzer made them, with their compound parts and synonyms.
	words []textproc.Group
	// terms are its index terms, each once, and weights the weights of those that only synonyms
	// give (queryTerms): what a search takes.
	terms   []string
	weights map[string]float64
	// resolved is its informative words resolved in the index, for the lexical support of every
	// block judged and the complements' parts.
	resolved judge.Question
	// written is each of its tokens' stem with the token as the question wrote it (the first of
	// a stem's), at most maxWritten, for the section hit reasons.
	written [][2]string
	// alts is the array its words' synonyms are cut from (textproc.QuestionAnalysis.Alts).
	alts []textproc.Alt
	// tokens are its tokens, stems their stems, and ends where each of its sentences ends in
	// them (textproc.QuestionAnalysis).
	tokens, stems []string
	ends          []int
	// kinds are the kinds of fact it asks for (textproc.QuestionKinds), read through answerKinds:
	// only a confined lookup and a complement's search need them.
	kinds     textproc.AnswerKinds
	kindsRead bool
}

// maxWritten is how many of a question's stems written keeps.
const maxWritten = 32

// altWords is how many of a question's words with synonyms have their alternatives in the
// question's own array (alts), not in one of their own: a question has a few.
const altWords = 4

// questions keep the arrays of analysed questions for the next lookup.
var questions = sync.Pool{New: func() any { return &question{weights: map[string]float64{}} }}

// analyseQuestion analyses the question text (as received) in l, in arrays of a pooled question:
// release it when done with it.
func analyseQuestion(l *lexical.Lang, text string) *question {
	q := questions.Get().(*question)
	q.text = textproc.Normalize(text)
	if cap(q.written) < maxWritten {
		q.written = make([][2]string, 0, maxWritten)
	}
	if q.alts == nil {
		q.alts = make([]textproc.Alt, 0, altWords*textproc.MaxAlts)
	}
	qa := textproc.QuestionAnalysis{Words: q.words, Written: q.written[:0:maxWritten], Alts: q.alts,
		Tokens: q.tokens, Stems: q.stems, Ends: q.ends}
	l.Analyzer.AnalyseQuestion(&qa, q.text)
	q.words, q.written, q.alts = qa.Words, qa.Written, qa.Alts
	q.tokens, q.stems, q.ends = qa.Tokens, qa.Stems, qa.Ends
	q.terms, q.weights = queryTerms(q.words, q.terms, q.weights)
	q.resolved = judge.AppendQuestion(l, q.resolved, q.words)
	return q
}

// release empties the question and returns its arrays to the pool. Arrays and maps that a long
// question made large are dropped rather than kept. The arrays kept are not cleared: the strings
// they held stay in them, unread (each is appended to from empty), until a later question
// overwrites them or the pool drops the question at a collection after the next. Clearing an
// array of strings while a collection marks costs a write barrier per string: the pooled arrays
// of a lookup (this question's, the words' scratch in textproc, L0's and fusion's) took about a
// twentieth of a lookup's time beside a search library that makes the collector run often
// (make bench-compare).
func (q *question) release() {
	const keep = 64
	if q.resolved.Size() > 4*keep {
		q.resolved = judge.Question{}
	} else {
		q.resolved = q.resolved.Cleared()
	}
	if cap(q.words) > keep {
		q.words = nil
	} else {
		q.words = q.words[:0]
	}
	if cap(q.terms) > keep || len(q.weights) > keep {
		q.terms, q.weights = nil, map[string]float64{}
	} else {
		clear(q.weights)
	}
	if cap(q.tokens) > keep || cap(q.stems) > keep || cap(q.ends) > keep {
		q.tokens, q.stems, q.ends = nil, nil, nil
	} else {
		q.tokens, q.stems, q.ends = q.tokens[:0], q.stems[:0], q.ends[:0]
	}
	q.alts = q.alts[:0]
	q.text, q.kindsRead = "", false
	questions.Put(q)
}

// answerKinds returns the kinds of fact the question asks for, read from its text the first time.
func (q *question) answerKinds() textproc.AnswerKinds {
	if !q.kindsRead {
		q.kinds, q.kindsRead = textproc.QuestionKinds(q.text), true
	}
	return q.kinds
}

// writtenAs returns the word the question wrote for the index term t (a stem), t itself when no
// word of the question stems to it (a synonym's).
func (q *question) writtenAs(t string) string {
	if i := slices.IndexFunc(q.written, func(w [2]string) bool { return w[0] == t }); i >= 0 {
		return q.written[i][1]
	}
	return t
}

// queryTerms lists the index terms of a question's words, each once: the words and their parts
// weigh 1, terms that only synonyms give weigh lexical.SynonymWeight. The terms are appended to
// terms[:0] and the weights put into weights (which must be empty; nil makes one when a synonym
// needs it), so that a caller may lend both from its scratch.
func queryTerms(words []textproc.Group, terms []string, weights map[string]float64) ([]string, map[string]float64) {
	n := 0
	for _, g := range words {
		n += 1 + len(g.Parts) + len(g.Alts)
	}
	// The words and their parts, in order (as textproc.Flatten lists them), then the synonyms'.
	terms = slices.Grow(terms[:0], n)
	for _, g := range words {
		terms = appendUnique(terms, g.Term)
		for _, p := range g.Parts {
			terms = appendUnique(terms, p)
		}
	}
	for _, g := range words {
		for _, a := range g.Alts {
			if slices.Contains(terms, a.Term) {
				continue
			}
			terms = append(terms, a.Term)
			if weights == nil {
				weights = map[string]float64{}
			}
			weights[a.Term] = lexical.SynonymWeight
		}
	}
	return terms, weights
}
