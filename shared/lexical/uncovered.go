package lexical

import (
	"slices"
	"strings"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Uncovered is a topic the procedures do not cover that a question names (see
// knowledge.Corpus.Uncovered).
type Uncovered struct {
	// Topic is the topic's name, e.g. "pricing"; Term the question's term as the rule writes it,
	// e.g. "per minute"; Source the rule's "<file>:<line>".
	Topic, Term, Source string
}

// uncoveredRules compiles the language's uncovered-topic rules on first use: they are read only
// when a lookup judges lexical evidence, never at a cold start.
func uncoveredRules(set func() *synonyms.Set, a *textproc.Analyzer) func() *synonyms.Matcher {
	return sync.OnceValue(func() *synonyms.Matcher {
		return set().CompileStemmed(a.Tokens, a.Stem)
	})
}

// setUncovered gives the language its corpus's uncovered-topic rules.
func (l *Lang) setUncovered(c *knowledge.Corpus) {
	l.uncovered = uncoveredRules(func() *synonyms.Set { return c.Uncovered(l.Language) }, l.text)
}

// UncoveredTopic returns the first topic of the uncovered-topic rules that the question names
// and that the document doc (an index into Docs) does not use: the term's words, in order (by
// their stems), are in none of its sections, its title, keywords or entities. A procedure that
// uses the term may well answer the question; one that does not answers a question next to it.
func (l *Lang) UncoveredTopic(question string, doc int) (Uncovered, bool) {
	if l.uncovered == nil {
		return Uncovered{}, false
	}
	m := l.uncovered()
	if m.Terms() == 0 {
		return Uncovered{}, false
	}
	toks := l.text.Tokens(question)
	stems := make([]string, len(toks))
	for i, t := range toks {
		stems[i] = l.text.Stem(t)
	}
	var used [][]string // the document's texts as stems, made when a term first needs them
	for _, e := range m.Expand(toks, stems, nil) {
		if used == nil {
			used = l.docStems(doc)
		}
		if !slices.ContainsFunc(used, func(text []string) bool { return holds(text, stems[e.Start:e.End]) }) {
			return Uncovered{Topic: strings.Join(e.Tokens, " "), Term: e.Rule, Source: e.Source}, true
		}
	}
	return Uncovered{}, false
}

// docStems returns the stems of every text of a document: its sections, title, keywords and
// entities, each text apart so that no term is found across two of them.
func (l *Lang) docStems(doc int) [][]string {
	d := l.Docs[doc]
	texts := []string{d.Title}
	texts = append(texts, d.Keywords...)
	texts = append(texts, d.Entities...)
	for _, s := range d.Sections {
		texts = append(texts, s.Heading, s.Content)
	}
	out := make([][]string, len(texts))
	for i, t := range texts {
		toks := l.text.Tokens(t)
		for j, tok := range toks {
			toks[j] = l.text.Stem(tok)
		}
		out[i] = toks
	}
	return out
}

// holds reports whether text holds the sequence seq.
func holds(text, seq []string) bool {
	for i := 0; i+len(seq) <= len(text); i++ {
		if slices.Equal(text[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}
