package retrieval

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// fuseScratch is fuse's working memory, kept for the next call: the blocks being assembled and
// the lists pick works on. Nothing in it outlives a call.
type fuseScratch struct {
	pool         []fusing
	all          []*fusing
	left, picked []*fusing
	same         []int // pick's count of picked blocks per remaining block's document
}

var fuseScratches = sync.Pool{New: func() any { return &fuseScratch{} }}

// reserve makes room for n blocks in every list, so that none of them grows during a call.
func (sc *fuseScratch) reserve(n int) {
	if cap(sc.pool) < n {
		sc.pool = make([]fusing, 0, n)
		sc.all = make([]*fusing, 0, n)
		sc.left = make([]*fusing, 0, n)
		sc.picked = make([]*fusing, 0, n)
	}
}

// release returns the scratch to the pool. Its arrays keep this call's blocks, unread (each is
// appended to from empty), until the next call overwrites them or the pool drops the scratch:
// see question.release.
func (sc *fuseScratch) release() {
	fuseScratches.Put(sc)
}

// fusing is an evidence block being assembled from L0 and L1 hits.
type fusing struct {
	docID string
	// version and anchor are, with docID, the block's source identity: blocks of the same one
	// are merged.
	version, anchor string
	// cand is the best L1 chunk of the block, nil for a block L0 alone found; passage is the
	// local copy's passage whose whole section the block carries (for an L1 chunk: when the
	// local copy holds the section in the same version), -1 when none.
	cand    *port.Candidate
	passage int
	// match is the L0 match of the block's document, nil when L0 did not find it; more are
	// further ones, should two documents share an id. Their hit reasons follow L1's (see
	// hitReasons).
	match    *lexical.FrontMatch
	more     []*lexical.FrontMatch
	l0Rank   int // 1-based rank in the L0 list; 0 when L0 did not find the block
	l1Rank   int // 1-based rank among L1's distinct sections; 0 when L1 did not return it
	l0Weight float64
	l1Score  float64 // the best chunk's score: a section is counted once, however many chunks
	l1Chunks int
	rrf      float64
	r1, r0   int     // the L1 and L0 ranks rrf is made of, which the same-document penalty shifts
	tie      float64 // breaks equal fused values: the L1 score, moved with rrf by routeAfterScope
	order    int     // passage index: document id, then section order, for ties
}

// ScoreScale describes one kind of L1 score: when one candidate is clearly stronger than another,
// and, for a semantic kind, from which score on a block is grounded. Scores of different kinds
// are never compared with each other.
type ScoreScale struct {
	// Clear is the margin by which a candidate is clearly stronger than another: an absolute
	// difference for a bounded scale (cosine similarity), a ratio minus one when Relative (BM25).
	Clear    float64
	Relative bool
	// Grounded is the score at or above which a semantic primary block is grounded on its own;
	// Supported the lower score at which it is grounded when the block also holds informative
	// words of the question. Zero means the kind has no such scale (BM25 is judged lexically).
	Grounded, Supported float64
	// Tie is the difference below which two scores are the same evidence and share an L1 rank,
	// so that L0 decides between them: absolute, or a ratio when Relative. Zero: only equal
	// scores share a rank.
	Tie float64
}

// tied reports whether score, at most best, is within Tie of best.
func (sc ScoreScale) tied(score, best float64) bool {
	if score >= best {
		return true
	}
	if sc.Relative {
		return score > best*(1-sc.Tie)
	}
	return best-score < sc.Tie
}

// filterTrusted is the best score a category-filtered call must reach to stand alone: clearly
// above Grounded (by Clear, 0.75 for cosine similarity by default). A filter that came from the
// wrong category still returns that category's best sections, which can score as high as a
// grounded answer; only a clearly strong one shows the filter chose right, and anything less is
// checked by one unfiltered call.
func (sc ScoreScale) filterTrusted() float64 {
	if sc.Relative {
		return sc.Grounded
	}
	return sc.Grounded + sc.Clear
}

// clearlyStronger reports whether x's L1 evidence is clearly stronger than y's, so that no lift
// from L0 may put y before x. Against a block L1 did not return, a semantic candidate is clearly
// stronger when its own score could ground an answer.
func (sc ScoreScale) clearlyStronger(x, y *fusing) bool {
	if x.l1Rank == 0 {
		return false
	}
	if y.l1Rank == 0 {
		return sc.Supported > 0 && x.l1Score >= sc.Supported
	}
	if sc.Relative {
		return x.l1Score >= (1+sc.Clear)*y.l1Score
	}
	return x.l1Score-y.l1Score >= sc.Clear
}

