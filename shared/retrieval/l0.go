package retrieval

import (
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
	"slices"
)

// l0 is the keyword layer: the question's terms matched against the front matter
// (lexical.Lang.MatchFront), as hints and matches. The best section is chosen for the first
// sections matches only: those are the ones fusion may use. Domains are the categories with
// strong L0 evidence among the leading matches: only those become hints, and only a single one
// filters L1. strs and weights are the question's terms and their weights (see queryTerms); l0
// only reads them. The matches live in sc: they are valid until sc is released.
func l0(l *lexical.Lang, words []textproc.Group, strs []string, weights map[string]float64, sections int, sc *l0Scratch) (lookup.L0Hints, []lexical.FrontMatch) {
	m := l.MatchFront(words, strs, weights, sections, &sc.front)
	return lookup.L0Hints{MatchedTitles: m.Titles, MatchedKeywords: m.Keywords, Domains: m.Domains, Entities: m.Entities}, m.Matches
}

// matchReasons appends a front-matter match's hit reasons to list, each once, in the order
// keywords and entities, title, category, partial phrase. The reasons of phrases come from
// texts, made there the first time.
func matchReasons(m *lexical.FrontMatch, l *lexical.Lang, texts *langTexts, list []string) []string {
	for _, p := range m.Named {
		if p.Bridged {
			list = appendNew(list, texts.synonymReason(l, p.Phrase, p.Rule))
		} else {
			list = appendNew(list, texts.reason(l, p.Phrase))
		}
	}
	if m.Title {
		list = appendNew(list, "l0:title")
	}
	if m.Category {
		list = appendNew(list, texts.reason(l, m.CategoryPhrase))
	}
	if m.Partial {
		list = appendNew(list, "l0:partial-phrase")
	}
	return list
}

// matchReasonCount is at most how many hit reasons the match has.
func matchReasonCount(m *lexical.FrontMatch) int {
	n := len(m.Named)
	if m.Title {
		n++
	}
	if m.Category {
		n++
	}
	if m.Partial {
		n++
	}
	return n
}

// l0Scratch is a lookup's memory, kept for the next call: the front-matter match's
// (lexical.FrontScratch, whose arrays hold the matches, which the caller keeps until it has done
// with them, then releases), and the question's terms.
type l0Scratch struct {
	front lexical.FrontScratch
	// terms and termWeights hold the question's index terms and their weights (queryTerms),
	// which the lookup lends to l0 and the provider.
	terms       []string
	termWeights map[string]float64
	// question holds the informative words resolved for the blocks' lexical support.
	question judge.Question
}

var l0Scratches = sync.Pool{New: func() any { return newL0Scratch() }}

func newL0Scratch() *l0Scratch { return &l0Scratch{termWeights: map[string]float64{}} }

// getL0Scratch returns a scratch for one l0 call; release it when done with the matches.
func getL0Scratch() *l0Scratch { return l0Scratches.Get().(*l0Scratch) }

// release empties the scratch and returns it to the pool. Maps that a long question made large
// are dropped rather than kept, since clearing one costs its size on every later call.
func (sc *l0Scratch) release() {
	const keep = 64
	if sc.question.Size() > 4*keep {
		sc.question = judge.Question{}
	}
	if cap(sc.terms) > keep || len(sc.termWeights) > keep {
		sc.terms, sc.termWeights = nil, map[string]float64{}
	} else {
		clear(sc.terms[:cap(sc.terms)]) // the pool keeps no strings of the question
		clear(sc.termWeights)
	}
	sc.front.Reset()
	l0Scratches.Put(sc)
}

func appendNew(list []string, s string) []string {
	if s == "" {
		return list
	}
	return appendUnique(list, s)
}

func appendUnique[T comparable](list []T, x T) []T {
	if slices.Contains(list, x) {
		return list
	}
	return append(list, x)
}
