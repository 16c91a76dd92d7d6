// Package textproc turns text into index terms the same way for procedures and questions:
// tokenisation, case and diacritic folding (German umlauts and their ae/oe/ue spellings fold
// together), stop-word removal and Snowball stemming for English and German, plus German
// compound splitting against the corpus vocabulary.
package textproc

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/german"
	"golang.org/x/text/unicode/norm"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
)

// Languages lists the supported languages, in the order the API reports them.
var Languages = []string{"en", "de"}

// Supported reports whether lang is one of Languages.
func Supported(lang string) bool {
	return slices.Contains(Languages, lang)
}

// Analyzer produces normalised, stemmed terms for one language. It is safe for concurrent use.
type Analyzer struct {
	syn  *synonyms.Matcher
	lang string
	stop map[string]struct{}
	// fillers are the tokens a synonym term may pass over (see isFiller).
	fillers map[string]struct{}
	stem    func(*snowballstem.Env) bool
	split   *Splitter
	cache   *stemCache
	// stopStems are the stems of the stop words, made when StopStem is first asked.
	stopStems func() map[string]struct{}
}

// stemCache remembers what the analysis needs of a token (its stem, whether it is a stop word or
// a filler), so that each token of a question costs one look-up: building the index stems the
// same few thousand words tens of thousands of times, and the Snowball stemmer alone would be
// 40 % of a cold start's index build. It stops growing at maxStemCache entries, so that questions cannot grow it
// without bound.
type stemCache struct {
	mu sync.RWMutex
	m  map[string]word
}

// word is what the analysis knows of one folded token.
type word struct {
	stem   string
	stop   bool // a stop word (IsStop)
	filler bool // a word a synonym term may pass over (isFiller)
	// start is what the synonym matcher startOf knows of the token as the start of a term
	// (synonyms.Matcher.StartOf). An analyzer and the copy of it given synonyms share their
	// cache of words: the copy adds the start to a word the first time it reads it (hasStart).
	start   synonyms.Start
	startOf *synonyms.Matcher
}

const maxStemCache = 1 << 16

// MaxStemToken is the longest token, in bytes of folded text, that is stemmed (see Stem). The
// longest word of the procedures has 30.
const MaxStemToken = 64

func (c *stemCache) get(tok string) (word, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	w, ok := c.m[tok]
	return w, ok
}

// room reports whether put would keep tok: it is held, or the cache is not full.
func (c *stemCache) room(tok string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, held := c.m[tok]
	return held || len(c.m) < maxStemCache
}

func (c *stemCache) put(tok string, w word) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, held := c.m[tok]; held || len(c.m) < maxStemCache {
		// tok and the stem may be pieces of a whole question's text: the cache keeps copies, so
		// that it never holds the question.
		same := w.stem == tok
		tok = strings.Clone(tok)
		if same {
			w.stem = tok
		} else {
			w.stem = strings.Clone(w.stem)
		}
		c.m[tok] = w
	}
}

// New returns the analyzer for lang; any language other than "de" is treated as English.
func New(lang string) *Analyzer {
	if lang == "de" {
		return withStopStems(&Analyzer{lang: "de", stop: germanStop, fillers: germanFillers, stem: german.Stem, cache: &stemCache{m: map[string]word{}}})
	}
	return withStopStems(&Analyzer{lang: "en", stop: englishStop, fillers: englishFillers, stem: english.Stem, cache: &stemCache{m: map[string]word{}}})
}

func withStopStems(a *Analyzer) *Analyzer {
	a.stopStems = sync.OnceValue(func() map[string]struct{} {
		m := make(map[string]struct{}, len(a.stop))
		for w := range a.stop {
			m[a.Stem(w)] = struct{}{}
		}
		return m
	})
	return a
}

// StopStem reports whether stem is the stem of a stop word: the index holds no stop word, so
// its terms cannot tell whether a text holds such a stem.
func (a *Analyzer) StopStem(stem string) bool {
	_, ok := a.stopStems()[stem]
	return ok
}

// WithSplitter returns a copy of a that also emits the parts of compounds known to s.
func (a *Analyzer) WithSplitter(s *Splitter) *Analyzer {
	c := *a
	c.split = s
	return &c
}

// Normalize returns s in Unicode NFKC without format characters (soft hyphens, zero-width
// spaces and joiners, word joiners, byte order marks: category Cf), so that look-alikes such as
// fullwidth letters and ligatures ("ﬁ") read as the plain letters, and a word broken by an
// invisible character reads whole. Fold applies the same normalisation.
func Normalize(s string) string {
	if isASCII(s) {
		return s
	}
	// Most text is in NFKC already: the quick check answers without copying it.
	if !norm.NFKC.IsNormalString(s) {
		s = norm.NFKC.String(s)
	}
	if strings.IndexFunc(s, isFormat) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isFormat(r) {
			return -1
		}
		return r
	}, s)
}

