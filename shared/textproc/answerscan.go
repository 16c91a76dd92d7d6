package textproc

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The tests of a sentence that answers each kind of question, written as scans instead of
// regular expressions: judging a corpus sentence for all six kinds cost 74 µs with the
// patterns and costs 3.5 to 4.7 µs with the scans, in the same run of BenchmarkKindsOf, paid the
// first time each passage is returned. Each scan decides exactly what its pattern (given in its
// comment, Go's RE2 syntax) matches, including the patterns' edge cases: \b and \d are ASCII, \s
// is [\t\n\f\r ], and (?i) folds letters as unicode.SimpleFold does, so "ſ" matches "s" and the
// Kelvin sign matches "k". TestAnswerScansMatchTheirPatterns holds them to the patterns on every
// sentence of the corpus and on generated strings.

// Unit words after a number that make a time limit.
var deadlineUnits = newWordSet(
	"min", "minute", "minutes", "hour", "hours", "h", "day", "days", "business day", "business days",
	"week", "weeks", "minuten", "stunden", "std", "tage", "tagen", "werktage", "werktagen", "woche", "wochen",
)

// Words that make a time limit on their own.
var deadlineWords = newWordSet("within", "at the latest", "innerhalb", "spätestens", "binnen")

// statesDeadline: (?i)\d+\s*(min|minutes?|hours?|h|days?|business days?|weeks?|minuten|stunden|std|tagen?|werktagen?|wochen?)\b|\b(within|at the latest|innerhalb|spätestens|binnen)\b
func statesDeadline(s string) bool {
	return afterNumber(s, func(s string, at int) bool { return foldAnyAt(s, at, deadlineUnits, true) }) ||
		wordThen(s, deadlineWords, boundary)
}

var frequencyWords = newWordSet("every", "each", "alle", "jede", "jeden", "jeder", "jedes")

var frequencyUnits = newWordSet("day", "hour", "week", "tag", "stunde", "woche")

// statesFrequency: (?i)\b(every|each|alle|jede[nrs]?)\s+(\d+|day|hour|week|tag|stunde|woche)
func statesFrequency(s string) bool {
	return wordThen(s, frequencyWords, func(s string, end int) bool {
		at := skipSpace(s, end)
		return at > end && at < len(s) && (isDigit(s[at]) || foldAnyAt(s, at, frequencyUnits, false))
	})
}

var (
	amountEur  = newWordSet("eur")
	amountEuro = newWordSet("euro")
)

// statesAmount: (?i)\d+([.,]\d+)?\s*(€|eur\b|euro)|€\s*\d+
//
// The optional decimals need no case of their own: their digits are a run of digits too.
func statesAmount(s string) bool {
	if afterNumber(s, func(s string, at int) bool {
		return strings.HasPrefix(s[at:], "€") || foldAnyAt(s, at, amountEur, true) || foldAnyAt(s, at, amountEuro, false)
	}) {
		return true
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "€")
		if j < 0 {
			return false
		}
		i += j + len("€")
		if at := skipSpace(s, i); at < len(s) && isDigit(s[at]) {
			return true
		}
	}
}

var contactExtensions = newWordSet("ext.", "extension", "durchwahl")

var contactRoles = newWordSet("on-call", "duty manager", "bereitschaft", "schichtleitung")

// statesContact: (?i)\b(ext\.|extension|durchwahl)\s*\d+|\b(on-call|duty manager|bereitschaft|schichtleitung)\b
func statesContact(s string) bool {
	return wordThen(s, contactExtensions, func(s string, end int) bool {
		at := skipSpace(s, end)
		return at < len(s) && isDigit(s[at])
	}) || wordThen(s, contactRoles, boundary)
}

var permissionWords = newWordSet(
	"not allowed", "allowed", "may not", "must not", "must never", "never", "prohibited", "forbidden",
	"only", "nicht erlaubt", "erlaubt", "darf", "dürfen", "nie", "niemals", "verboten", "untersagt", "nur",
)

