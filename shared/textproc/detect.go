package textproc

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of DetectLanguage: the text is read up to maxDetectRunes characters (the API's question
// limit) and at most maxDetectTokens words are scored; a word's features are read from its first
// maxTokenBytes bytes.
const (
	maxDetectRunes  = 2000
	maxDetectTokens = 64
	maxTokenBytes   = 48
)

// detectMargin is how far one language's score must lead the other's for a confident answer.
const detectMargin = 1.0

// Per-word caps: a word's spelling features count at most maxFeatureScore for each language, so
// that one long compound cannot outvote the function words around it.
const (
	wordWeight      = 1.0 // a function word or a word of the operator lexicon
	umlautWeight    = 1.5 // ä, ö, ü or ß in the word
	maxFeatureScore = 1.5
	compoundRunes   = 12  // a word this long with no English feature reads as a German compound
	compoundWeight  = 0.8 // its score
	nounWeight      = 0.4 // a capitalised word inside a sentence, as German writes nouns
	partWeight      = 0.8 // a compound that begins or ends with a lexicon word
	minCompoundPart = 4   // bytes of the shortest lexicon word taken as a compound's part
)

// DetectLanguage tells whether text is English or German, for routing an operator's question
// when the caller did not name its language. It returns "en" or "de"; when it cannot tell (no
// letters, or neither language leads by the margin) it returns "en" with confident false.
//
// The score of each language is the sum, over the first words of text, of function words (the
// analyzer's stop lists, less the words both languages share, plus chat spellings such as
// "wont" and "nich"), a small lexicon of operator vocabulary, and spelling: umlauts and ß,
// letter groups typical of each language ("sch", "cht", "tz", "ung" against "th", "wh", "ing",
// "ght", "ou") and the length of German compounds. It is deterministic, allocates nothing and
// reads a bounded part of the text.
func DetectLanguage(text string) (lang string, confident bool) {
	d := score(text)
	switch diff := d.de - d.en; {
	case diff >= detectMargin:
		return "de", true
	case diff <= -detectMargin:
		return "en", true
	}
	return "en", false
}

// score reads text within the bounds and returns the detector with both languages' scores.
func score(text string) detector {
	d := detector{sentenceStart: true}
	runes := 0
	for _, r := range text {
		if runes == maxDetectRunes || d.tokens == maxDetectTokens {
			break
		}
		runes++
		switch {
		case unicode.IsLetter(r):
			if unicode.IsUpper(r) {
				if d.runes == 0 {
					d.capital = true
				} else {
					d.upperInside = true
				}
			}
			d.letter(unicode.ToLower(r))
		case unicode.IsDigit(r):
			d.digit = true
		case (r == '\'' || r == '’') && d.n > 0:
			// inside a word: "won't" is read as "wont", "customer's" as "customers"
		default:
			d.flush()
			switch r {
			case '.', '!', '?', ':', ';', '\n', '"', '(':
				d.sentenceStart = true
			}
		}
	}
	d.flush()
	return d
}

// detector holds the word being read and the scores so far.
type detector struct {
	tok    [maxTokenBytes]byte // the word, lowercased, UTF-8
	n      int                 // bytes in tok
	runes  int                 // letters in the word, including any past tok
	umlaut bool                // the word has ä, ö, ü or ß
	digit  bool                // the word has a digit: a plate, a code or a figure, not language
	tokens int                 // words scored
	// capital is a word with a capital first letter and no other (a German noun, mid-sentence);
	// sentenceStart says that no word of the present sentence was read yet.
	capital, upperInside, sentenceStart bool
	de, en                              float64
}

func (d *detector) letter(r rune) {
	d.runes++
	switch r {
	case 'ä', 'ö', 'ü', 'ß':
		d.umlaut = true
	}
	if r < 0x80 {
		if d.n < maxTokenBytes {
			d.tok[d.n] = byte(r)
			d.n++
		}
		return
	}
	if d.n+4 <= maxTokenBytes {
		d.n += utf8.EncodeRune(d.tok[d.n:], r)
	}
}

// flush scores the word read so far and starts the next.
func (d *detector) flush() {
	defer func() { d.n, d.runes, d.umlaut, d.digit, d.capital, d.upperInside = 0, 0, false, false, false, false }()
	if d.n == 0 || d.digit {
		return
	}
	noun := d.capital && !d.upperInside && !d.sentenceStart && d.runes >= 3
	d.sentenceStart = false
	d.tokens++
	tok := d.tok[:d.n]
	var enBuf, deBuf [2 * maxTokenBytes]byte
	enKey := foldForLookup(enBuf[:0], tok, false)
	deKey := foldForLookup(deBuf[:0], tok, true)
	if _, ok := detectShared[string(enKey)]; ok {
		return // "in", "was", "will", "also": no evidence either way
	}
	if _, ok := detectShared[string(deKey)]; ok {
		return
	}
	_, enWord := detectEnglish[string(enKey)]
	_, deWord := detectGerman[string(deKey)]
	if enWord && deWord && string(enKey) != string(deKey) {
		deWord = false // "due" is English as written, not German "du" spelled "ue"
	}
	if enWord {
		d.en += wordWeight
	}
	if deWord {
		d.de += wordWeight
	}
	if !enWord && !deWord {
		if hasPart(enKey, englishParts) {
			d.en += partWeight
		}
		if hasPart(deKey, germanParts) {
			d.de += partWeight
		}
	}
	if d.runes < 2 {
		return // "a" and "i" count as words; one letter says nothing about spelling
	}
	if d.umlaut {
		d.de += umlautWeight
	}
	en, de := spellingScores(tok)
	if noun {
		de += nounWeight
	}
	if en == 0 && d.runes >= compoundRunes {
		de += compoundWeight
	}
	d.en += min(en, maxFeatureScore)
	d.de += min(de, maxFeatureScore)
}

// hasPart reports whether the folded word w begins or ends with a word of parts, leaving at least
// minCompoundPart bytes for the rest of the compound.
func hasPart(w []byte, parts map[string]struct{}) bool {
	for i := minCompoundPart; i+minCompoundPart <= len(w); i++ {
		if _, ok := parts[string(w[:i])]; ok {
			return true
		}
		if _, ok := parts[string(w[i:])]; ok {
			return true
		}
	}
	return false
}

// foldForLookup appends tok (lowercase) to dst folded as Analyzer.Fold folds it for English
// (german false: diacritics removed) or German (ä/ae, ö/oe, ü/ue and ß/ss meet), so that it can
// be looked up in sets built by stopSet. Letters outside Latin-1 are kept as they are.
func foldForLookup(dst, tok []byte, german bool) []byte {
	var prev byte
	for i := 0; i < len(tok); {
		c := tok[i]
		if c < 0x80 {
			i++
			if german && c == 'e' && (prev == 'a' || prev == 'o' || prev == 'u') {
				prev = 0
				continue
			}
			dst = append(dst, c)
			prev = c
			continue
		}
		// Two-byte UTF-8 of U+00C0..U+00FF starts with 0xC3.
		if c == 0xC3 && i+1 < len(tok) {
			r := rune(tok[i+1]&0x3F) | 0xC0
			i += 2
			if r == 'ß' {
				dst = append(dst, 's', 's')
				prev = 's'
				continue
			}
			if b := latin1Base(r); b != 0 {
				dst = append(dst, b)
				prev = b
				continue
			}
			dst = append(dst, 0xC3, byte(0x80|r&0x3F))
			prev = 0
			continue
		}
		dst = append(dst, c)
		prev = 0
		i++
	}
	return dst
}

// latin1Base is the base letter of a lowercase accented Latin-1 letter, or 0.
func latin1Base(r rune) byte {
	switch r {
	case 'à', 'á', 'â', 'ã', 'ä', 'å':
		return 'a'
	case 'ç':
		return 'c'
	case 'è', 'é', 'ê', 'ë':
		return 'e'
	case 'ì', 'í', 'î', 'ï':
		return 'i'
	case 'ñ':
		return 'n'
	case 'ò', 'ó', 'ô', 'õ', 'ö', 'ø':
		return 'o'
	case 'ù', 'ú', 'û', 'ü':
		return 'u'
	case 'ý', 'ÿ':
		return 'y'
	}
	return 0
}

// Where a spelling feature must occur in a word.
const (
	anywhere = iota
	prefix
	suffix
)

type spelling struct {
	pat   string
	where int
	w     float64
}

// englishSpelling and germanSpelling are letter groups that are common in one language's words
// and rare in the other's, with weights by how reliable they are.
var englishSpelling = []spelling{
	{"th", anywhere, 1.0}, {"wh", prefix, 1.0}, {"ght", anywhere, 1.0}, {"ing", suffix, 0.8},
	{"tch", anywhere, 0.8}, {"wr", prefix, 0.8}, {"ou", anywhere, 0.6}, {"ea", anywhere, 0.6},
	{"ow", anywhere, 0.7}, {"aw", anywhere, 0.5}, {"ew", anywhere, 0.5}, {"ly", suffix, 0.7},
	{"ed", suffix, 0.6}, {"sh", anywhere, 0.6}, {"oo", anywhere, 0.4}, {"ph", anywhere, 0.4},
	{"ies", suffix, 0.5}, {"y", suffix, 0.4}, {"ee", anywhere, 0.3}, {"ness", suffix, 0.6},
	{"less", suffix, 0.6}, {"ful", suffix, 0.6},
}

var germanSpelling = []spelling{
	{"sch", anywhere, 0.8}, {"cht", anywhere, 1.0}, {"tz", anywhere, 0.9}, {"ich", anywhere, 0.6},
	{"pf", anywhere, 0.7}, {"chen", suffix, 0.8}, {"ung", suffix, 0.9}, {"keit", suffix, 1.0},
	{"heit", suffix, 1.0}, {"ei", anywhere, 0.5}, {"eu", anywhere, 0.5}, {"au", anywhere, 0.3},
	{"en", suffix, 0.3}, {"z", anywhere, 0.3}, {"mt", suffix, 0.6}, {"kt", suffix, 0.6},
	{"ngt", suffix, 0.6}, {"och", anywhere, 0.6},
}

// spellingScores sums the spelling features of one lowercase word for each language.
func spellingScores(tok []byte) (en, de float64) {
	for _, f := range englishSpelling {
		if has(tok, f.pat, f.where) {
			en += f.w
		}
	}
	for _, f := range germanSpelling {
		if has(tok, f.pat, f.where) {
			de += f.w
		}
	}
	// A "c" that starts no "ch" or "ck" ("car", "cust", "cancel", "scratch") is English; German
	// writes k or z there.
	for i, c := range tok {
		if c == 'c' && (i+1 == len(tok) || (tok[i+1] != 'h' && tok[i+1] != 'k')) {
			en += 0.6
			break
		}
	}
	// A word-initial k before a, o, u, l or r ("kunde", "kaputt", "klemmt", "kratzer") is German,
	// where English writes c; English k-words ("key", "keep", "kit") go on with e or i.
	if len(tok) >= 3 && tok[0] == 'k' && strings.IndexByte("aoulr", tok[1]) >= 0 {
		de += 0.5
	}
	// A linking s after -ung, -ion, -heit or -keit inside a word is a German compound
	// ("Rechnungsadresse", "Reaktionszeit"); English has these only as plural endings.
	for _, p := range [...]string{"ungs", "ions", "heits", "keits"} {
		if i := index(tok, p); i >= 0 && i+len(p) < len(tok) {
			de += 0.8
			break
		}
	}
	// German prefixes ver- and ge- on a longer word: "verloren", "vergessen", "geparkt",
	// "gefahren" (English "verify" and "getting" end otherwise or are short).
	if len(tok) >= 6 {
		if has(tok, "ver", prefix) {
			de += 0.5
		}
		if has(tok, "ge", prefix) && (has(tok, "t", suffix) || has(tok, "en", suffix)) {
			de += 0.7
		}
	}
	return en, de
}

// has reports whether pat occurs in tok at the given place.
func has(tok []byte, pat string, where int) bool {
	if len(pat) > len(tok) {
		return false
	}
	switch where {
	case prefix:
		return string(tok[:len(pat)]) == pat
	case suffix:
		return string(tok[len(tok)-len(pat):]) == pat
	}
	return index(tok, pat) >= 0
}

// index is the first place of pat in tok, or -1.
func index(tok []byte, pat string) int {
	for i := 0; i+len(pat) <= len(tok); i++ {
		if string(tok[i:i+len(pat)]) == pat {
			return i
		}
	}
	return -1
}
