package textproc

import (
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// NormalizedLen returns the number of characters of Normalize(s) for a valid UTF-8 s, counting
// no further than limit+1, so that a caller can check a length limit on the normalised text
// without making it. NFKC can make a text much longer than it arrived (U+FDFA alone becomes 18
// characters): the count goes segment by segment (a segment normalises on its own: it starts
// at a rune that cannot combine with the runes before it, nor can its decomposition), and stops after the segment that
// passes the limit, whatever length the whole text would expand to. A segment of one rune,
// most of any text, is counted from that rune's own normal form: looked up for Latin letters,
// the rune itself when it has no decomposition, normalised once per call for the others.
func NormalizedLen(s string, limit int) int {
	if isASCII(s) {
		return min(len(s), limit+1)
	}
	latin := latinNFKCLen()
	var (
		n     int
		known map[rune]int // the count of a one-rune segment beyond Latin with a decomposition
		buf   []byte
		it    norm.Iter
		props norm.Properties // the rune at i's, when carried over from the last segment's end
		has   bool
	)
	for i := 0; i < len(s) && n <= limit; {
		r, size := utf8.DecodeRuneInString(s[i:])
		p, pHas := props, has
		end := i + size
		has = false
		for end < len(s) {
			if s[end] < 0xC9 { // a rune below U+0240 (a lead byte up to 0xC8): it starts a segment
				break
			}
			props, has = norm.NFKC.PropertiesString(s[end:]), true
			if startsSegment(props) {
				break
			}
			_, sz := utf8.DecodeRuneInString(s[end:])
			end += sz
			has = false
		}
		switch seg := s[i:end]; {
		case end-i > size: // a rune and the marks that combine with it
			it.InitString(norm.NFKC, seg)
			for !it.Done() {
				n += countText(it.Next())
			}
		case r < latinEnd:
			n += int(latin[r])
		default:
			if !pHas {
				p = norm.NFKC.PropertiesString(seg)
			}
			if p.Decomposition() == nil {
				if !isFormat(r) {
					n++
				}
				break
			}
			c, ok := known[r]
			if !ok {
				buf = norm.NFKC.AppendString(buf[:0], seg)
				c = countText(buf)
				if known == nil {
					known = map[rune]int{}
				}
				known[r] = c
			}
			n += c
		}
		i = end
	}
	return min(n, limit+1)
}

// startsSegment reports whether the rune of p starts a segment: neither it nor its decomposition
// combines with the runes before it (U+3161, a compatibility jamo, starts one on its own, but
// decomposes to a vowel that composes with a leading consonant before it).
func startsSegment(p norm.Properties) bool {
	if !p.BoundaryBefore() {
		return false
	}
	d := p.Decomposition()
	return len(d) == 0 || norm.NFKC.Properties(d).BoundaryBefore()
}

// latinNFKCLen holds, for each rune below latinEnd, the number of characters Normalize makes of
// it alone. Each of these runes starts a segment (none combines with the runes before it).
var latinNFKCLen = sync.OnceValue(func() *[latinEnd]uint8 {
	var t [latinEnd]uint8
	for r := rune(0); r < latinEnd; r++ {
		t[r] = uint8(countText([]byte(norm.NFKC.String(string(r)))))
	}
	return &t
})

// countText counts the runes of b that Normalize keeps: all but format characters.
func countText(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if !isFormat(r) {
			n++
		}
	}
	return n
}
