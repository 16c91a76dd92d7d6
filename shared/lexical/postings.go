package lexical

import (
	"math"
	"slices"
)

// postingLists are, per term (indexed by Term), its postings, passages ascending, at
// postPassage[postStart[t]:postStart[t+1]] with the term's frequency in postTF, and its BM25 idf
// over passages (the idf of an unseen term for a term only the front matter has) and over
// procedures; per document, its passages [docStart[d], docStart[d+1]).
type postingLists struct {
	postStart   []uint32
	postPassage []uint32
	postTF      []uint16
	idf         []float64
	docIDF      []float64
	docStart    []uint32
	unseen      float64
	avgLen      float64
	// lenNorm is each passage's BM25 length normalisation, K1 * (1 - B + B*len/avgLen), derived
	// from the passages (see postingStatistics): Search reads it for every posting it walks.
	lenNorm []float64
}

// indexPostings fills the passages and their postings from the analysed documents: count, then
// fill, so that each term's list is one ascending run.
func (l *Lang) indexPostings(all []analysed) {
	V := len(l.terms.words)
	id := func(t string) Term { return l.terms.ids[t] }
	type tf struct {
		term Term
		n    uint16
	}
	var perPassage [][]tf
	counts := make([]uint32, V+1)
	total := 0
	for di, an := range all {
		l.docStart = append(l.docStart, uint32(len(l.Passages)))
		for si, ts := range an.passages {
			freq := map[Term]uint16{}
			for _, t := range ts {
				if n := freq[id(t)]; n < math.MaxUint16 {
					freq[id(t)] = n + 1
				}
			}
			row := make([]tf, 0, len(freq))
			for t, n := range freq {
				row = append(row, tf{t, n})
				counts[t+1]++
			}
			slices.SortFunc(row, func(x, y tf) int { return int(x.term) - int(y.term) })
			perPassage = append(perPassage, row)
			l.Passages = append(l.Passages, Passage{Doc: di, Section: si, Len: len(ts)})
			total += len(ts)
		}
	}
	l.docStart = append(l.docStart, uint32(len(l.Passages)))
	for t := range V {
		counts[t+1] += counts[t]
	}
	l.postStart = counts
	l.postPassage = make([]uint32, counts[V])
	l.postTF = make([]uint16, counts[V])
	next := slices.Clone(counts[:V])
	for pi, row := range perPassage {
		for _, e := range row {
			l.postPassage[next[e.term]] = uint32(pi)
			l.postTF[next[e.term]] = e.n
			next[e.term]++
		}
	}
	if len(l.Passages) > 0 {
		l.avgLen = float64(total) / float64(len(l.Passages))
	}
}

// postingStatistics derives each passage's length normalisation and each term's idf over
// passages and over procedures.
func (l *Lang) postingStatistics() {
	V := len(l.terms.words)
	// The idf over passages counts at least MinIDFPassages of them (see there).
	N, D := float64(max(len(l.Passages), MinIDFPassages)), float64(len(l.Docs))
	l.unseen = bm25IDF(N, 0)
	l.lenNorm = make([]float64, len(l.Passages))
	for i, p := range l.Passages {
		l.lenNorm[i] = K1 * (1 - B + B*float64(p.Len)/l.avgLen)
	}
	l.idf = make([]float64, V)
	l.docIDF = make([]float64, V)
	for t := range V {
		ps := l.postPassage[l.postStart[t]:l.postStart[t+1]]
		if len(ps) == 0 {
			l.idf[t] = l.unseen
			continue
		}
		l.idf[t] = bm25IDF(N, float64(len(ps)))
		n, last := 0, -1
		for _, p := range ps {
			if d := l.Passages[p].Doc; d != last {
				n, last = n+1, d
			}
		}
		l.docIDF[t] = bm25IDF(D, float64(n))
	}
}

// MinIDFPassages is the fewest passages the idf over passages counts: a corpus of fewer (one or
// two procedures) is taken as part of a corpus of this many, the others not holding its words.
// Over five passages the idf has no range, every word of a procedure's subject is in all of
// them and weighs almost nothing, and the evidence rules, whose figures are sums of idf (see
// shared/retrieval), could never ground an answer. Below the 64 passages of the embedded
// corpus's languages, so that its figures are its own.
const MinIDFPassages = 48

func bm25IDF(N, n float64) float64 { return math.Log(1 + (N-n+0.5)/(n+0.5)) }

// Known reports whether a passage holds the term (the front matter alone does not count).
func (l *Lang) Known(t Term) bool { return l.postStart[t+1] > l.postStart[t] }

func (l *Lang) postings(t Term) []uint32 { return l.postPassage[l.postStart[t]:l.postStart[t+1]] }

// PassageHas reports whether the passage holds the term.
func (l *Lang) PassageHas(passage int, t Term) bool {
	_, ok := slices.BinarySearch(l.postings(t), uint32(passage))
	return ok
}

// DocHas reports whether any passage of the document holds the term.
func (l *Lang) DocHas(doc int, t Term) bool {
	ps := l.postings(t)
	i, _ := slices.BinarySearch(ps, l.docStart[doc])
	return i < len(ps) && ps[i] < l.docStart[doc+1]
}

// DocPassages returns the passages of one document as the range [lo, hi).
func (l *Lang) DocPassages(doc int) (lo, hi int) { return int(l.docStart[doc]), int(l.docStart[doc+1]) }

// IDF is Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): never negative, and largest for
// a term that no passage contains.
func (l *Lang) IDF(term string) float64 {
	if t, ok := l.Lookup(term); ok {
		return l.idf[t]
	}
	return l.unseen
}

// idfOf is IDF of a term.
func (l *Lang) idfOf(t Term) float64 { return l.idf[t] }

// bestSection returns the passage of the document that shares the most idf weight with the
// terms; the document's first passage (its scope) when none shares any. Its cost follows the
// terms' postings within the document, not the document's length.
func (l *Lang) bestSection(doc int, terms []Term) int {
	lo, hi := l.DocPassages(doc)
	var small [32]float64
	var w []float64
	if hi-lo > len(small) {
		w = make([]float64, hi-lo)
	} else {
		w = small[:hi-lo]
	}
	for _, t := range terms {
		ps := l.postings(t)
		i, _ := slices.BinarySearch(ps, uint32(lo))
		for ; i < len(ps) && int(ps[i]) < hi; i++ {
			w[int(ps[i])-lo] += l.idf[t]
		}
	}
	best, bestW := lo, 0.0
	for i, x := range w {
		if x > bestW {
			best, bestW = lo+i, x
		}
	}
	return best
}
