package textproc

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// NormalizedLen returns the number of characters of Normalize(s) for a valid UTF-8 s, counting
// no further than limit+1, so that a caller can check a length limit on the normalised text
// without making it. NFKC can make a text much longer than it arrived (U+FDFA alone becomes 18
// characters): the work here stops one normalisation segment (at most norm.MaxSegmentSize
// bytes) after the character that passes the limit, whatever length the whole text would
// expand to.
func NormalizedLen(s string, limit int) int {
	if isASCII(s) {
		return min(len(s), limit+1)
	}
	var it norm.Iter
	it.InitString(norm.NFKC, s)
	n := 0
	for !it.Done() && n <= limit {
		for seg := it.Next(); len(seg) > 0; {
			r, size := utf8.DecodeRune(seg)
			seg = seg[size:]
			if !isFormat(r) {
				n++
			}
		}
	}
	return min(n, limit+1)
}
