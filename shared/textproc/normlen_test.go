package textproc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// normLenSamples are texts whose NFKC form is longer, shorter or as long as they are.
var normLenSamples = []string{
	"", "deep scratch on the rear door", "Akku unter 10 Prozent, Kunde steht an der Ladesäule",
	strings.Repeat("\ufdfa", 3),                     // each becomes 18 characters
	"\ufb01ne \uff44\uff41\uff4d\uff41\uff47\uff45", // a ligature, fullwidth letters
	"dam\u00adage\u200b, word\u2060joiner\ufeff",    // format characters, dropped
	"a\u0308 o\u0308 u\u0308 Stra\u00dfe",           // decomposed umlauts compose
	"e" + strings.Repeat("\u0301", 45),              // past 30 non-starters a U+034F is inserted
	"\u3300\u3301 \u2163 \u00bd",                    // squared words, a roman numeral, a fraction
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
	umlauts := strings.Repeat("ä", 2000)
	b.Run("umlaut-2000-limited", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NormalizedLen(umlauts, 2000)
		}
	})
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
			t.Skip()
		}
		want := min(utf8.RuneCountInString(Normalize(s)), int(limit)+1)
		if got := NormalizedLen(s, int(limit)); got != want {
			t.Fatalf("NormalizedLen(%q, %d) = %d, want %d", s, limit, got, want)
		}
	})
}
