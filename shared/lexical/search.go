package lexical

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Hit is one scored passage.
type Hit struct {
	Passage int
	Score   float64
}

// Search scores passages against the query terms with BM25 (Lucene's form:
// idf * tf / (tf + k1 * (1 - b + b * len/avglen))) and returns the best topK, highest score
// first, ties broken by document id, then section order. A non-empty category keeps only the
// passages of documents in that category; statistics stay corpus-wide, as in Lucene's filters.
func (l *Lang) Search(query []string, category string, topK int) []Hit {
	return l.SearchWeighted(query, nil, category, topK)
}

// SynonymWeight is how much a synonym of a question's word counts against the word itself, in
// BM25, in L0 and in the lexical support of a block: a synonym bridges operators' words to the
// procedures' but never outweighs the words themselves.
const SynonymWeight = 0.5

// SearchWeighted is Search with a weight per query term (missing terms weigh 1), such as
// SynonymWeight for a synonym's terms. Its cost follows the postings of the query's terms; the
// best topK are kept in a bounded heap.
//
// Terms are added rarest first (highest weighted idf; equal ones in query order). A term adds
// at most its weighted idf to a passage (tf/(tf+norm) < 1), so once the weights of the terms
// still to add sum to less than the topK-th best score so far, no passage they alone would
// reach can enter the best topK (MaxScore pruning): from then on a term only adds to the
// passages already scored, looked up in its postings when that is cheaper than walking them.
// The topK-th best score so far is kept as the walk goes (searchScratch.raise), so the test is
// made after every term at no cost. The hits and their order are those of adding every term's
// postings in full.
func (l *Lang) SearchWeighted(query []string, weight map[string]float64, category string, topK int) []Hit {
	var buf [32]QueryTerm
	f, ok := l.categoryFilter(category)
	if !ok {
		return nil // no document has the category
	}
	return l.search(l.Resolve(query, weight, buf[:0]), f, topK)
}

// SearchWeightedIn is SearchWeighted confined to the sections of the document doc (an index
// into Docs): the lexical search of a lookup confined to the procedure an operator confirmed.
func (l *Lang) SearchWeightedIn(query []string, weight map[string]float64, doc, topK int) []Hit {
	var buf [32]QueryTerm
	return l.search(l.Resolve(query, weight, buf[:0]), l.post.docFilter(doc), topK)
}

// SearchResolved is SearchWeighted over terms Resolve made, which it reorders: confined to the
// sections of the document doc (an index into Docs) when doc is not negative, as SearchWeightedIn
// is, else to category as SearchWeighted is. A caller that reads the terms again after the
// search (a rescoring of the hits by their sentences) resolves the query once.
func (l *Lang) SearchResolved(terms []QueryTerm, category string, doc, topK int) []Hit {
	if doc >= 0 {
		return l.search(terms, l.post.docFilter(doc), topK)
	}
	f, ok := l.categoryFilter(category)
	if !ok {
		return nil // no document has the category
	}
	return l.search(terms, f, topK)
}

// QueryTerm is one query term the index knows, with its weighted idf (see Resolve).
type QueryTerm struct {
	Term   Term
	Weight float64
}

// Resolve appends to terms the query's terms that the index holds in a passage, each once, in
// query order, with their idf times their weight (missing terms weigh 1), leaving out those that
// weigh nothing.
func (l *Lang) Resolve(query []string, weight map[string]float64, terms []QueryTerm) []QueryTerm {
	for _, s := range query {
		t, ok := l.Lookup(s)
		if !ok || !l.post.Known(t) || slices.ContainsFunc(terms, func(q QueryTerm) bool { return q.Term == t }) {
			continue
		}
		w := l.post.IDF(t)
		if x, ok := weight[s]; ok {
			w *= x
		}
		if w <= 0 {
			continue // a term weighed 0 scores nothing; every term counted adds a positive score
		}
		terms = append(terms, QueryTerm{t, w})
	}
	return terms
}

// sortByWeight orders a question's terms by descending weight, equal weights in query order
// (the order their scores are summed in). A typical question's dozen terms or so are insertion
// sorted: slices.SortStableFunc with its comparison closure cost about 2,400 of a lookup's
// 190,000 instructions (callgrind, BenchmarkLookup/de). A long question's are not, so that its
// cost stays n log n.
func sortByWeight(terms []QueryTerm) {
	if len(terms) > 32 {
		slices.SortStableFunc(terms, func(a, b QueryTerm) int { return cmp.Compare(b.Weight, a.Weight) })
		return
	}
	for i := 1; i < len(terms); i++ {
		q, j := terms[i], i
		for ; j > 0 && terms[j-1].Weight < q.Weight; j-- {
			terms[j] = terms[j-1]
		}
		terms[j] = q
	}
}