// fuse merges L0 matches and L1 candidates into at most topK evidence blocks, by Reciprocal Rank
// Fusion: a block's fused value is 1/(k + its L1 rank) plus l0FusionWeight/(k + its L0 rank), so
// that the two paths' scores, which mean different things, are never added or compared. L1's
// evidence for a section is its best chunk, counted once. Blocks with the same source identity
// (document, version, section anchor) become one block whose hit reasons are the union of both
// paths'. Blocks are then picked greedily by fused value, a further block of a document already
// picked counting as if SameDocPenalty places worse; but never before a block whose L1 score is clearly stronger
// (see ScoreScale), so L0 lifts a candidate and breaks ties and never buries a stronger semantic
// one. Ties go by document id, then section order.
//
// lent is an array the caller lends for the blocks' first hit reasons, which ownReasons replaces
// before the lookup ends (see blocks).
func (s *Service) fuse(l *lexical.Lang, matches []lexical.FrontMatch, cands []port.Candidate, topK, extra int,
	lent []string) ([]ranked, []lookup.EvidenceBlock, *rankedArray) {
	sc := fuseScratches.Get().(*fuseScratch)
	defer sc.release()
	// Every candidate and every L0 match used makes at most one block, so pool never grows
	// past this: the blocks' pointers into it stay valid.
	sc.reserve(len(cands) + min(len(matches), topK))
	fz := fusion{l: l, pool: sc.pool[:0], all: sc.all[:0]}
	fz.rankCandidates(cands, s.scale())
	fz.liftMatches(matches, topK)
	for _, f := range fz.all {
		f.r1, f.r0 = f.l1Rank, f.l0Rank
		f.rrf, f.tie = s.rrf(f, 0), f.l1Score
	}
	routeAfterScope(l, fz.all)
	return s.blocks(l, s.pick(fz.all, topK, sc), extra, lent)
}

// fusion is one call's blocks being assembled: pool holds them, all points to each in the
// order they were made.
type fusion struct {
	l    *lexical.Lang
	pool []fusing
	all  []*fusing
}

// block returns the block of a source identity (document, version, section anchor), made when
// there is none yet (false). A call has a few dozen blocks at most (l1Pool), so they are
// searched.
func (fz *fusion) block(docID, version, anchor string) (*fusing, bool) {
	for _, f := range fz.all {
		if f.docID == docID && f.version == version && f.anchor == anchor {
			return f, true
		}
	}
	fz.pool = append(fz.pool, fusing{docID: docID, version: version, anchor: anchor, order: math.MaxInt, passage: -1})
	f := &fz.pool[len(fz.pool)-1]
	if p, ok := fz.l.PassageOf(docID, anchor); ok {
		f.order = p
	}
	fz.all = append(fz.all, f)
	return f, false
}

// rankCandidates makes a block of each section L1 returned, ranked by its best chunk among the
// distinct sections. Candidates come best first from the provider; sorting here keeps a
// provider's odd order from deciding ranks.
func (fz *fusion) rankCandidates(cands []port.Candidate, scale ScoreScale) {
	ordered := cands
	if !slices.IsSortedFunc(cands, func(a, b port.Candidate) int { return cmp.Compare(b.Score, a.Score) }) {
		ordered = slices.Clone(cands) // the caller's slice stays as it is
		sortCandidates(ordered)
	}
	sections, l1Rank, prev := 0, 0, 0.0
	for i := range ordered {
		c := &ordered[i]
		f, seen := fz.block(c.DocumentID, c.Version, c.Anchor)
		if !seen {
			f.cand = c
			if p := f.order; p != math.MaxInt { // block found the local copy's passage
				if d, _ := fz.l.Doc(p); d.Version == c.Version {
					// A chunk of a section the local copy holds in the same version: the block
					// carries the whole section, verbatim from the source, so that no chunk
					// boundary cuts the deciding fact away.
					f.passage = p
				}
			}
		}
		f.l1Chunks++
		if f.l1Rank == 0 {
			// A section's rank is its best chunk's among the distinct sections; equal scores,
			// and scores within the scale's Tie of the first of them, share a rank.
			sections++
			if sections == 1 || !scale.tied(c.Score, prev) {
				l1Rank, prev = sections, c.Score
			}
			f.l1Rank, f.l1Score = l1Rank, c.Score
		}
	}
}

