package retrieval

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// A question can need two procedures ("a shunt at a junction, and a speed camera earlier on the
// same trip: how many photos, and what do we charge on top of the fine?"). Its informative words
// then split between them: each procedure holds a part of the question the other does not. Such
// procedures are complements, not competitors: the blocks include each one's best section for
// its part, and no clarification asks the operator to choose between them.

// Complement thresholds (docs/retrieval.md, "Two needs in one question"), chosen on the
// development sets of eval/ (the single-need sets and multipart-dev.yaml).
const (
	// MinPartWords is how many specific words of the question a procedure must hold that the
	// primary block's procedure does not, for it to answer another part of the question.
	MinPartWords = 2
	// PartSpecific is the idf over procedures from which a word is specific: a word most
	// procedures use ("customer", "car", "report") is no part of a need of its own.
	PartSpecific = 0.7
	// maxComplements is how many complements a lookup names.
	maxComplements = 2
	// complementCandidates is how many procedures of the paths' rankings are tried.
	complementCandidates = 6
)

// part is a complement found: its document, the words of the question it covers, and its best
// section for them.
type part struct {
	doc      int
	words    uint64 // the question's words the procedure holds and the others do not
	specific float64
	passage  int     // its best section for its words, -1 when none holds them
	score    float64 // that section's score in the focused search of the procedure's sections
	strong   bool
}

// complements finds the procedures that answer other parts of the question than the primary
// block's procedure primary, among the procedures the paths rank (and others), best first: by the
// question's words (wordParts), then by its sentences (sentenceParts).
func complements(l *lexical.Lang, q *question, primary int, views *pathViews, others []int) []part {
	if primary < 0 {
		return nil
	}
	var buf [complementCandidates]int
	docs := pathDocs(l, views, others, buf[:0])
	var masks [maxSentences]uint64
	out := wordParts(l, q, primary, docs)
	return sentenceParts(l, q, sentenceMasks(q, masks[:0]), primary, docs, out)
}

// wordParts finds the complements among docs by the question's words alone: procedures holding
// specific words the primary's procedure does not.
func wordParts(l *lexical.Lang, q *question, primary int, docs []int) []part {
	covered := judge.DocHeld(l, q.resolved, primary)
	if specificCount(q.resolved, ^covered&wordsMask(q.resolved)) < MinPartWords {
		return nil // the primary's procedure holds (nearly) the whole question
	}
	var out []part
	// Each procedure's words are found once, however many complements are looked for.
	var heldBuf [complementCandidates]uint64
	helds := heldBuf[:0]
	for _, d := range docs {
		var held uint64
		if d != primary {
			held = judge.DocHeld(l, q.resolved, d)
		}
		helds = append(helds, held)
	}
	for len(out) < maxComplements {
		best := part{doc: -1}
		for i, d := range docs {
			if d == primary || slices.ContainsFunc(out, func(p part) bool { return p.doc == d }) {
				continue
			}
			held := helds[i]
			own := held &^ covered
			if specificCount(q.resolved, own) < MinPartWords || specificCount(q.resolved, covered&^held) == 0 && len(out) == 0 {
				continue // no part of its own, or nothing of the primary's it lacks: a competitor
			}
			_, weight := specific(q.resolved, own)
			cand := part{doc: d, words: own, specific: weight}
			if cand.specific <= best.specific || judge.FrontHeld(l, q.resolved, d)&own == 0 || !cand.located(l, q) {
				continue // the part names nothing of the procedure's subject, or its words are scattered
			}
			best = cand
		}
		if best.doc < 0 {
			break
		}
		covered |= best.words
		out = append(out, best)
	}
	return out
}

