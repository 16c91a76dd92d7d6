package textproc

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
)

// Alt is one synonym of a question's word, as an index term.
type Alt struct {
	Term string // the stem of one token of the alternative
	// Rule is the question's term the synonym rule matched ("handy", "phone died"), for hit
	// reasons.
	Rule string
}

// MaxAlts bounds the synonym terms attached to one word.
const MaxAlts = 16

// altsRoom is the capacity a word's alternatives start with.
const altsRoom = 8

// WithSynonyms returns a copy of a whose Synonyms attaches the alternatives of m's rules, which
// must be compiled with a.Tokens and a.Stem (Set.CompileStemmed).
func (a *Analyzer) WithSynonyms(m *synonyms.Matcher) *Analyzer {
	c := *a
	c.syn = m
	return &c
}

// Synonyms attaches to groups, the Groups of text, the stems of the synonyms their words have:
// a rule's term matches a run of the text's tokens (stop words included, so "phone is dead"
// matches) and every word of that run gets the alternative's words; the parts of a compound the
// corpus does not use as a word are looked up on their own ("Putz" of "Putzrechnung"). Stop
// words of an alternative are dropped, and a word's own stem is never its synonym.
func (a *Analyzer) Synonyms(text string, groups []Group) []Group {
	if a.syn == nil || len(groups) == 0 {
		return groups
	}
	return a.synonymsOf(a.Tokens(text), nil, nil, groups, nil)
}

// QuestionWords is the whole analysis of a question, an untrusted text, folding and splitting it
// once: QuestionGroups with the words' synonyms (see Synonyms).
func (a *Analyzer) QuestionWords(text string) []Group {
	var qa QuestionAnalysis
	a.AnalyseQuestion(&qa, text)
	return qa.Words
}

// QuestionAnalysis is a question's analysis in arrays that a caller analysing question after
// question lends again once done with them: the analysis appends to Words[:0] and Written[:0].
type QuestionAnalysis struct {
	// Words are the question's words (QuestionWords).
	Words []Group
	// Written is each stem of the question's tokens (Tokens, Stem) with the first token of it,
	// in order, at most cap(Written) of them.
	Written [][2]string
	// Alts is an array the words' alternatives are cut from, MaxAlts for each word that has any,
	// as long as it has room (a word beyond makes its own).
	Alts []Alt
	// Tokens are the question's tokens, as Tokens gives them, and Stems the stem of each (Stem);
	// Ends the index in Tokens after the last token of each of its sentences (WholeSentences), so
	// that sentence i's tokens are Tokens[Ends[i-1]:Ends[i]].
	Tokens, Stems []string
	Ends          []int
}

// AnalyseQuestion analyses text, a question, into qa: its words, its tokens and their stems,
// sentence by sentence, from one folding and splitting of the text.
func (a *Analyzer) AnalyseQuestion(qa *QuestionAnalysis, text string) {
	// The words live only while the groups are made: their arrays are pooled.
	sc := questionScratches.Get().(*questionScratch)
	defer sc.release()
	// Each sentence is folded on its own (a sentence ends with a space or a line break, so the
	// text folds to the same), into one string: ends holds where each ends in it, then the
	// number of tokens up to its end.
	ends := qa.Ends[:0]
	var b strings.Builder
	b.Grow(len(text))
	for start, end := range WholeSentences(text) {
		a.foldInto(&b, text[start:end])
		ends = append(ends, b.Len())
	}
	folded, toks, from := b.String(), qa.Tokens[:0], 0
	for i, end := range ends {
		toks = appendWords(toks, folded[from:end])
		ends[i], from = len(toks), end
	}
	toks = a.written(toks, ends)
	qa.Tokens, qa.Ends = toks, ends
	// Each token is looked up once, for its group, its stem, the stems it wrote and the
	// synonyms' terms of several words.
	sc.ws = a.appendWordsOf(sc.ws[:0], toks)
	qa.Stems = qa.Stems[:0]
	for _, w := range sc.ws {
		qa.Stems = append(qa.Stems, w.stem)
	}
	qa.Written = appendStemsWritten(qa.Written[:0], toks, sc.ws)
	sc.alts = qa.Alts[:0]
	qa.Words = a.questionGroups(qa.Words[:0], toks, qa.Stems, sc)
	qa.Alts, sc.alts = sc.alts, nil // the words' alternatives, which the scratch must not clear
}

