package textproc

import "unicode/utf8"

// Clip cuts s to at most n characters (runes), marking the cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s // n bytes hold at most n runes
	}
	count := 0
	for i := range s {
		if count == n-1 {
			if _, size := utf8.DecodeRuneInString(s[i:]); i+size == len(s) {
				return s // the last rune fits
			}
			return s[:i] + "…"
		}
		count++
	}
	return s
}