// search is SearchWeighted over resolved terms, which it reorders, within the filter's passages.
func (l *Lang) search(terms []QueryTerm, f passageFilter, topK int) []Hit {
	if topK <= 0 || len(l.Passages) == 0 {
		return nil
	}
	sa := l.scratch.get(len(l.Passages))
	defer l.scratch.put(sa)
	remaining, walk := 0.0, 0 // the weights of the terms still to add, and their postings
	for _, q := range terms {
		remaining += q.Weight
		walk += int(l.post.postStart[q.Term+1] - l.post.postStart[q.Term])
	}
	sortByWeight(terms)
	l.post.accumulate(sa, terms, remaining, walk, f, topK)
	top := topHits{k: topK, heap: make([]Hit, 0, min(topK, len(sa.acc.touched)))}
	for _, p := range sa.acc.touched {
		s := sa.acc.v[p]
		if s <= 0 || !f.eligible(p) {
			continue
		}
		top.offer(Hit{Passage: int(p), Score: s})
	}
	return top.sorted()
}

// passageFilter is a search's filter: every passage, those of category cat, or those of one
// document (the passages from lo to hi, as documents hold consecutive passages).
type passageFilter struct {
	all    bool
	cat    uint32
	cats   []uint32 // each passage's category (Lang.passageCat); nil for a document's filter
	lo, hi uint32
	dead   []bool // the passages not in force (Postings.dead), never eligible
}

func (f passageFilter) eligible(p uint32) bool {
	if f.dead != nil && f.dead[p] {
		return false
	}
	if f.cats == nil {
		return p >= f.lo && p < f.hi
	}
	return f.all || f.cats[p] == f.cat
}

// categoryFilter is the filter of a category ("" for every passage); false when no document has
// the category.
func (l *Lang) categoryFilter(category string) (passageFilter, bool) {
	cat, known := l.categoryIDs[category]
	if category != "" && !known {
		return passageFilter{}, false
	}
	return passageFilter{all: category == "", cat: cat, cats: l.passageCat, dead: l.post.dead}, true
}

// docFilter is the filter of the document doc's passages; an index out of range keeps none.
func (p *Postings) docFilter(doc int) passageFilter {
	if doc < 0 || doc+1 >= len(p.docStart) {
		return passageFilter{}
	}
	return passageFilter{lo: p.docStart[doc], hi: p.docStart[doc+1], dead: p.dead}
}

// newScratch gives the language its pools of scratch (a search's scores over the passages, a
// front-matter match's weights over the documents and its counts over the phrases) and its
// passages' sources. Every day's view of an index numbers them as the index does, and shares
// them (a scratch is cleared before it is put back), so that a view allocates none of the
// corpus's size.
func newScratch(l *Lang) {
	l.scratch, l.front.scratch, l.phr.scratch = new(searchPool), new(sync.Pool), new(sync.Pool)
	l.sources = new(passageSources)
}

// searchPool pools a language's search scratches, each over its passages.
type searchPool struct{ pool sync.Pool }

// get returns an empty scratch over n passages; put returns it.
func (sp *searchPool) get(n int) *searchScratch {
	sa, _ := sp.pool.Get().(*searchScratch)
	if sa == nil || len(sa.acc.v) != n {
		sa = &searchScratch{acc: sparse[float64]{v: make([]float64, n), touched: make([]uint32, 0, n+1)},
			scored: make([]uint64, (n+63)/64)}
	}
	return sa
}

// put clears the scratch's scores and returns it to the pool.
func (sp *searchPool) put(sa *searchScratch) {
	for _, p := range sa.acc.touched {
		sa.scored[p>>6] = 0
	}
	sa.acc.clear()
	sp.pool.Put(sa)
}

// accumulate adds the terms' BM25 weights into the scratch's scores, heaviest term first. Once
// the weight of the terms still to add (remaining) cannot lift a passage not yet scored into
// the best topK, only the passages already scored take the remaining terms (walk is the terms'
// postings in all).
func (pl *Postings) accumulate(sa *searchScratch, terms []QueryTerm, remaining float64, walk int, f passageFilter, topK int) {
	acc, scored := &sa.acc, sa.scored
	// pruned: only passages already scored can still enter the best topK. bound is the topK-th
	// best score of an eligible passage so far, 0 until topK have one.
	sa.bestP, sa.bestV, sa.bound = sa.bestP[:0], sa.bestV[:0], 0
	// A search of few postings walks them faster than it keeps the bound, and a search for more
	// than maxBoundK hits would pay k for each score it offers: neither prunes, and an infinite
	// bound keeps the walk from offering any score.
	track := walk >= minPruneWalk && topK <= maxBoundK
	if !track {
		sa.bound = math.Inf(1)
	}
	pruned := false
	for i, q := range terms {
		lo, hi := pl.postStart[q.Term], pl.postStart[q.Term+1]
		ps, tfs := pl.postPassage[lo:hi], pl.postTF[lo:hi]
		switch {
		case !pruned:
			// A passage is touched the first time its score leaves 0. Whether a posting's
			// passage is new is as unpredictable as the postings: touched is written at n either
			// way and n moves on only for a new one, and the scored bit is set either way, so
			// that the walk has no branch on it (touched has room for every passage and one).
			touched, n := acc.touched[:cap(acc.touched)], len(acc.touched)
			for j, p := range ps {
				v := acc.v[p]
				touched[n] = p
				if v == 0 {
					n++
				}
				scored[p>>6] |= 1 << (p & 63)
				tf := float64(tfs[j])
				v += q.Weight * tf / (tf + pl.lenNorm[p])
				acc.v[p] = v
				if v > sa.bound && f.eligible(p) {
					sa.raise(p, v, topK)
				}
			}
			acc.touched = touched[:n]
		case len(acc.touched)*bits.Len(uint(len(ps))) >= len(ps):
			// Only the passages scored so far take the term: which they are is read from a
			// bit set a small fraction of the scores' size, which the walk of a common term's
			// postings reads for every posting.
			for j, p := range ps {
				if scored[p>>6]&(1<<(p&63)) == 0 {
					continue
				}
				tf := float64(tfs[j])
				acc.v[p] += q.Weight * tf / (tf + pl.lenNorm[p])
			}
		default:
			for _, p := range acc.touched {
				if j, ok := lowerBound(ps, p); ok {
					tf := float64(tfs[j])
					acc.v[p] += q.Weight * tf / (tf + pl.lenNorm[p])
				}
			}
		}
		remaining -= q.Weight
		if track && !pruned && i+1 < len(terms) && remaining < sa.bound {
			pruned = true
			if countPrunes {
				prunes.Add(1)
			}
		}
	}
}

