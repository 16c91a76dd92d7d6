package retrieval

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// excerpt cuts a block's content around the sentences that match the question best, instead of
// its first characters, so that the deciding fact (a time limit, a fee, whom to call) is in the
// excerpt. Sentences (and list items) are scored by the IDF weight of the question's informative
// words they hold (a synonym's at lexical.SynonymWeight); the best ones are taken while they fit
// in max characters, each with the sentence after it (which often holds the consequence: the
// limit, the fee), then the ones before them. Runs of taken sentences are quoted verbatim in the
// section's order; the excerpt begins at the beginning of a sentence (never with "…"), gaps
// between runs and a cut end are marked with "…". Content that matches nothing gives its
// beginning.
//
// kinds are the kinds of fact the question asks for (see textproc.QuestionKinds): a sentence holding
// one of them ("within 4 hours" for "how long") scores answerBonus of the best sentence's score
// on top of its words', so that the fact is quoted even when it shares no word with the question.
func excerpt(l *lexical.Lang, words []textproc.Group, kinds textproc.AnswerKinds, content string, max int) string {
	if utf8.RuneCountInString(content) <= max {
		return content
	}
	sents := sentences(content)
	score := sentenceScores(l, excerptWeights(l, words), kinds, sents)
	var order []int
	for i := range sents {
		if score[i] > 0 {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return textproc.Clip(content, max)
	}
	// Best first; equal scores in the section's order.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && score[order[j]] > score[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	picked, size := pickSentences(sents, order, max)
	if size == 0 {
		// Even the best sentence is longer than max: its beginning.
		return textproc.Clip(strings.TrimSpace(sents[order[0]]), max-1) + "…"
	}
	return quotePicked(sents, picked)
}

// excerptWeights weighs the question's informative words by their IDF, their compounds' parts
// at half of it, their synonyms' at lexical.SynonymWeight of it.
func excerptWeights(l *lexical.Lang, words []textproc.Group) map[string]float64 {
	want := map[string]float64{}
	for _, g := range words {
		if !judge.Informative(g.Term) {
			continue
		}
		want[g.Term] = l.IDF(g.Term)
		for _, p := range g.Parts {
			if _, ok := want[p]; !ok && judge.Informative(p) {
				want[p] = l.IDF(p) / 2
			}
		}
		for _, a := range g.Alts {
			if _, ok := want[a.Term]; !ok && judge.Informative(a.Term) {
				want[a.Term] = lexical.SynonymWeight * l.IDF(a.Term)
			}
		}
	}
	return want
}

// sentenceScores scores each sentence by the weights of the words it holds, each once, plus
// answerBonus of the best score for a sentence holding a fact of the kinds asked.
func sentenceScores(l *lexical.Lang, want map[string]float64, kinds textproc.AnswerKinds, sents []string) []float64 {
	score := make([]float64, len(sents))
	for i, snt := range sents {
		seen := map[string]bool{}
		for _, t := range l.Analyzer.Terms(snt) {
			if w, ok := want[t]; ok && !seen[t] {
				seen[t] = true
				score[i] += w
			}
		}
	}
	if kinds != 0 {
		best := slices.Max(score)
		for i, snt := range sents {
			if best > 0 && kinds.Answers(snt) {
				score[i] += answerBonus * best
			}
		}
	}
	return score
}

// pickSentences takes the sentences in order (best first) while they fit in max characters,
// each with the sentence after it, then the ones before them; it returns which it took and
// their size.
func pickSentences(sents []string, order []int, max int) ([]bool, int) {
	picked := make([]bool, len(sents))
	size := 0
	take := func(i int) {
		if i < 0 || i >= len(sents) || picked[i] {
			return
		}
		if n := utf8.RuneCountInString(sents[i]) + 1; size+n <= max {
			picked[i] = true
			size += n
		}
	}
	for _, i := range order {
		take(i)
		if picked[i] {
			take(i + 1)
		}
	}
	for _, i := range order {
		if picked[i] {
			take(i - 1)
		}
	}
	return picked, size
}

// quotePicked quotes the runs of picked sentences verbatim, with their own line breaks, the gaps
// between runs and a cut end marked with "…".
func quotePicked(sents []string, picked []bool) string {
	var b strings.Builder
	for i := 0; i < len(sents); i++ {
		if !picked[i] {
			continue
		}
		j := i
		for j < len(sents) && picked[j] {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(" … ")
		}
		b.WriteString(strings.TrimSpace(strings.Join(sents[i:j], "")))
		i = j
	}
	if !picked[len(sents)-1] {
		b.WriteString("…")
	}
	return b.String()
}

// answerBonus is the share of the best sentence's score a sentence holding a fact of the kind
// asked adds to its own.
const answerBonus = 1.0

// sentences are the sentences of content (textproc.WholeSentences): an excerpt never begins
// inside one.
func sentences(content string) []string {
	var out []string
	for start, end := range textproc.WholeSentences(content) {
		out = append(out, content[start:end])
	}
	return out
}
