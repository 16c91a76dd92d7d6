package textproc

import (
	"slices"

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

// WithSynonyms returns a copy of a whose Synonyms attaches the alternatives of m's rules, which
// must be compiled with a.Tokens (Set.Compile).
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
	return a.synonymsOf(a.Tokens(text), groups)
}

// QuestionWords is the whole analysis of a question, an untrusted text, folding and splitting it
// once: QuestionGroups with the words' synonyms (see Synonyms).
func (a *Analyzer) QuestionWords(text string) []Group {
	toks := a.Tokens(text)
	groups := a.groupsOf(toks, MaxQuestionChecks)
	if a.syn == nil || len(groups) == 0 {
		return groups
	}
	return a.synonymsOf(toks, groups)
}

func (a *Analyzer) synonymsOf(toks []string, groups []Group) []Group {
	// word[i] is the group of token i, -1 for a stop word: Groups keeps one group per word.
	word := make([]int, len(toks))
	n := 0
	for i, t := range toks {
		word[i] = -1
		if !a.IsStop(t) && n < len(groups) {
			word[i] = n
			n++
		}
	}
	add := func(g *Group, e synonyms.Expansion) {
		for _, t := range e.Tokens {
			if len(g.Alts) >= MaxAlts {
				return
			}
			if a.IsStop(t) {
				continue
			}
			st := a.Stem(t)
			if st == g.Term || slices.ContainsFunc(g.Alts, func(a Alt) bool { return a.Term == st }) {
				continue
			}
			g.Alts = append(g.Alts, Alt{Term: st, Rule: e.Rule})
		}
	}
	for _, e := range a.syn.Expand(toks) {
		for i := e.Start; i < e.End && i < len(word); i++ {
			if w := word[i]; w >= 0 {
				add(&groups[w], e)
			}
		}
	}
	// A compound's parts get synonyms only when the compound is not a word of the corpus itself:
	// "Putzrechnung" is asked in its parts' terms, "Fahrzeug" is not "Fahr" and "Zeug".
	for i, t := range toks {
		w := word[i]
		if w < 0 || len(groups[w].Parts) == 0 || (a.split != nil && a.split.Knows(t)) {
			continue
		}
		for _, p := range groups[w].Parts {
			for _, e := range a.syn.Expand([]string{p}) {
				add(&groups[w], e)
			}
		}
	}
	return groups
}