func isFormat(r rune) bool { return r >= utf8.RuneSelf && unicode.Is(unicode.Cf, r) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Fold lowercases s and removes diacritics, after the compatibility decomposition of Normalize
// (format characters are dropped). For German, ä/ae, ö/oe, ü/ue and ß/ss fold to the same
// letters so that "Bußgeld", "Bussgeld", "Schäden" and "Schaeden" meet.
func (a *Analyzer) Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	a.foldInto(&b, s)
	return b.String()
}

// foldInto writes Fold(s) to b.
func (a *Analyzer) foldInto(b *strings.Builder, s string) {
	f := folder{b: b, de: a.lang == "de"}
	switch {
	case isASCII(s):
		// Most of any text here: no format character, no combining mark, and unicode.ToLower
		// changes A to Z alone.
		for i := 0; i < len(s); i++ {
			f.ascii(s[i])
		}
	case isLatin(s):
		// Letters with diacritics, as German and English text has them: each rune's own
		// decomposition is the decomposition of the text (none of them starts with a mark).
		for _, r := range s {
			if r < utf8.RuneSelf {
				f.ascii(byte(r))
				continue
			}
			for _, d := range latinNFKD()[r-utf8.RuneSelf] {
				f.add(d)
			}
		}
	default:
		for _, r := range norm.NFKD.String(s) {
			f.add(r)
		}
	}
}

// folder writes the folded runes of a decomposed text (see Fold).
type folder struct {
	b    *strings.Builder
	prev rune
	de   bool
}

func (f *folder) ascii(c byte) {
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	if c == 'e' && f.de && (f.prev == 'a' || f.prev == 'o' || f.prev == 'u') {
		f.prev = 0 // as in add
		return
	}
	f.b.WriteByte(c)
	f.prev = rune(c)
}

func (f *folder) add(r rune) {
	if r < utf8.RuneSelf {
		f.ascii(byte(r))
		return
	}
	if isFormat(r) {
		return // invisible: "Scha\u00ADden" is "Schaden"
	}
	if unicode.Is(unicode.Mn, r) {
		// A combining diaeresis after a, o or u is a German umlaut: it already folded to the
		// base letter, which is also where the ae/oe/ue spelling ends up below.
		return
	}
	r = unicode.ToLower(r)
	switch r {
	case 'ß':
		f.b.WriteString("ss")
		f.prev = 's'
		return
	case 'e':
		if f.de && (f.prev == 'a' || f.prev == 'o' || f.prev == 'u') {
			f.prev = 0 // "ae" -> "a": the e is dropped, and "aee" keeps its second e
			return
		}
	}
	f.b.WriteRune(r)
	f.prev = r
}

// latinEnd ends the runes whose decompositions latinNFKD holds: Latin-1 and Latin Extended-A
// and -B, below the combining marks.
const latinEnd = 0x250

// latinNFKD holds the compatibility decomposition of each rune from utf8.RuneSelf to latinEnd.
var latinNFKD = sync.OnceValue(func() *[latinEnd - utf8.RuneSelf]string {
	var t [latinEnd - utf8.RuneSelf]string
	for r := rune(utf8.RuneSelf); r < latinEnd; r++ {
		t[r-utf8.RuneSelf] = norm.NFKD.String(string(r))
	}
	return &t
})