// appendStemsWritten appends to out each stem of toks (ws their words) with the first token of
// it, up to cap(out).
func appendStemsWritten(out [][2]string, toks []string, ws []word) [][2]string {
	// held has the bit of every stem out holds (stemBit): a stem whose bit is clear, as most of a
	// question's are, is new without being compared with each stem before it.
	var held uint64
	for _, w := range out {
		held |= stemBit(w[0])
	}
	for i, tok := range toks {
		if len(out) == cap(out) {
			break
		}
		// A token's stem as Stem gives it: word leaves tokens too short or too long unstemmed.
		st := ws[i].stem
		b := stemBit(st)
		if held&b != 0 && slices.ContainsFunc(out, func(w [2]string) bool { return w[0] == st }) {
			continue
		}
		held |= b
		out = append(out, [2]string{st, tok})
	}
	return out
}

// stemSeed seeds stemBit's hash, which nothing keeps beyond one call.
var stemSeed = maphash.MakeSeed()

// stemBit is a string's bit of 64, for a set of a few strings: a clear bit says a string is not
// in the set.
func stemBit(s string) uint64 { return 1 << (maphash.String(stemSeed, s) & 63) }

// questionGroups appends to dst the groups of a question's tokens, whose words are sc.ws and
// stems stems, with their synonyms.
func (a *Analyzer) questionGroups(dst []Group, toks, stems []string, sc *questionScratch) []Group {
	groups := a.appendGroupsOf(dst, toks, sc.ws, MaxQuestionChecks)
	if a.syn == nil || len(groups) == 0 {
		return groups
	}
	return a.synonymsOf(toks, stems, sc.ws, groups, sc)
}

// questionScratch holds the arrays QuestionWords needs while it makes a question's groups.
type questionScratch struct {
	ws   []word
	word []int
	// exps are the synonyms' expansions, read while the groups are made, and starts what the
	// matcher knows of each token (word.start).
	exps   []synonyms.Expansion
	starts []synonyms.Start
	// alts is the caller's array the words' alternatives are cut from (QuestionAnalysis.Alts).
	alts []Alt
}

var questionScratches = sync.Pool{New: func() any { return new(questionScratch) }}

// release returns the scratch to the pool, without the arrays a long question made large, and
// without the strings it points to.
func (sc *questionScratch) release() {
	const keep = 64
	// Arrays a long question made large are dropped. The others keep the words and expansions
	// they held, unread until overwritten (see retrieval's question.release for why).
	if cap(sc.ws) > keep || cap(sc.word) > keep || cap(sc.exps) > keep || cap(sc.starts) > keep {
		*sc = questionScratch{}
	}
	questionScratches.Put(sc)
}

// synonymsOf is Synonyms over text's tokens; ws, when not nil, are their words (wordsOf), and
// stems, when not nil, their stems. sc, when not nil, lends its arrays.
func (a *Analyzer) synonymsOf(toks, stems []string, ws []word, groups []Group, sc *questionScratch) []Group {
	if ws == nil {
		ws = a.wordsOf(toks)
	}
	if stems == nil {
		// The matcher's terms of several words are matched by their stems (Set.CompileStemmed).
		stems = make([]string, len(ws))
		for i := range ws {
			stems[i] = ws[i].stem
		}
	}
	if sc == nil {
		sc = &questionScratch{}
	}
	// word[i] is the group of token i, -1 for a stop word: Groups keeps one group per word.
	word := slices.Grow(sc.word[:0], len(toks))[:len(toks)]
	sc.word = word
	n := 0
	for i := range toks {
		word[i] = -1
		if !ws[i].stop && n < len(groups) {
			word[i] = n
			n++
		}
	}
	starts := slices.Grow(sc.starts[:0], len(ws))
	for _, w := range ws {
		starts = append(starts, w.start)
	}
	sc.starts = starts
	sc.exps = a.syn.AppendExpandFrom(sc.exps, toks, stems, starts, func(i int) bool { return ws[i].filler })
	for _, e := range sc.exps {
		attached, words := false, 0
		for i := e.Start; i < e.End && i < len(word); i++ {
			if w := word[i]; w >= 0 {
				a.addSynonyms(&groups[w], e, sc)
				attached = true
				words++
			}
		}
		for i := e.Start; i < e.End && i < len(word); i++ {
			if w := word[i]; w >= 0 {
				groups[w].Span = max(groups[w].Span, words)
			}
		}
		if !attached && curatedFile(e.File) {
			// A term of stop words only ("can't get in") gives its words to the word it is
			// about: the next one ("... the car"), else the one before. Only the hand-written
			// rules are trusted with such terms; the generated thesauri have many ("all over",
			// "zu sehr") that mean nothing here.
			if w := nearestWord(word, e.Start, e.End); w >= 0 {
				a.addSynonyms(&groups[w], e, sc)
			}
		}
	}
	a.partSynonyms(toks, word, groups, sc)
	return groups
}

