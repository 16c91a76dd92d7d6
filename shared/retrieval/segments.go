package retrieval

import (
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

// An operator who has two problems usually writes them in two sentences ("Customer noticed a
// ripped seat before starting, when should she send the photos? She also found someone's wallet
// in the door pocket, what does she do with it?"). The procedure that holds most of the question
// is then often one that mentions the other sentence's words in passing (a lost item is
// photographed too), so that no word of the second need is left to another procedure. The
// question's sentences tell the needs apart where its words cannot: a sentence whose words a
// section of another procedure holds clearly better than any section of the primary's asks for
// that procedure.

// maxSentences is how many of a question's sentences are told apart.
const maxSentences = 6

// SentenceAdvantage is how much more of a sentence's specific words (their summed specificity)
// another procedure's best section must hold than the primary's best section for it, for that
// sentence to be a part of its own. Chosen on the development sets of eval/ (the single-need
// sets and multipart-dev.yaml).
const SentenceAdvantage = 1.25

// sentenceMasks returns the mask of q's words in each of its sentences that holds at least
// MinPartWords specific words, appended to out; none unless two sentences are kept.
func sentenceMasks(q *question, out []uint64) []uint64 {
	if len(q.ends) < 2 || specificCount(q.resolved, wordsMask(q.resolved)) < 2*MinPartWords {
		return out // one sentence, or too few specific words for two of them
	}
	var buf [maskWords]string
	terms := resolvedTerms(q, buf[:0])
	from, start := len(out), 0
	for _, end := range q.ends {
		if len(out)-from == maxSentences {
			break
		}
		m := stemsMask(terms, q.stems[start:end])
		start = end
		if specificCount(q.resolved, m) >= MinPartWords {
			out = append(out, m)
		}
	}
	if len(out)-from < 2 {
		return out[:from] // a part of its own needs a sentence beside the primary's
	}
	return out
}

// stemsMask is the mask of the question's words (terms, resolvedTerms) among stems.
func stemsMask(terms, stems []string) uint64 {
	var m uint64
	for _, stem := range stems {
		if i := slices.Index(terms, stem); i >= 0 {
			m |= 1 << i
		}
	}
	return m
}

// maskWords is how many of a question's words a mask tells apart (judge's masks).
const maskWords = 64

// resolvedTerms appends to out the term of each of q's resolved words, in their order (the
// first maskWords): the words a mask's bits stand for.
func resolvedTerms(q *question, out []string) []string {
	for i := range min(q.resolved.Words(), maskWords) {
		out = append(out, q.resolved.Word(i))
	}
	return out
}

// passageMasks holds, for the procedures a sentence rule reads, the mask of the question's words
// each of their sections holds (judge.PassagesHeld), made once a procedure.
type passageMasks struct {
	n    int
	docs [complementCandidates + 1]int      // the primary and the candidates
	from [complementCandidates + 1]int      // the first passage of each of docs
	held [complementCandidates + 1][]uint64 // each of docs' sections' masks
	buf  [64]uint64                         // the masks of the first procedures read
	used int
}

// of returns the first passage of doc and its sections' masks.
func (pm *passageMasks) of(l *lexical.Lang, q *question, doc int) (int, []uint64) {
	if k := slices.Index(pm.docs[:pm.n], doc); k >= 0 {
		return pm.from[k], pm.held[k]
	}
	lo, hi := l.Postings().DocPassages(doc)
	var held []uint64
	if pm.used+hi-lo <= len(pm.buf) {
		held, pm.used = pm.buf[pm.used:pm.used+hi-lo], pm.used+hi-lo
	} else {
		held = make([]uint64, hi-lo)
	}
	judge.PassagesHeld(l, q.resolved, doc, held)
	if pm.n < len(pm.docs) {
		pm.docs[pm.n], pm.from[pm.n], pm.held[pm.n] = doc, lo, held
		pm.n++
	}
	return lo, held
}

// sentenceHeld is doc's best section for a sentence's words, the one holding most of their
// specific weight (the first of equals), and the sentence's words it holds; -1 when no section
// holds a specific one.
func (pm *passageMasks) sentenceHeld(l *lexical.Lang, q *question, sentence uint64, doc int) (passage int, held uint64) {
	lo, masks := pm.of(l, q, doc)
	passage, best := -1, 0.0
	for i, m := range masks {
		if _, w := specific(q.resolved, m&sentence); w > best {
			passage, held, best = lo+i, m&sentence, w
		}
	}
	return passage, held
}

// sentenceParts finds more complements among docs by the question's sentences, after out: for
// each sentence but the only one the primary's procedure answers (its best section holds
// MinPartWords of the sentence's specific words), the procedure whose best section holds the
// sentence's words clearly better (SentenceAdvantage) than the primary's and than out's
// complements do, its front matter naming a word of the sentence the primary's does not. The
// primary must answer a sentence: the others are then parts of their own, not its situation told
// at length.
func sentenceParts(l *lexical.Lang, q *question, masks []uint64, primary int, docs []int, out []part) []part {
	if len(masks) == 0 {
		return out
	}
	var pm passageMasks
	var primaryHeld [maxSentences]uint64
	answered := 0 // the sentences the primary answers
	for i, m := range masks {
		_, primaryHeld[i] = pm.sentenceHeld(l, q, m, primary)
		if specificCount(q.resolved, primaryHeld[i]) >= MinPartWords {
			answered++
		}
	}
	for i, m := range masks {
		own := specificCount(q.resolved, primaryHeld[i]) >= MinPartWords
		if len(out) == maxComplements || answered == 0 || answered == 1 && own {
			continue
		}
		if p, ok := pm.sentencePart(l, q, m, primaryHeld[i], docs, primary, out); ok {
			out = append(out, p)
		}
	}
	return out
}

// sentencePart finds the procedure among docs whose best section holds the sentence's words
// clearly better than the primary's best section for them (primaryHeld) and than the complements
// taken hold them, its front matter naming a word of the sentence the primary's does not.
func (pm *passageMasks) sentencePart(l *lexical.Lang, q *question, sentence, primaryHeld uint64, docs []int, primary int, taken []part) (part, bool) {
	_, primaryWeight := specific(q.resolved, primaryHeld)
	// The complements found hold their words of the sentence as the primary does.
	incumbent, incumbentWeight := primaryHeld, primaryWeight
	for _, p := range taken {
		_, w := specific(q.resolved, p.words&sentence)
		incumbent |= p.words & sentence
		incumbentWeight = max(incumbentWeight, w)
	}
	// The sentence names the procedure's subject: a word of it that its front matter holds and the
	// primary's does not.
	primaryFront := judge.FrontHeld(l, q.resolved, primary)
	best, bestWeight := part{doc: -1}, 0.0
	for _, d := range docs {
		if d == primary || slices.ContainsFunc(taken, func(p part) bool { return p.doc == d }) {
			continue
		}
		passage, held := pm.sentenceHeld(l, q, sentence, d)
		n, weight := specific(q.resolved, held)
		enough := n >= MinPartWords || n == 1 && incumbentWeight == 0 // one specific word where the others have none
		if passage < 0 || !enough || specificCount(q.resolved, held&^incumbent) == 0 ||
			weight < SentenceAdvantage*incumbentWeight || weight <= bestWeight || judge.FrontHeld(l, q.resolved, d)&held&^primaryFront == 0 {
			continue
		}
		best, bestWeight = part{doc: d, words: held, specific: weight, passage: passage, strong: true}, weight
	}
	return best, best.doc >= 0
}
