package retrieval

import (
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// The section that answers: among a procedure's sections, the one that states the question's
// deciding detail (a time limit, a fee, whom to call) should come first. Fusion ranks the
// sections the paths returned; a semantic platform returns a handful of chunks over every
// procedure, and the primary procedure's answering section is often not among them, or behind
// other procedures' sections. The procedure's own sections are all in the local index: a focused
// lexical search of them (judge.SearchFocusedIn) finds the one stating the question's words in a
// sentence, and places it after the primary block.

// placeBestSection places the primary block's procedure's best section, by a focused search of
// that procedure's own sections with its scope routed (scopeAfterHits), right after the primary
// block, unless it is the primary block or the next one already: moved up when the blocks hold
// it, a block of its own (hit reason l0:best-section, its score in that search) when they do not.
// It returns at most topK blocks, the response's array keeping room for extra more, and the
// blocks unchanged when nothing moves.
func placeBestSection(l *lexical.Lang, q *question, blocks []ranked, evidence []lookup.EvidenceBlock, topK, extra int) ([]ranked, []lookup.EvidenceBlock) {
	if len(blocks) == 0 || topK < 2 {
		return blocks, evidence // no second place to fill
	}
	d := l.DocIndex(blocks[0].DocumentID)
	if d < 0 {
		return blocks, evidence
	}
	hits := scopeAfterHits(l, judge.SearchFocusedIn(l, q.terms, q.weights, d, scopeAfter+1, q.answerKinds()))
	if len(hits) == 0 {
		return blocks, evidence
	}
	best := hits[0]
	k := slices.IndexFunc(blocks, func(b ranked) bool { return b.local && b.localPassage == best.Passage })
	if k == 0 || k == 1 {
		return blocks, evidence
	}
	order := slices.Clone(blocks)
	if k > 1 {
		b := order[k]
		order = slices.Delete(order, k, k+1)
		order = slices.Insert(order, 1, b)
	} else {
		order = slices.Insert(order, 1, localBlock(l, best, reasonBestSection))
	}
	return renumber(order, topK, extra)
}

// scopeAfterHits moves the procedure's scope section among hits (sections of one procedure, best
// first) behind the scopeAfter best of its other sections, as routeAfterScope does in fusion: the
// scope's list of situations matches an operator's words best, the deciding fact sits in the
// sections after it.
func scopeAfterHits(l *lexical.Lang, hits []lexical.Hit) []lexical.Hit {
	from := slices.IndexFunc(hits, func(h lexical.Hit) bool { _, sec := l.Doc(h.Passage); return sec.Number == 1 })
	to := min(len(hits)-1, scopeAfter)
	if from < 0 || from >= to {
		return hits
	}
	scope := hits[from]
	copy(hits[from:to], hits[from+1:to+1])
	hits[to] = scope
	return hits
}
