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
// most of any text, is counted from that rune's own normal form (lenCounter.alone); a rune
// with the runes that combine with it is normalised as a whole (lenCounter.segment).
func NormalizedLen(s string, limit int) int {
	if isASCII(s) {
		return min(len(s), limit+1)
	}
	c := lenCounter{latin: latinNFKCLen()}
	r, size := utf8.DecodeRuneInString(s)
	cur := c.alone(s[:size], r) // the rune that starts the segment at i
	n := 0
	for i := 0; i < len(s) && n <= limit; {
		_, size = utf8.DecodeRuneInString(s[i:])
		end := i + size
		var next oneRune
		for end < len(s) {
			r, sz := utf8.DecodeRuneInString(s[end:])
			if next = c.alone(s[end:end+sz], r); next.starts {
				break
			}
			end += sz
		}
		if end-i > size { // a rune and the runes that combine with it
			n += c.segment(s[i:end])
		} else {
			n += cur.count
		}
		i, cur = end, next
	}
	return min(n, limit+1)
}

// segment counts what Normalize makes of seg, a segment of several runes. A short one (a letter
// and its marks, as decomposed text has them) is normalised once per call.
func (c *lenCounter) segment(seg string) int {
	if n, ok := c.segments[seg]; ok {
		return n
	}
	n := 0
	c.it.InitString(norm.NFKC, seg)
	for !c.it.Done() {
		n += countText(c.it.Next())
	}
	if len(seg) <= 16 {
		if c.segments == nil {
			c.segments = map[string]int{}
		}
		c.segments[seg] = n
	}
	return n
}

// oneRune is what NormalizedLen knows of a rune: what Normalize makes of it alone, and whether it
// starts a segment.
type oneRune struct {
	count  int
	starts bool
}

// lenCounter holds what one NormalizedLen call reuses.
type lenCounter struct {
	latin    *[latinEnd]uint8
	known    map[rune]oneRune // runes beyond Latin with a decomposition, each normalised once
	segments map[string]int   // short segments of several runes, each normalised once
	buf      []byte
	it       norm.Iter
}

// alone describes the rune r, whose UTF-8 encoding is enc: from the Latin table, from its
// properties when it has no decomposition (then it is its own normal form), else from its
// normal form, made once.
func (c *lenCounter) alone(enc string, r rune) oneRune {
	if r < latinEnd {
		return oneRune{count: int(c.latin[r]), starts: true}
	}
	if o, ok := c.known[r]; ok {
		return o
	}
	p := norm.NFKC.PropertiesString(enc)
	if p.Decomposition() == nil {
		o := oneRune{count: 1, starts: p.BoundaryBefore()}
		if isFormat(r) {
			o.count = 0
		}
		return o
	}
	c.buf = norm.NFKC.AppendString(c.buf[:0], enc)
	o := oneRune{count: countText(c.buf), starts: startsSegment(p)}
	if c.known == nil {
		c.known = map[rune]oneRune{}
	}
	c.known[r] = o
	return o
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