// statesPermission: (?i)\b(not allowed|allowed|may not|must not|must never|never|prohibited|forbidden|only|nicht erlaubt|erlaubt|darf|dürfen|nie|niemals|verboten|untersagt|nur)\b
func statesPermission(s string) bool { return wordThen(s, permissionWords, boundary) }

// statesThreshold: \d+\s*%
func statesThreshold(s string) bool {
	return afterNumber(s, func(s string, at int) bool { return at < len(s) && s[at] == '%' })
}

// afterNumber reports whether then holds after some run of digits of s and the spaces behind
// it: the \d+\s* that opens a pattern. Only a whole run can be followed by anything but a digit,
// so each run is tried once, from its end.
func afterNumber(s string, then func(s string, at int) bool) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			i = skipDigits(s, i)
			if then(s, skipSpace(s, i)) {
				return true
			}
		}
	}
	return false
}

// wordThen reports whether one of words starts at a word boundary of s under (?i) and then holds
// where it ends: \b(w1|w2|...) and what follows it (boundary for a closing \b).
func wordThen(s string, words *wordSet, then func(s string, end int) bool) bool {
	for i := 0; i < len(s); i++ {
		if words.first[s[i]] == nil || !boundary(s, i) {
			continue
		}
		for _, w := range words.first[s[i]] {
			if end, ok := foldPrefix(s, i, w); ok && then(s, end) {
				return true
			}
		}
	}
	return false
}

// foldAnyAt reports whether one of words matches s at i under (?i), followed by a word boundary
// when end is set.
func foldAnyAt(s string, i int, words *wordSet, end bool) bool {
	if i >= len(s) {
		return false
	}
	for _, w := range words.first[s[i]] {
		if e, ok := foldPrefix(s, i, w); ok && (!end || boundary(s, e)) {
			return true
		}
	}
	return false
}

// wordSet is a list of literals by the first byte a match of each can start with, so that a scan
// tries only the literals a position can start.
type wordSet struct {
	first [256][]string
}

func newWordSet(words ...string) *wordSet {
	ws := &wordSet{}
	var buf [utf8.UTFMax]byte
	for _, w := range words {
		l, _ := utf8.DecodeRuneInString(w)
		r := l
		for {
			b := buf[:utf8.EncodeRune(buf[:], r)][0]
			if !slices.Contains(ws.first[b], w) {
				ws.first[b] = append(ws.first[b], w)
			}
			if r = unicode.SimpleFold(r); r == l {
				break
			}
		}
	}
	return ws
}

// foldPrefix matches the literal lit against s from i, letters folded as (?i) folds them, and
// returns where the match ends in s.
func foldPrefix(s string, i int, lit string) (int, bool) {
	for _, l := range lit {
		if i >= len(s) {
			return 0, false
		}
		c := s[i]
		if c < utf8.RuneSelf && l < utf8.RuneSelf {
			if rune(c) != l && !(l >= 'a' && l <= 'z' && rune(c) == l-'a'+'A') {
				return 0, false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !foldEqual(r, l) {
			return 0, false
		}
		i += n
	}
	return i, true
}

// foldEqual reports whether r and l are the same rune under simple case folding.
func foldEqual(r, l rune) bool {
	if r == l {
		return true
	}
	for f := unicode.SimpleFold(l); f != l; f = unicode.SimpleFold(f) {
		if f == r {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// skipSpace skips \s, which RE2 defines as [\t\n\f\r ].
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i
}

// boundary is RE2's \b at byte i: an ASCII word character on exactly one side. A byte of a
// multi-byte rune, or of invalid UTF-8, is never part of one.
func boundary(s string, i int) bool {
	return (i > 0 && isASCIIWord(s[i-1])) != (i < len(s) && isASCIIWord(s[i]))
}

func isASCIIWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