// liftMatches ranks the first topK L0 matches. L0 matches documents by their front matter: its
// rank lifts every section of the document that L1 returned; a document L1 did not return is
// evidence through its best section.
func (fz *fusion) liftMatches(matches []lexical.FrontMatch, topK int) {
	l0Rank := 0
	for i := range matches[:min(len(matches), topK)] {
		m := &matches[i]
		// Equal weights share a rank (1, 2, 2, 4), so that the order of equals decides nothing.
		if i == 0 || m.Weight < matches[i-1].Weight {
			l0Rank = i + 1
		}
		d := fz.l.Docs[m.Doc]
		lifted := false
		for _, f := range fz.all {
			if f.docID == d.ID && f.l1Rank > 0 {
				f.lift(m, l0Rank)
				lifted = true
			}
		}
		if !lifted {
			p := m.Passage(fz.l)
			_, sec := fz.l.Doc(p)
			f, seen := fz.block(d.ID, d.Version, sec.Anchor)
			if !seen {
				f.passage = p
			}
			f.lift(m, l0Rank)
		}
	}
}

// lift gives the block the L0 rank of its document's match m (the first match's, should two
// documents share an id) and keeps m for its hit reasons.
func (f *fusing) lift(m *lexical.FrontMatch, l0Rank int) {
	if f.l0Rank == 0 {
		f.l0Rank, f.l0Weight = l0Rank, m.Evidence
	}
	if f.match == nil {
		f.match = m
	} else {
		f.more = append(f.more, m)
	}
}

// blocks makes the evidence blocks of the blocks picked, in order: their evidence, hit reasons,
// layer, score and fusion basis. The response's blocks are one array, with room for extra more
// after them; each ranked block points to its own. The hit reasons are in lent when it has room:
// they are read until ownReasons gives every block of the response reasons of its own.
func (s *Service) blocks(l *lexical.Lang, picked []*fusing, extra int, lent []string) ([]ranked, []lookup.EvidenceBlock, *rankedArray) {
	arr := getRanked(len(picked))
	out := arr.a
	evidence := make([]lookup.EvidenceBlock, len(picked), len(picked)+extra)
	fromL1 := l1Reason(s.provider.ScoreKind())
	texts := textsOf(l)
	// One array holds every block's hit reasons, each block its own stretch of it.
	n := 0
	for _, f := range picked {
		n += f.reasonCount()
	}
	reasons := lent[:0]
	if cap(lent) < n {
		reasons = make([]string, n)
	}
	reasons = reasons[:n]
	for i, f := range picked {
		b := &out[i]
		b.EvidenceBlock = &evidence[i]
		f.evidence(l, texts, b) // only for the blocks picked
		k := f.reasonCount()
		b.HitReasons, reasons = f.hitReasons(l, texts, fromL1, reasons[:0:k]), reasons[k:]
		switch {
		case f.l0Rank > 0 && f.l1Rank > 0:
			b.RetrievalLayer = lookup.LayerBoth
		case f.l0Rank > 0:
			b.RetrievalLayer = lookup.LayerL0
		default:
			b.RetrievalLayer = lookup.LayerL1
		}
		if f.l1Rank > 0 {
			b.Score = port.Score{Value: round4(f.l1Score), Kind: s.provider.ScoreKind(), HigherIsBetter: true}
		} else {
			b.Score = port.Score{Value: round4(f.l0Weight), Kind: l0WeightKind, HigherIsBetter: true}
		}
		b.Rank = i + 1
		b.fusion = lookup.FusionBasis{L0Rank: f.l0Rank, L1Rank: f.l1Rank, L1Chunks: f.l1Chunks, RRF: round6(f.rrf)}
		b.l1 = f.l1Rank > 0
		b.l0Weight = f.l0Weight
	}
	return out, evidence, arr
}

// rankedArray is the array of a lookup's ranked blocks as fusion makes them, pooled: the blocks
// are read until the lookup's trace is recorded, and the response does not hold them (its
// evidence blocks are an array of their own), so Lookup gives the array back; 550 B a lookup.
type rankedArray struct{ a []ranked }

var rankedArrays = sync.Pool{New: func() any { return new(rankedArray) }}

// maxPooledRanked is the longest array of ranked blocks kept in the pool.
const maxPooledRanked = 64