// searchScratch is a search's memory, pooled per language: the scores by passage, a bit per
// passage that has a score, and the best topK scores of eligible passages seen so far.
type searchScratch struct {
	acc    sparse[float64]
	scored []uint64
	// bestP and bestV are up to topK distinct passages and a score each had as the walk went;
	// scores only grow, so each is at most its passage's score now, and with topK of them their
	// least, bound, is at most the topK-th best score now and at the end.
	bestP []uint32
	bestV []float64
	bound float64
}

// raise offers passage p's new score v, above bound: it replaces p's earlier score, else the
// least kept once k are kept.
func (sa *searchScratch) raise(p uint32, v float64, k int) {
	i := slices.Index(sa.bestP, p)
	switch {
	case i >= 0:
		sa.bestV[i] = v
	case len(sa.bestP) < k:
		sa.bestP, sa.bestV = append(sa.bestP, p), append(sa.bestV, v)
	default:
		i = slices.Index(sa.bestV, sa.bound)
		sa.bestP[i], sa.bestV[i] = p, v
	}
	if len(sa.bestP) == k {
		sa.bound = slices.Min(sa.bestV) // until then 0: fewer than k passages scored
	}
}

// countPrunes and prunes count the searches that pruned, for tests.
var (
	countPrunes bool
	prunes      atomic.Int64
)

// minPruneWalk is the fewest postings of a search's terms for which it keeps the bound and
// prunes: on a small corpus walking them all costs less (a variable for tests, which prune on
// the small embedded corpus).
var minPruneWalk = 4096

// maxBoundK is the most hits a search keeps its bound for (raise searches its kept passages):
// the service asks for at most 40 (its L1 pool).
const maxBoundK = 64

// topHits keeps the best k hits in a binary heap whose root is the worst kept: a lower score,
// or at an equal score a later passage (passages are stored in document id, then section order,
// which is the documented tie order).
type topHits struct {
	k    int
	heap []Hit
}

// worse reports whether a ranks below b.
func worse(a, b Hit) bool { return a.Score < b.Score || (a.Score == b.Score && a.Passage > b.Passage) }

func (h *topHits) offer(x Hit) {
	if len(h.heap) < h.k {
		h.heap = append(h.heap, x)
		for i := len(h.heap) - 1; i > 0; {
			parent := (i - 1) / 2
			if !worse(h.heap[i], h.heap[parent]) {
				break
			}
			h.heap[i], h.heap[parent] = h.heap[parent], h.heap[i]
			i = parent
		}
		return
	}
	if !worse(h.heap[0], x) {
		return
	}
	h.heap[0] = x
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h.heap) {
			break
		}
		if c+1 < len(h.heap) && worse(h.heap[c+1], h.heap[c]) {
			c++
		}
		if !worse(h.heap[c], h.heap[i]) {
			break
		}
		h.heap[i], h.heap[c] = h.heap[c], h.heap[i]
		i = c
	}
}

// sorted returns the kept hits, best first. worse is a total order, so any sort gives the same
// order: the ten or so hits of a lookup are insertion sorted, with worse inlined, where
// slices.SortFunc and its comparison closure cost about 1,800 of a lookup's 138,000 instructions
// (callgrind over the evaluation questions); a longer list is sorted by the library.
func (h *topHits) sorted() []Hit {
	out := h.heap
	if len(out) > 32 {
		slices.SortFunc(out, func(a, b Hit) int {
			switch {
			case worse(b, a):
				return -1
			case worse(a, b):
				return 1
			}
			return 0
		})
		return out
	}
	for i := 1; i < len(out); i++ {
		x, j := out[i], i
		for ; j > 0 && worse(out[j-1], x); j-- {
			out[j] = out[j-1]
		}
		out[j] = x
	}
	return out
}