// addSynonyms adds an expansion's words to a group's alternatives, each once and never the
// group's own term, up to MaxAlts.
func (a *Analyzer) addSynonyms(g *Group, e synonyms.Expansion, sc *questionScratch) {
	for _, t := range e.Tokens {
		if len(g.Alts) >= MaxAlts {
			return
		}
		w := a.word(t)
		if w.stop {
			continue
		}
		st := w.stem
		if st == g.Term || slices.ContainsFunc(g.Alts, func(a Alt) bool { return a.Term == st }) {
			continue
		}
		if g.Alts == nil {
			g.Alts = sc.cutAlts()
		}
		g.Alts = append(g.Alts, Alt{Term: st, Rule: e.Rule})
	}
}

// partSynonyms gives a compound's parts their synonyms, only when the compound is not a word of
// the corpus itself: "Putzrechnung" is asked in its parts' terms, "Fahrzeug" is not "Fahr" and
// "Zeug". word[i] is token i's group, -1 for a stop word.
func (a *Analyzer) partSynonyms(toks []string, word []int, groups []Group, sc *questionScratch) {
	for i, t := range toks {
		w := word[i]
		if w < 0 || len(groups[w].Parts) == 0 || (a.split != nil && a.split.Knows(t)) {
			continue
		}
		for _, p := range groups[w].Parts {
			for _, e := range a.syn.Expand([]string{p}, nil, nil) {
				a.addSynonyms(&groups[w], e, sc)
			}
		}
	}
}

// cutAlts returns the empty alternatives of a word's first synonym: MaxAlts cut from the
// caller's array while it has room, else a new array with room for a few, so that a word's
// alternatives are one allocation, not one per doubling.
func (sc *questionScratch) cutAlts() []Alt {
	if n := len(sc.alts); cap(sc.alts)-n >= MaxAlts {
		sc.alts = sc.alts[:n+MaxAlts]
		return sc.alts[n : n : n+MaxAlts]
	}
	return make([]Alt, 0, altsRoom)
}

// Curated reports whether a rule's source ("<file>:<line>") is a hand-written synonym file
// (operators.txt), as opposed to a list generated from a thesaurus.
func Curated(source string) bool {
	file, _, _ := strings.Cut(source, ":")
	return curatedFile(file)
}

func curatedFile(file string) bool { return strings.HasSuffix(file, "operators.txt") }

// nearestWord is the group of the first word at or after end, else of the last before start,
// -1 when there is none.
func nearestWord(word []int, start, end int) int {
	for i := end; i < len(word); i++ {
		if word[i] >= 0 {
			return word[i]
		}
	}
	for i := start - 1; i >= 0; i-- {
		if word[i] >= 0 {
			return word[i]
		}
	}
	return -1
}

// isFiller reports whether a folded token is one a synonym term may pass over (see
// synonyms.Matcher.Expand): articles, possessives and forms of "be" ("sein") that an operator
// puts between the words a rule writes together.
func (a *Analyzer) isFiller(tok string) bool {
	_, ok := a.fillers[tok]
	return ok
}

var englishFillers = stopSet("en", "a", "an", "the", "s", "is", "are", "was", "were", "been", "be",
	"my", "his", "her", "their", "our", "your", "its", "this", "that", "completely", "totally",
	"really", "just", "all", "now", "still")

var germanFillers = stopSet("de", "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen",
	"einem", "einer", "ist", "sind", "war", "waren", "sein", "seine", "seinem", "seinen", "ihr",
	"ihre", "ihrem", "ihren", "mein", "meine", "unser", "unsere", "total", "komplett", "voll",
	"ganz", "einfach", "jetzt", "schon", "noch", "auch")