// wordsMask is the mask of every word of q a mask tells apart.
func wordsMask(q judge.Question) uint64 {
	n := min(q.Words(), 64)
	if n == 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// specific counts the specific words of mask m and sums their specificity.
func specific(q judge.Question, m uint64) (n int, weight float64) {
	for ; m != 0; m &= m - 1 {
		if w := q.WordSpecific(bits.TrailingZeros64(m)); w >= PartSpecific {
			n++
			weight += w
		}
	}
	return n, weight
}

// specificCount counts the specific words of mask m.
func specificCount(q judge.Question, m uint64) int {
	n, _ := specific(q, m)
	return n
}

// bestSection finds the complement's section for its part (a focused search of its own
// sections for the words of its part) and counts the part's specific words it holds: strong when
// it holds every one of them, weak when only some (the part's other words stand elsewhere in the
// procedure, or nowhere a section states them together).
func (p *part) bestSection(l *lexical.Lang, q *question) (held int) {
	var terms []string
	for m := p.words; m != 0; m &= m - 1 {
		terms = judge.WordTerms(l, q.resolved, bits.TrailingZeros64(m), terms)
	}
	p.passage = -1
	hits := scopeAfterHits(l, judge.SearchFocusedIn(l, terms, nil, p.doc, scopeAfter+1, q.answerKinds()))
	if len(hits) == 0 {
		return 0
	}
	p.passage, p.score = hits[0].Passage, hits[0].Score
	held = specificCount(q.resolved, judge.PassageHeld(l, q.resolved, p.passage)&p.words)
	p.strong = held == specificCount(q.resolved, p.words)
	return held
}

// located finds the complement's best section and reports whether it holds at least
// MinPartWords of the part's specific words together: words of a second need stand in one
// section of its procedure, while words a chatty question mentions in passing are scattered.
func (p *part) located(l *lexical.Lang, q *question) bool {
	return p.bestSection(l, q) >= MinPartWords
}

// covers names the words of the complement's part.
func (p part) covers(l *lexical.Lang, q *question) []string {
	var out []string
	for m := p.words; m != 0; m &= m - 1 {
		if w := judge.WordString(l, q.resolved, bits.TrailingZeros64(m)); w != "" {
			out = appendUnique(out, w)
		}
	}
	return out
}

// pathDocs appends to out the procedures the evidence paths rank, in path order, then more, each
// once, at most complementCandidates.
func pathDocs(l *lexical.Lang, views *pathViews, more []int, out []int) []int {
	add := func(d int) {
		if d >= 0 && !slices.Contains(out, d) && len(out) < complementCandidates {
			out = append(out, d)
		}
	}
	for i := range views.list {
		for _, p := range views.list[i].procs {
			add(l.DocIndex(p.doc))
		}
	}
	for _, d := range more {
		add(d)
	}
	return out
}

// placeComplements places each complement's best section right after the primary block (made
// a block of its own when no path returned it) and keeps the blocks within topK: the primary
// first, then each complement's best block, then the rest by rank.
func placeComplements(l *lexical.Lang, parts []part, blocks []ranked, topK, extra int) ([]ranked, []lookup.EvidenceBlock) {
	order := slices.Clone(blocks)
	at := 1
	for _, p := range parts {
		if p.passage < 0 {
			continue
		}
		k := slices.IndexFunc(order, func(b ranked) bool { return b.local && b.localPassage == p.passage })
		switch {
		case k >= 0 && k <= at:
		case k > 0:
			b := order[k]
			order = slices.Delete(order, k, k+1)
			order = slices.Insert(order, min(at, len(order)), b)
		default:
			order = slices.Insert(order, min(at, len(order)), localBlock(l, lexical.Hit{Passage: p.passage, Score: p.score}, reasonComplement))
		}
		at++
	}
	return renumber(order, topK, extra)
}

// nameComplements names the complements in the relevance, each with its best block's source,
// the words it covers and its own assessment, says in the reason which parts they answer, and
// drops them from the alternatives: complements are never offered as a choice.
func nameComplements(l *lexical.Lang, q *question, parts []part, rel *judgement) {
	for _, p := range parts {
		if p.passage < 0 {
			continue
		}
		d := l.Docs[p.doc]
		c := lookup.Complement{DocumentID: d.ID, Title: d.Title, Source: l.Source(p.passage), Covers: p.covers(l, q), Assessment: lookup.AssessmentWeak}
		if p.strong {
			c.Assessment = lookup.AssessmentStrong
		}
		rel.Complements = append(rel.Complements, c)
		rel.Alternatives = slices.DeleteFunc(rel.Alternatives, func(a lookup.Alternative) bool { return a.DocumentID == d.ID })
	}
	if len(rel.Complements) > 0 {
		rel.Reason += "; " + complementsReason(rel.Complements)
	}
}

// complementsReason says which parts of the question the complements answer.
func complementsReason(cs []lookup.Complement) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.DocumentID + " answers the question's part on " + strings.Join(c.Covers, ", ") + " (" + string(c.Assessment) + ")"
	}
	return strings.Join(parts, "; ")
}

// renumber makes the response's blocks of order, at most topK, the array keeping room for extra
// more, each ranked block pointing to its own and the ranks in order.
func renumber(order []ranked, topK, extra int) ([]ranked, []lookup.EvidenceBlock) {
	n := min(len(order), topK)
	out := make([]ranked, n)
	evidence := make([]lookup.EvidenceBlock, n, n+extra)
	for i := range out {
		evidence[i] = *order[i].EvidenceBlock
		evidence[i].Rank = i + 1
		out[i] = order[i]
		out[i].EvidenceBlock = &evidence[i]
	}
	return out, evidence
}

// complementIDs are the complements' procedures, as the trace records them; nil for none.
func complementIDs(cs []lookup.Complement) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.DocumentID)
	}
	return ids
}
