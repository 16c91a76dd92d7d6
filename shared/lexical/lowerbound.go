package lexical

// lowerBound returns where x is or would be inserted in the ascending a, and whether it is
// there: what slices.BinarySearch returns, found without a branch on the values compared. Each
// step adds half or nothing by a mask (half & -lt), which the compiler makes a flag and an AND;
// slices.BinarySearch's step is a conditional jump, and as questions change the processor
// mispredicts about every other one. A lookup makes some ninety such searches in postings and
// front-matter lists (Postings.PassageHas, DocHas, DocPostings, FrontMatter.Has), and their
// mispredictions were about a twentieth of a lookup's time over changing questions (see
// BenchmarkLookupInTurn in shared/retrieval).
func lowerBound[T ~uint32](a []T, x T) (int, bool) {
	n := len(a)
	if n == 0 {
		return 0, false
	}
	base := 0
	for n > 1 {
		half := n / 2
		lt := 0
		if a[base+half] < x {
			lt = 1
		}
		base += half & -lt
		n -= half
	}
	if a[base] < x {
		base++
	}
	return base, base < len(a) && a[base] == x
}
