package retrieval

import (
	"strings"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// excerpt cuts a block's content around the sentences that match the question best, instead of
// its first characters, so that the deciding fact (a time limit, a fee, whom to call) is in the
// excerpt. Sentences are scored by the IDF weight of the question's informative words they hold;
// the best one is kept whole where it fits, then its neighbours, the better one first, while the
// excerpt stays within max characters. Cuts are marked with "…". Content that matches nothing
// gives its beginning.
func excerpt(l *lexical.Lang, words []textproc.Group, content string, max int) string {
	if utf8.RuneCountInString(content) <= max {
		return content
	}
	sents := sentences(content)
	want := map[string]float64{}
	for _, g := range words {
		if !lexical.Informative(g.Term) {
			continue
		}
		want[g.Term] = l.IDF(g.Term)
		for _, p := range g.Parts {
			if _, ok := want[p]; !ok && lexical.Informative(p) {
				want[p] = l.IDF(p) / 2
			}
		}
		for _, a := range g.Alts {
			if _, ok := want[a.Term]; !ok && lexical.Informative(a.Term) {
				want[a.Term] = lexical.SynonymWeight * l.IDF(a.Term)
			}
		}
	}
	score := make([]float64, len(sents))
	best := -1
	for i, snt := range sents {
		seen := map[string]bool{}
		for _, t := range l.Analyzer.Terms(snt) {
			if w, ok := want[t]; ok && !seen[t] {
				seen[t] = true
				score[i] += w
			}
		}
		if score[i] > 0 && (best < 0 || score[i] > score[best]) {
			best = i
		}
	}
	if best < 0 {
		return Clip(content, max)
	}
	lo, hi := best, best+1
	size := utf8.RuneCountInString(sents[best])
	for {
		canLeft := lo > 0 && size+utf8.RuneCountInString(sents[lo-1]) <= max
		canRight := hi < len(sents) && size+utf8.RuneCountInString(sents[hi]) <= max
		if canLeft && canRight {
			// The sentence after a match more often holds its consequence: it wins ties.
			canLeft = score[lo-1] > score[hi]
			canRight = !canLeft
		}
		switch {
		case canRight:
			size += utf8.RuneCountInString(sents[hi])
			hi++
			continue
		case canLeft:
			lo--
			size += utf8.RuneCountInString(sents[lo])
			continue
		}
		break
	}
	text := strings.TrimSpace(strings.Join(sents[lo:hi], ""))
	if utf8.RuneCountInString(text) > max-2 {
		text = string([]rune(text)[:max-2])
	}
	if lo > 0 {
		text = "…" + text
	}
	if hi < len(sents) {
		text += "…"
	}
	return text
}

// sentences splits text into sentences and list items, each keeping its trailing space or line
// break, so that joining neighbours gives back the original text.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := -1
		switch {
		case c == '\n':
			end = i + 1
		case (c == '.' || c == '?' || c == '!' || c == ';') && i+1 < len(text) && text[i+1] == ' ':
			end = i + 2
		}
		if end > 0 {
			if strings.TrimSpace(text[start:end]) != "" {
				out = append(out, text[start:end])
			} else if len(out) > 0 {
				out[len(out)-1] += text[start:end]
			}
			start = end
			i = end - 1
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
