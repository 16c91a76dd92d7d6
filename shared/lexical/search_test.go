package lexical

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// fullSearch is SearchWeighted without pruning: every term's postings added in full.
func fullSearch(l *Lang, query []string, weight map[string]float64, category string, topK int) []Hit {
	v := map[uint32]float64{}
	seen := map[Term]bool{}
	for _, s := range query {
		t, ok := l.Lookup(s)
		if !ok || !l.post.Known(t) || seen[t] {
			continue
		}
		seen[t] = true
		w := l.post.idf[t]
		if x, ok := weight[s]; ok {
			w *= x
		}
		if w <= 0 {
			continue
		}
		for i := l.post.postStart[t]; i < l.post.postStart[t+1]; i++ {
			p, tf := l.post.postPassage[i], float64(l.post.postTF[i])
			v[p] += w * tf / (tf + K1*(1-B+B*float64(l.Passages[p].Len)/l.post.avgLen))
		}
	}
	top := topHits{k: topK}
	for p, s := range v {
		if category == "" || l.Docs[l.Passages[p].Doc].Category == category {
			top.offer(Hit{Passage: int(p), Score: s})
		}
	}
	return top.sorted()
}

// The pruned search returns the hits of the full one, in the same order, with the same scores
// (up to the order of floating-point additions), on random queries of the corpus's words, common
// ones included, with weights, categories and every pool size the service uses; and it does
// prune.
func TestSearchPrunesToTheFullSearchsHits(t *testing.T) {
	ix := embedded(t)
	countPrunes, minPruneWalk = true, 0
	defer func() { countPrunes, minPruneWalk = false, 4096 }()
	before := prunes.Load()
	r := rand.New(rand.NewPCG(5, 6))
	for _, lang := range []string{"en", "de"} {
		l := ix.Lang(lang)
		words := l.terms.words
		common := l.mostFrequent(40)
		cats := []string{"", "no-such-category"}
		for _, d := range l.Docs {
			cats = append(cats, d.Category)
		}
		for range 3000 {
			var q []string
			weight := map[string]float64{}
			for range 1 + r.IntN(30) {
				w := words[r.IntN(len(words))]
				if r.IntN(2) == 0 {
					// a common word: one of the passages' most frequent terms
					w = words[common[r.IntN(len(common))]]
				}
				q = append(q, w)
				if r.IntN(3) == 0 {
					weight[w] = []float64{0.5, 0.25, 0}[r.IntN(3)]
				}
			}
			cat := cats[0]
			if r.IntN(4) == 0 {
				cat = cats[r.IntN(len(cats))]
			}
			k := []int{1, 5, 10, 20, 40, 100}[r.IntN(6)] // 100: more than a bound is kept for
			got, want := l.SearchWeighted(q, weight, cat, k), fullSearch(l, q, weight, cat, k)
			if len(got) != len(want) {
				t.Fatalf("%s %q k=%d: %d hits, want %d", lang, q, k, len(got), len(want))
			}
			for i := range got {
				if got[i].Passage != want[i].Passage || math.Abs(got[i].Score-want[i].Score) > 1e-9*want[i].Score {
					t.Fatalf("%s %q k=%d: hit %d is %+v, want %+v", lang, q, k, i, got[i], want[i])
				}
			}
		}
	}
	if prunes.Load() == before {
		t.Error("no search pruned: the test checks nothing of it")
	}
}

// mostFrequent returns the n terms with the longest postings.
func (l *Lang) mostFrequent(n int) []Term {
	all := make([]Term, len(l.terms.words))
	for t := range all {
		all[t] = Term(t)
	}
	postings := func(t Term) uint32 { return l.post.postStart[t+1] - l.post.postStart[t] }
	slices.SortFunc(all, func(a, b Term) int { return cmp.Compare(postings(b), postings(a)) })
	return all[:min(n, len(all))]
}

// TestSortByWeightIsAStableDescendingSort checks the terms' order the search sums scores in:
// descending weight, ties in query order, for a short question and a long one.
func TestSortByWeightIsAStableDescendingSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{0, 1, 2, 5, 12, 32, 33, 200} {
		terms := make([]QueryTerm, n)
		for i := range terms {
			terms[i] = QueryTerm{Term: Term(i), Weight: float64(r.IntN(4))} // few weights: many ties
		}
		want := slices.Clone(terms)
		slices.SortStableFunc(want, func(a, b QueryTerm) int { return cmp.Compare(b.Weight, a.Weight) })
		sortByWeight(terms)
		if !slices.Equal(terms, want) {
			t.Errorf("%d terms: %v, want %v", n, terms, want)
		}
	}
}

// topHits keeps the best k hits and sorts them best first, a lower passage first at an equal
// score, both below and above the length the insertion sort takes.
func TestTopHitsSortedIsBestFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		n, k := r.IntN(120), []int{1, 2, 5, 10, 32, 33, 40, 100}[r.IntN(8)]
		all := make([]Hit, n)
		for i, p := range r.Perm(n) {
			all[i] = Hit{Passage: p, Score: float64(r.IntN(8))} // few scores: many ties
		}
		top := topHits{k: k}
		for _, h := range all {
			top.offer(h)
		}
		got := top.sorted()
		want := slices.SortedFunc(slices.Values(all), func(a, b Hit) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Passage, b.Passage))
		})
		want = want[:min(k, n)]
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d k=%d: sorted %v, want %v", n, k, got, want)
		}
	}
}
