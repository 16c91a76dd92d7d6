package judge

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// A question asks for one fact, and the section that states it usually holds the question's
// words in one sentence ("a stone chip larger than 2 cm" ... "blocked for rental"), where a
// section that only lists what to record or whom to tell holds them spread over many. BM25 sees
// neither: it scores a passage's terms as a bag. Focus adds what it misses, within the hits a
// search returned.

// FocusWeight is how much a hit's score grows when one of its sentences holds every query term
// (by idf weight): a score is multiplied by 1 + FocusWeight × the share the best sentence holds.
// AnswerWeight is the further growth, × (1 + AnswerWeight), when a sentence that shares a query
// term states a fact of the kind the question asks for (a time limit for "how long"). Both were
// chosen on the natural development sets; see docs/retrieval.md.
const (
	FocusWeight  = 0.6
	AnswerWeight = 0.2
)

// Focus rescores hits of a search for query (weight as lexical.Lang.SearchWeighted takes it) by their best
// sentence, and sorts them best first, equal scores keeping their order: each score is
// multiplied as FocusWeight and AnswerWeight say, kinds being the kinds of fact the question
// asks for (QuestionKinds; 0 for none). Its cost follows the hits' sentences, not the corpus.
func Focus(l *lexical.Lang, hits []lexical.Hit, query []string, weight map[string]float64, kinds textproc.AnswerKinds) {
	if len(hits) < 2 {
		return
	}
	var buf [32]lexical.QueryTerm
	focus(l, hits, l.Resolve(query, weight, buf[:0]), kinds)
}

// SearchFocused is lexical.Lang.SearchWeighted followed by Focus of its hits with the same query,
// weights and kinds, the query's terms resolved once for both.
func SearchFocused(l *lexical.Lang, query []string, weight map[string]float64, category string, topK int, kinds textproc.AnswerKinds) []lexical.Hit {
	return searchFocused(l, query, weight, category, -1, topK, kinds)
}

// SearchFocusedIn is SearchFocused confined to the sections of the document doc (an index into
// Docs), as lexical.Lang.SearchWeightedIn is; an index out of range finds nothing.
func SearchFocusedIn(l *lexical.Lang, query []string, weight map[string]float64, doc, topK int, kinds textproc.AnswerKinds) []lexical.Hit {
	if doc < 0 {
		return nil
	}
	return searchFocused(l, query, weight, "", doc, topK, kinds)
}

func searchFocused(l *lexical.Lang, query []string, weight map[string]float64, category string, doc, topK int, kinds textproc.AnswerKinds) []lexical.Hit {
	var buf, sorted [32]lexical.QueryTerm
	terms := l.Resolve(query, weight, buf[:0])
	// The search sorts its terms; Focus weighs them in query order.
	hits := l.SearchResolved(append(sorted[:0], terms...), category, doc, topK)
	focus(l, hits, terms, kinds)
	return hits
}

// focus is Focus over resolved terms (see lexical.Lang.Resolve), which it weighs in their order.
func focus(l *lexical.Lang, hits []lexical.Hit, terms []lexical.QueryTerm, kinds textproc.AnswerKinds) {
	if len(hits) < 2 {
		return
	}
	var qs queryTable
	total := 0.0
	for _, q := range terms {
		if qs.add(q.Term, q.Weight) {
			total += q.Weight
		}
	}
	if total == 0 {
		return
	}
	var weights [64]float64
	sents := l.SentenceIndex()
	for i := range hits {
		best, answers := 0.0, false
		stated, terms, masks, words := sents.Passage(hits[i].Passage)
		// w[s] is sentence s's weight: the weights of the query terms it holds.
		var w []float64
		if len(stated) <= len(weights) {
			w = weights[:len(stated)]
			clear(w)
		} else {
			w = make([]float64, len(stated)) // a passage of more than 64 sentences, rare
		}
		for j, t := range terms {
			if !qs.may(t) {
				continue
			}
			x := qs.get(t)
			if x == 0 {
				continue
			}
			for k, m := range masks[j*words : (j+1)*words] {
				for ; m != 0; m &= m - 1 {
					w[lexical.MaskBits*k+bits.TrailingZeros16(m)] += x
				}
			}
		}
		// The weights are sums of positive weights, never NaN: a comparison is max. Most questions
		// ask for no kind of fact, and their sentences' kinds are not read.
		for s, x := range w {
			if x > best {
				best = x
			}
			if kinds != 0 && x > 0 && textproc.AnswerKinds(stated[s])&kinds != 0 {
				answers = true
			}
		}
		f := 1 + FocusWeight*best/total
		if answers {
			f *= 1 + AnswerWeight
		}
		hits[i].Score *= f
	}
	slices.SortStableFunc(hits, func(a, b lexical.Hit) int { return cmp.Compare(b.Score, a.Score) })
}

// queryTable holds a query's terms and weights in a small open-addressed table on the stack, so
// that no lookup needs anything the size of the vocabulary (a per-term array would be 800 KB at
// 10,000 procedures for the twenty or so terms of a question).
type queryTable struct {
	keys [queryTableSize]lexical.Term // a term plus one; 0 for an empty slot
	w    [queryTableSize]float64
	n    int
	// bits has the bit maySlot(t) set for every term t of the table: most of a sentence's terms
	// are no query term, and a clear bit says so without probing the table.
	bits [4]uint64
}

// maySlot is the bit of bits that t sets: the low 8 bits of its hash, where querySlot takes the
// top 7.
func maySlot(t lexical.Term) uint32 { return (uint32(t) * 2654435761) & 0xff }

// may reports whether t may be in the table: false means it is not.
func (q *queryTable) may(t lexical.Term) bool {
	b := maySlot(t)
	return q.bits[b>>6]&(1<<(b&63)) != 0
}

// queryTableSize is the table's size, a power of two; it takes at most three quarters of it,
// far more terms than a question's words, parts and synonyms give (see textproc.MaxAlts).
const queryTableSize = 128

func querySlot(t lexical.Term) uint32 { return (uint32(t) * 2654435761) >> 25 } // the top 7 bits

// add adds t with weight w; false when t is there already or the table is full.
func (q *queryTable) add(t lexical.Term, w float64) bool {
	if q.n >= queryTableSize*3/4 {
		return false
	}
	for i := querySlot(t); ; i = (i + 1) % queryTableSize {
		switch q.keys[i] {
		case 0:
			q.keys[i], q.w[i] = t+1, w
			q.n++
			b := maySlot(t)
			q.bits[b>>6] |= 1 << (b & 63)
			return true
		case t + 1:
			return false
		}
	}
}

// get returns t's weight, 0 when t is no query term.
func (q *queryTable) get(t lexical.Term) float64 {
	for i := querySlot(t); ; i = (i + 1) % queryTableSize {
		switch q.keys[i] {
		case 0:
			return 0
		case t + 1:
			return q.w[i]
		}
	}
}
