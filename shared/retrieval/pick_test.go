package retrieval

import (
	"math/rand/v2"
	"testing"
)

// pick's one comparison against the strongest other block decides as the comparison against
// every remaining block does, on every scale, with ties and blocks L1 did not return.
func TestDominatedByStrongestIsDominated(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	scales := map[string]ScoreScale{}
	for _, kind := range []string{"cosine_similarity", "bm25"} {
		scales[kind], _ = ScaleOf(kind)
	}
	scales["absolute"] = ScoreScale{Clear: 0.1, Supported: 0.5}
	for name, scale := range scales {
		checked := 0
		for range 2000 {
			left := make([]*fusing, 1+r.IntN(8))
			for i := range left {
				f := &fusing{}
				if r.IntN(3) > 0 {
					f.l1Rank = 1 + i
					f.l1Score = float64(r.IntN(6)) / 5 // ties are common
				}
				left[i] = f
			}
			first, second := strongest(left)
			for _, f := range left {
				want := dominated(scale, f, left)
				if got := dominatedBy(scale, f, first, second); got != want {
					t.Fatalf("%s: dominatedBy = %v, dominated = %v for %+v among %d", name, got, want, *f, len(left))
				}
				if want {
					checked++
				}
			}
		}
		if name != "bm25" && checked == 0 {
			t.Errorf("%s: no block was ever dominated: the test checks nothing", name)
		}
	}
}

// dominated is what dominatedBy answers, found by comparing f with every other block of left.
func dominated(scale ScoreScale, f *fusing, left []*fusing) bool {
	for _, x := range left {
		if x != f && scale.clearlyStronger(x, f) {
			return true
		}
	}
	return false
}
