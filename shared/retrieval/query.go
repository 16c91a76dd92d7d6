package retrieval

import (
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// analyse is the analysis of a question: its words, their compound parts and their synonyms.
func analyse(l *lexical.Lang, question string) []textproc.Group {
	return l.Analyzer.QuestionWords(question)
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
