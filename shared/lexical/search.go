package lexical

import "slices"

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
func (l *Lang) SearchWeighted(query []string, weight map[string]float64, category string, topK int) []Hit {
	if topK <= 0 || len(l.Passages) == 0 {
		return nil
	}
	acc, _ := l.scratch.Get().(*sparse[float64])
	if acc == nil || len(acc.v) != len(l.Passages) {
		s := newSparse[float64](len(l.Passages))
		acc = &s
	}
	defer func() {
		acc.clear()
		l.scratch.Put(acc)
	}()
	seen := make([]Term, 0, len(query))
	for _, s := range query {
		t, ok := l.Lookup(s)
		if !ok || !l.Known(t) || slices.Contains(seen, t) {
			continue
		}
		seen = append(seen, t)
		idf := l.idf[t]
		if w, ok := weight[s]; ok {
			idf *= w
		}
		if idf <= 0 {
			continue // a term weighed 0 scores nothing; every term counted adds a positive score
		}
		lo, hi := l.postStart[t], l.postStart[t+1]
		for i, p := range l.postPassage[lo:hi] {
			tf := float64(l.postTF[int(lo)+i])
			acc.add(p, idf*tf/(tf+l.lenNorm[p]))
		}
	}
	top := topHits{k: topK, heap: make([]Hit, 0, min(topK, len(acc.touched)))}
	for _, p := range acc.touched {
		s := acc.v[p]
		if s <= 0 || (category != "" && l.Docs[l.Passages[p].Doc].Category != category) {
			continue
		}
		top.offer(Hit{Passage: int(p), Score: s})
	}
	return top.sorted()
}

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

// sorted returns the kept hits, best first.
func (h *topHits) sorted() []Hit {
	out := h.heap
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