// isLatin reports whether every rune of s is valid and below latinEnd.
func isLatin(s string) bool {
	for _, r := range s {
		if r >= latinEnd || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// words splits s into its runs of letters and digits: strings.FieldsFunc on
// !(unicode.IsLetter(r) || unicode.IsDigit(r)), without that function's closure and list of
// spans, which would be a tenth of a question's analysis. ASCII, most of any text here, is looked
// up in a table.
func words(s string) []string {
	n, in := 0, false
	for i := 0; i < len(s); {
		w, size := wordRune(s, i)
		if w && !in {
			n++
		}
		in = w
		i += size
	}
	if n == 0 {
		return nil
	}
	return appendWords(make([]string, 0, n), s)
}

// appendWords appends the words of s (see words) to dst.
func appendWords(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); {
		// An ASCII byte is read here, not through wordRune, which the compiler does not inline:
		// a call per byte would be most of a question's tokenising.
		w, size := false, 1
		if c := s[i]; c < utf8.RuneSelf {
			w = asciiWord[c]
		} else {
			w, size = wordRune(s, i)
		}
		switch {
		case w && start < 0:
			start = i
		case !w && start >= 0:
			dst = append(dst, s[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// wordRune reports whether the rune at s[i] is a letter or a digit, and its size.
func wordRune(s string, i int) (bool, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiWord[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r), size
}

// asciiWord marks the ASCII letters and digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// Tokens splits folded text into word tokens (letters and digits), keeping stop words. In
// English a contraction typed without its apostrophe ("cant", "wont", "doesnt") gives the tokens
// of the spelling with it ("can", "t"), so that both meet the same terms and synonym rules. In
// German a colloquial form ("nich", "nen", "aufm", "gibts") gives the tokens of the written form
// ("nicht", "einen", "auf dem", "gibt es"): "geht nich auf" is "geht nicht auf".
func (a *Analyzer) Tokens(text string) []string {
	return a.written(words(a.Fold(text)), nil)
}

// written replaces in toks the contractions and colloquial forms that Tokens rewrites, in a new
// slice when there are any. ends, ascending indexes in toks, are moved to the same tokens'
// indexes in the result.
func (a *Analyzer) written(toks []string, ends []int) []string {
	var out []string // made only when a contraction or colloquial form is found
	shift, e := 0, 0 // the tokens added so far; the first of ends not moved yet
	for i, t := range toks {
		for ; e < len(ends) && ends[e] <= i; e++ {
			ends[e] += shift
		}
		var head, tail string
		ok := false
		switch a.lang {
		case "en":
			head, tail, ok = contraction(t)
		case "de":
			if !colloquialEnds.may(t) {
				break
			}
			if w, found := germanColloquial[t]; found {
				head, tail, ok = w[0], w[1], true
			}
		}
		if !ok {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(toks)+4), toks[:i]...)
		}
		out = append(out, head)
		if tail != "" {
			out = append(out, tail)
			shift++
		}
	}
	for ; e < len(ends); e++ {
		ends[e] += shift
	}
	if out == nil {
		return toks
	}
	return out
}

// contractions are the English contractions operators type without the apostrophe, mapped to
// the token before it; the token after it is the rest of the word ("t", "m", "ve", "s", "re").
// Words that are also words of their own without an apostrophe ("its", "hes", "well", "were",
// "shell") are left out.
var contractions = map[string]string{
	"cant": "can", "wont": "won", "dont": "don", "doesnt": "doesn", "didnt": "didn",
	"isnt": "isn", "arent": "aren", "wasnt": "wasn", "werent": "weren", "hasnt": "hasn",
	"havent": "haven", "hadnt": "hadn", "couldnt": "couldn", "wouldnt": "wouldn",
	"shouldnt": "shouldn", "mustnt": "mustn", "neednt": "needn", "aint": "ain",
	"im": "i", "ive": "i", "youre": "you", "theyre": "they", "thats": "that", "whats": "what",
	"theres": "there", "wheres": "where", "whos": "who", "hows": "how",
}

// germanColloquial maps colloquial German spellings of chat, folded, to the tokens of the
// written form (one or two; an empty second means one). Only forms that are no written word of
// their own are listed: "grad" is also the unit of "30 Grad", "hab" and "mal" are stop words as
// they stand.
var germanColloquial = func() map[string][2]string {
	forms := map[string]string{
		"nich": "nicht", "nix": "nichts", "is": "ist", "jetz": "jetzt",
		"nen": "einen", "ne": "eine", "nem": "einem", "ner": "einer", "son": "so ein", "sone": "so eine",
		"aufm": "auf dem", "aufn": "auf den", "aufs": "auf das", "ans": "an das", "vorm": "vor dem",
		"unterm": "unter dem", "überm": "über dem", "hinterm": "hinter dem", "fürn": "für einen",
		"fürs": "für das", "übers": "über das", "ums": "um das", "durchs": "durch das",
		"obs": "ob es", "wenns": "wenn es", "gibts": "gibt es", "gehts": "geht es",
		"dauerts": "dauert es", "hats": "hat es", "ists": "ist es", "wars": "war es",
	}
	a := &Analyzer{lang: "de"}
	m := make(map[string][2]string, len(forms))
	for k, v := range forms {
		head, tail, _ := strings.Cut(a.Fold(v), " ")
		m[a.Fold(k)] = [2]string{head, tail}
	}
	return m
}()

// wordEnds is a filter of a word list by each word's first and last byte: may is false for a
// token no word of the list can be, and costs a bit test where a map look-up hashes the token.
// Tokens mostly have ends no contraction or colloquial form has: written asked its map for
// every token of every question, about a twentieth of a lookup's string look-ups.
type wordEnds [1 << 16 / 64]uint64

func newWordEnds(words []string) *wordEnds {
	var e wordEnds
	for _, w := range words {
		if w != "" {
			i := endsIndex(w)
			e[i/64] |= 1 << (i % 64)
		}
	}
	return &e
}

func endsIndex(w string) uint32 { return uint32(w[0])<<8 | uint32(w[len(w)-1]) }

func (e *wordEnds) may(tok string) bool {
	if tok == "" {
		return false
	}
	i := endsIndex(tok)
	return e[i/64]&(1<<(i%64)) != 0
}

var (
	contractionEnds = newWordEnds(slices.Collect(maps.Keys(contractions)))
	colloquialEnds  = newWordEnds(slices.Collect(maps.Keys(germanColloquial)))
)

func contraction(tok string) (head, tail string, ok bool) {
	if len(tok) < 2 || len(tok) > 8 || !contractionEnds.may(tok) {
		return "", "", false
	}
	head, ok = contractions[tok]
	if !ok {
		return "", "", false
	}
	return head, tok[len(head):], true
}

// IsStop reports whether a folded token is a stop word.
func (a *Analyzer) IsStop(tok string) bool {
	_, ok := a.stop[tok]
	return ok
}

// Stem stems one folded token. For German, the plural "s" of words ending in a vowel ("Autos",
// "Akkus", "Handys"), which the Snowball German stemmer keeps, is removed first.
// Tokens longer than MaxStemToken bytes are no words: they are kept as they are, which bounds the
// stemmer's work and the stem cache's keys.
func (a *Analyzer) Stem(tok string) string {
	if len(tok) < 3 || len(tok) > MaxStemToken {
		return tok
	}
	return a.word(tok).stem
}

// word is what the analysis needs of tok, from the cache when it holds tok.
func (a *Analyzer) word(tok string) word {
	if len(tok) > MaxStemToken {
		return a.withStart(tok, word{stem: tok, stop: a.IsStop(tok), filler: a.isFiller(tok)})
	}
	w, ok := a.cache.get(tok)
	if ok && a.hasStart(w) {
		return w
	}
	if !ok {
		w = word{stem: tok, stop: a.IsStop(tok), filler: a.isFiller(tok)}
		if len(tok) >= 3 {
			w.stem = a.stemWord(tok)
		}
	}
	w = a.withStart(tok, w)
	if a.cache.room(tok) {
		// A kept word's start carries its follows (synonyms.Matcher.Kept), read once for the
		// cache; a word a full cache does not keep is not worth reading them for.
		if a.syn != nil {
			w.start = a.syn.Kept(w.start, w.stem)
		}
		a.cache.put(tok, w)
	}
	return w
}

// hasStart reports whether w carries what a's synonym matcher knows of its token, or a has none.
func (a *Analyzer) hasStart(w word) bool { return a.syn == nil || w.startOf == a.syn }

// withStart is w with what the synonym matcher knows of tok as the start of a term, so that a
// cached word spares every later question those look-ups (synonyms.Matcher.StartOf).
func (a *Analyzer) withStart(tok string, w word) word {
	if a.syn != nil {
		w.start, w.startOf = a.syn.StartOf(tok, w.stem), a.syn
	}
	return w
}

// wordsOf is word for every token of toks.
func (a *Analyzer) wordsOf(toks []string) []word {
	return a.appendWordsOf(make([]word, 0, len(toks)), toks)
}

// appendWordsOf appends word of every token of toks to dst. The tokens the cache holds are read
// under one read lock, not one each (two atomic operations a token: a question has a score of
// tokens); the others are made as word makes them.
func (a *Analyzer) appendWordsOf(dst []word, toks []string) []word {
	from := len(dst)
	missing := false
	a.cache.mu.RLock()
	for _, t := range toks {
		w, ok := a.cache.m[t]
		if !ok || !a.hasStart(w) { // the cache never holds a token longer than MaxStemToken (see word)
			w, missing = word{}, true // made below: a word's stem is never empty
		}
		dst = append(dst, w)
	}
	a.cache.mu.RUnlock()
	if missing {
		for i, t := range toks {
			if dst[from+i].stem == "" {
				dst[from+i] = a.word(t)
			}
		}
	}
	return dst
}

func (a *Analyzer) stemWord(tok string) string {
	if a.lang == "de" && len(tok) > 4 && tok[len(tok)-1] == 's' && strings.IndexByte("aiouy", tok[len(tok)-2]) >= 0 {
		tok = tok[:len(tok)-1]
	}
	env := snowballstem.NewEnv(tok)
	a.stem(env)
	return env.Current()
}

// Group is one word of a text as index terms: its stem and, for a German compound, the stems
// of its known parts. Complete is false when only part of the compound is known.
type Group struct {
	Term     string
	Parts    []string
	Complete bool
	// Alts are the stems of the word's synonyms (see WithSynonyms), each with the question's
	// term that the rule matched.
	Alts []Alt
	// Span is how many words the longest synonym term the word is part of has (0 for none):
	// "battery" in "phone battery is dead" is one of three.
	Span int
}

// Groups returns the words of text, folded, stop words removed, stemmed, with compound parts.
// Each split has its own budget (MaxSplitChecks); for a question, use QuestionGroups.
func (a *Analyzer) Groups(text string) []Group { return a.groups(text, -1) }

// MaxQuestionChecks bounds the stems all the splits of one question may look up (see
// MaxSplitChecks), so that no question costs more than a few typical ones whatever its words.
// Once it is spent, the remaining words are kept whole. The costliest question of the
// evaluation sets needs 83.
const MaxQuestionChecks = 256

// QuestionGroups is Groups for a question, an untrusted text: all its splits together draw on
// MaxQuestionChecks. A question that stays within it gets exactly the groups of Groups.
func (a *Analyzer) QuestionGroups(text string) []Group { return a.groups(text, MaxQuestionChecks) }

// QuestionTerms is Terms for a question (see QuestionGroups).
func (a *Analyzer) QuestionTerms(text string) []string { return Flatten(a.QuestionGroups(text)) }

// groups analyses text; budget < 0 gives each split its own MaxSplitChecks, else the splits
// share budget. A word that occurs again gets the group of its first occurrence.
func (a *Analyzer) groups(text string, budget int) []Group {
	return a.groupsOf(a.Tokens(text), nil, budget)
}

// groupsOf is groups over text's tokens; ws, when not nil, are the tokens. words (Analyzer.wordsOf),
// so that a caller that needs them too looks each token up once.
func (a *Analyzer) groupsOf(toks []string, ws []word, budget int) []Group {
	return a.appendGroupsOf(nil, toks, ws, budget)
}

// appendGroupsOf is groupsOf appending to out, which must be empty.
func (a *Analyzer) appendGroupsOf(out []Group, toks []string, ws []word, budget int) []Group {
	if ws == nil {
		ws = a.wordsOf(toks)
	}
	n := 0 // the words: stop words make no group
	for _, w := range ws {
		if !w.stop {
			n++
		}
	}
	out = slices.Grow(out, n)
	// A repeated word takes its first group: a question's words are searched for it (words
	// holds each group's token, held the bit of each, stemBit, so that most words, which are
	// new, are told so without a search), a longer text's are hashed.
	const searched = 64
	var words [searched]string
	var held uint64
	var first map[string]int
	if len(toks) > searched {
		first = map[string]int{}
	}
	seen := func(t string) (int, bool) {
		if first != nil {
			i, ok := first[t]
			return i, ok
		}
		if held&stemBit(t) == 0 {
			return -1, false
		}
		i := slices.Index(words[:len(out)], t)
		return i, i >= 0
	}
	for k, t := range toks {
		if len(out) == n {
			break // the words are all made: the rest are stop words
		}
		if ws[k].stop {
			continue
		}
		if i, ok := seen(t); ok {
			g := out[i]
			g.Parts = slices.Clone(g.Parts)
			if first == nil {
				words[len(out)] = t
			}
			out = append(out, g)
			continue
		}
		g := Group{Term: ws[k].stem}
		if a.split != nil {
			checks := MaxSplitChecks
			if budget >= 0 {
				checks = min(checks, budget)
			}
			left := checks
			parts, complete := a.split.splitBudget(t, &left)
			if budget >= 0 {
				budget -= checks - left
			}
			if len(parts) > 0 {
				g.Parts = make([]string, 0, len(parts))
			}
			for _, p := range parts {
				g.Parts = append(g.Parts, a.Stem(p))
			}
			g.Complete = complete
		}
		if first != nil {
			first[t] = len(out)
		} else {
			words[len(out)] = t
			held |= stemBit(t)
		}
		out = append(out, g)
	}
	return out
}

// Terms returns the index terms of text: every group's stem, followed by its parts.
func (a *Analyzer) Terms(text string) []string { return Flatten(a.Groups(text)) }

// Flatten lists the terms of groups: each stem followed by its parts.
func Flatten(groups []Group) []string {
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		out = append(out, g.Term)
		out = append(out, g.Parts...)
	}
	return out
}
