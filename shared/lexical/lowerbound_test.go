package lexical

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLowerBoundIsBinarySearch checks lowerBound against slices.BinarySearch on ascending lists
// of every length up to 70, with repeated values and values below, between and above them.
func TestLowerBoundIsBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 71 {
		for range 20 {
			a := make([]uint32, n)
			for i := range a {
				a[i] = uint32(r.IntN(3 * (n + 1)))
			}
			slices.Sort(a)
			for x := uint32(0); x <= uint32(3*(n+1)); x++ {
				wi, wok := slices.BinarySearch(a, x)
				if i, ok := lowerBound(a, x); i != wi || ok != wok {
					t.Fatalf("lowerBound(%v, %d) = %d, %v; slices.BinarySearch says %d, %v", a, x, i, ok, wi, wok)
				}
			}
		}
	}
}