// getRanked returns an array of n zero ranked blocks.
func getRanked(n int) *rankedArray {
	arr := rankedArrays.Get().(*rankedArray)
	if cap(arr.a) < n {
		arr.a = make([]ranked, n)
	}
	arr.a = arr.a[:n]
	return arr
}

// release clears the array and returns it to the pool; nil is nothing to release.
func (arr *rankedArray) release() {
	if arr == nil {
		return
	}
	if cap(arr.a) > maxPooledRanked {
		arr.a = nil
	} else {
		clear(arr.a[:cap(arr.a)])
	}
	rankedArrays.Put(arr)
}

// evidence is the block's evidence as the response carries it: the L1 chunk's identity and text
// (the whole local section when the local copy holds it in the same version), or the local
// section L0 found; b's block is filled, and whether it carries a local passage.
func (f *fusing) evidence(l *lexical.Lang, texts *langTexts, b *ranked) {
	if c := f.cand; c != nil {
		*b.EvidenceBlock = lookup.EvidenceBlock{Source: c.Source, DocumentID: c.DocumentID, Version: c.Version, EffectiveDate: c.EffectiveDate,
			Title: c.Title, Section: c.Section, Category: c.Category, Content: c.Content}
		if f.passage >= 0 {
			_, sec := l.Doc(f.passage)
			b.Content = sec.Content
			b.local, b.localPassage = true, f.passage
		}
	} else {
		d, sec := l.Doc(f.passage)
		*b.EvidenceBlock = lookup.EvidenceBlock{Source: l.Source(f.passage), DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate,
			Title: d.Title, Section: sec.Heading, Category: d.Category, Content: sec.Content}
		b.local, b.localPassage = true, f.passage
	}
	if !b.local {
		b.Breadcrumb = knowledge.Breadcrumb(b.Title, b.Section)
		return
	}
	// The passage's own texts, made once (langTexts), when the block names its section as the
	// index does.
	if d, sec := l.Doc(b.localPassage); b.Title == d.Title && b.Section == sec.Heading {
		b.Breadcrumb = texts.breadcrumb(l, b.localPassage)
	} else {
		b.Breadcrumb = knowledge.Breadcrumb(b.Title, b.Section)
	}
	b.previewOf, b.preview = b.Content, texts.preview(l, b.localPassage)
}

// scopeAfter is how many of its procedure's other sections a scope section follows.
const scopeAfter = 3

// routeAfterScope moves a procedure's scope section (its first section, which says what the
// procedure covers) behind the procedure's scopeAfter best other sections in the pool: a question
// in an operator's words matches the scope's list of situations best, but the deciding fact (a
// time limit, a fee, whom to call) sits in the sections after it. The procedure's blocks keep
// their fused values and only change hands (the scope taking the value of the block it follows),
// so the procedure keeps its place among the others and the scope follows as context.
func routeAfterScope(l *lexical.Lang, all []*fusing) {
	type slot struct {
		rrf, tie float64
		r1, r0   int
	}
	var peerBuf [16]*fusing
	var slotBuf [16]slot
	for _, scope := range all {
		if !isScope(l, scope) {
			continue
		}
		peers := peerBuf[:0]
		for _, f := range all {
			if f.docID == scope.docID {
				peers = append(peers, f)
			}
		}
		if len(peers) < 2 {
			continue
		}
		slices.SortStableFunc(peers, func(a, b *fusing) int {
			if a.rrf != b.rrf {
				return cmp.Compare(b.rrf, a.rrf)
			}
			if before(a, b) {
				return -1
			}
			return 1
		})
		from := slices.Index(peers, scope)
		to := min(len(peers)-1, scopeAfter)
		if from >= to {
			continue
		}
		slots := slotBuf[:0]
		for _, f := range peers {
			slots = append(slots, slot{f.rrf, f.tie, f.r1, f.r0})
		}
		copy(peers[from:to], peers[from+1:to+1])
		peers[to] = scope
		for i, f := range peers {
			f.rrf, f.tie, f.r1, f.r0 = slots[i].rrf, slots[i].tie, slots[i].r1, slots[i].r0
		}
	}
}

func isScope(l *lexical.Lang, f *fusing) bool {
	if f.order == math.MaxInt {
		return false
	}
	_, sec := l.Doc(f.order)
	return sec.Number == 1
}

// Reciprocal Rank Fusion's constant k, 1/(k + rank), and how much an L0 rank counts against an
// L1 rank.
const (
	fusionK        = 60
	l0FusionWeight = 1
)

