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
// weigh 1, terms that only synonyms give weigh lexical.SynonymWeight.
func queryTerms(words []textproc.Group) ([]string, map[string]float64) {
	terms := uniqueTerms(textproc.Flatten(words))
	var weights map[string]float64
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

func uniqueTerms(terms []string) []string {
	out := terms[:0:0]
	for _, t := range terms {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
