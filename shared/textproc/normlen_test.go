package textproc

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normLenSamples are texts whose NFKC form is longer, shorter or as long as they are.
var normLenSamples = []string{
	"", "deep scratch on the rear door", "Akku unter 10 Prozent, Kunde steht an der Ladesäule",
	strings.Repeat("\ufdfa", 3),                        // each becomes 18 characters
	"\ufb01ne \uff44\uff41\uff4d\uff41\uff47\uff45",    // a ligature, fullwidth letters
	"dam\u00adage\u200b, word\u2060joiner\ufeff",       // format characters, dropped
	"a\u0308 o\u0308 u\u0308 Stra\u00dfe",              // decomposed umlauts compose
	"e" + strings.Repeat("\u0301", 45),                 // past 30 non-starters a U+034F is inserted
	"\u3300\u3301 \u2163 \u00bd",                       // squared words, a roman numeral, a fraction
	"\u1100\u1161\u11a8 \u1100\u1161",                  // conjoining jamo compose into syllables
	"\u0627\u0653 \u0915\u093c \u0b47\u0b3e",           // Arabic, Devanagari, Oriya compositions
	"\u0240\u0241\u024f\u0250 ǆ ĳ ſ \u02b0",            // around the Latin table's end
	"字 \u2f00\u2fd5 \U0001d400\U0001f600 \ufe00\ufe0f", // CJK, radicals, math letters, variation selectors
}

// TestNormalizedLenCountsNormalize: below the limit, NormalizedLen is the length of Normalize's
// result; above it, limit+1, however long the text would become.
func TestNormalizedLenCountsNormalize(t *testing.T) {
	for _, s := range normLenSamples {
		want := utf8.RuneCountInString(Normalize(s))
		if got := NormalizedLen(s, 1<<20); got != want {
			t.Errorf("NormalizedLen(%q) = %d, Normalize gives %d characters", s, got, want)
		}
		for _, limit := range []int{0, 1, 5, want - 1, want, want + 1} {
			if limit < 0 {
				continue
			}
			if got := NormalizedLen(s, limit); got != min(want, limit+1) {
				t.Errorf("NormalizedLen(%q, %d) = %d, want %d", s, limit, got, min(want, limit+1))
			}
		}
	}
	// 2,000 × U+FDFA is 6,000 bytes on the wire and 36,000 characters normalised.
	fdfa := strings.Repeat("\ufdfa", 2000)
	if got := NormalizedLen(fdfa, 2000); got != 2001 {
		t.Errorf("2000 × U+FDFA: %d, want 2001 (over the limit)", got)
	}
	if got := NormalizedLen(strings.Repeat("\ufdfa", 111)+"ab", 2000); got != 2000 {
		t.Errorf("111 × U+FDFA and two letters: %d, want 2000", got)
	}
}

// TestNormalizedLenEveryRuneInContext: every rune that normalisation can change or combine
// (a decomposition, a combining class, or no segment boundary on one side), alone, doubled and
// between runes it may compose with, counts as Normalize makes it.
func TestNormalizedLenEveryRuneInContext(t *testing.T) {
	// Runes before and after that compose with others: a letter and a combining mark, Hangul
	// jamo (leading, vowel, trailing), an Oriya two-part vowel, Arabic alef and madda.
	contexts := [][2]string{{"", ""}, {"a", ""}, {"", "\u0308"}, {"\u1100", ""}, {"", "\u1161"}, {"\u1100\u1161", ""},
		{"", "\u11a8"}, {"\u0b47", ""}, {"", "\u0b3e"}, {"\u0627", ""}, {"", "\u0653"}, {"e\u0301", "a"}, {"字", "\u3161"},
		{"\ufdfa", "\u200b"}}
	checked := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if utf16.IsSurrogate(r) {
			continue
		}
		rs := string(r)
		p := norm.NFKC.PropertiesString(rs)
		if p.Decomposition() == nil && p.CCC() == 0 && p.BoundaryBefore() && p.BoundaryAfter() {
			continue
		}
		checked++
		for _, c := range append(contexts, [2]string{rs, ""}) {
			text := c[0] + rs + c[1]
			if got, want := NormalizedLen(text, 1<<10), utf8.RuneCountInString(Normalize(text)); got != want {
				t.Fatalf("NormalizedLen(%+q) = %d, Normalize gives %d characters", text, got, want)
			}
		}
	}
	if checked < 5000 {
		t.Fatalf("only %d runes checked", checked)
	}
}

// TestLatinRunesStartSegments: NormalizedLen counts a rune below latinEnd from a table, as a
// segment of its own, which holds only if none of them (nor its decomposition) combines with
// the runes before it.
func TestLatinRunesStartSegments(t *testing.T) {
	for r := rune(0); r < latinEnd; r++ {
		if !startsSegment(norm.NFKC.PropertiesString(string(r))) {
			t.Errorf("%U (or its decomposition) combines with the rune before it", r)
		}
	}
}

// BenchmarkNormalizedLen: the cost of checking 2,000 × U+FDFA against the 2,000-character limit
// follows the limit, not the 36,000 characters the text becomes (beside Normalize, which makes
// them all).
func BenchmarkNormalizedLen(b *testing.B) {
	fdfa := strings.Repeat("\ufdfa", 2000)
	b.Run("fdfa-2000-limited", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NormalizedLen(fdfa, 2000)
		}
	})
	b.Run("fdfa-2000-normalize", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Normalize(fdfa)
		}
	})
	for name, text := range map[string]string{
		"umlaut-2000-limited":     strings.Repeat("ä", 2000),
		"decomposed-2000-limited": strings.Repeat("a\u0308", 1000),
		"cjk-2000-limited":        strings.Repeat("字", 2000),
		"fullwidth-2000-limited":  strings.Repeat("\uff44", 2000),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NormalizedLen(text, 2000)
			}
		})
	}
}

// FuzzNormalizedLen: for any valid UTF-8 text and limit, NormalizedLen is the length of
// Normalize's result, capped at limit+1. (Text that is not UTF-8 never reaches it: the API and
// the MCP tools refuse or replace it first.)
func FuzzNormalizedLen(f *testing.F) {
	for _, s := range normLenSamples {
		f.Add(s, uint16(2000))
		f.Add(s, uint16(3))
	}
	f.Fuzz(func(t *testing.T, s string, limit uint16) {
		if !utf8.ValidString(s) {
			return // outside the property: such text never reaches NormalizedLen (and no seed skips)
		}
		want := min(utf8.RuneCountInString(Normalize(s)), int(limit)+1)
		if got := NormalizedLen(s, int(limit)); got != want {
			t.Fatalf("NormalizedLen(%q, %d) = %d, want %d", s, limit, got, want)
		}
	})
}