// rrf is a block's fused value, 1/(k + L1 rank) + l0FusionWeight/(k + L0 rank), with each rank
// shifted by shift places (the same-document penalty); the ranks are the block's place after
// routeAfterScope.
func (s *Service) rrf(f *fusing, shift float64) float64 {
	k := fusionK + shift
	var v float64
	if f.r1 > 0 {
		v += 1 / (k + float64(f.r1))
	}
	if f.r0 > 0 {
		v += l0FusionWeight / (k + float64(f.r0))
	}
	return v
}

// sortCandidates orders candidates best first, keeping the provider's order among equal scores.
func sortCandidates(cs []port.Candidate) {
	// Insertion sort: pools are at most a few dozen and this keeps equal scores stable.
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Score > cs[j-1].Score; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// SameDocPenalty is how many places worse each further block of a procedure already
// picked counts on every path, so that a second procedure that also matches is not crowded out of
// the first ranks by a third section of the first one, while a second section of a procedure that
// leads clearly still comes before a weak other procedure. The best block of every procedure
// keeps its own ranks, so no procedure moves down.
const SameDocPenalty = 2.0

// pick chooses up to topK blocks greedily: among the blocks that no remaining block is clearly
// stronger than, the one with the highest fused value after the same-document discount.
func (s *Service) pick(all []*fusing, topK int, sc *fuseScratch) []*fusing {
	scale := s.scale()
	left := append(sc.left[:0], all...)
	out := sc.picked[:0]
	// same[i] is how many blocks of left[i]'s document are picked already, counted as each is
	// picked: one pass over left per pick, not one over the picked blocks per remaining block.
	same := slices.Grow(sc.same[:0], len(left))[:len(left)]
	clear(same)
	defer func() { sc.same = same[:0] }()
	for len(out) < topK && len(left) > 0 {
		best, bestValue := -1, -1.0
		first, second := strongest(left)
		for i, f := range left {
			if dominatedBy(scale, f, first, second) {
				continue
			}
			v := f.rrf
			if n := same[i]; n > 0 {
				v = s.rrf(f, float64(n)*SameDocPenalty)
			}
			if best < 0 || v > bestValue || (v == bestValue && before(f, left[best])) {
				best, bestValue = i, v
			}
		}
		f := left[best]
		out = append(out, f)
		left = append(left[:best], left[best+1:]...)
		same = append(same[:best], same[best+1:]...)
		for i, g := range left {
			if g.docID == f.docID {
				same[i]++
			}
		}
	}
	return out
}

// strongest returns the two blocks of left with the highest L1 scores (the first found of
// equal ones first), among those L1 returned; nil where there are fewer. The block with the
// highest L1 score is never dominated, so some block can always be picked.
func strongest(left []*fusing) (first, second *fusing) {
	for _, x := range left {
		switch {
		case x.l1Rank == 0:
		case first == nil || x.l1Score > first.l1Score:
			first, second = x, first
		case second == nil || x.l1Score > second.l1Score:
			second = x
		}
	}
	return first, second
}

// dominatedBy reports whether any other remaining block is clearly stronger than f, first and
// second being the remaining blocks' strongest: clearlyStronger(x, f) holds only for a block L1
// returned and grows with its L1 score, so the strongest block other than f decides: one
// comparison instead of one per remaining block.
func dominatedBy(scale ScoreScale, f, first, second *fusing) bool {
	x := first
	if x == f {
		x = second
	}
	return x != nil && scale.clearlyStronger(x, f)
}

// before breaks ties between blocks of equal fused value: the higher L1 score (of the block whose
// place it took, after routeAfterScope), then document id, then section order.
func before(a, b *fusing) bool {
	if a.tie != b.tie {
		return a.tie > b.tie
	}
	if c := strings.Compare(a.docID, b.docID); c != 0 {
		return c < 0
	}
	return cmp.Less(a.order, b.order)
}

// scale is the ScoreScale of the provider's score kind; an unknown kind has no clear margin, so
// only the fused ranks order it.
func (s *Service) scale() ScoreScale {
	if sc, ok := s.scaleOf(s.provider.ScoreKind()); ok {
		return sc
	}
	return ScoreScale{Clear: math.Inf(1)}
}

func anchorOf(source string) string {
	if i := strings.LastIndexByte(source, '#'); i >= 0 {
		return source[i+1:]
	}
	return ""
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }
