package retrieval

import (
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"slices"
)

// l0 is the keyword layer: the question's terms matched against the front matter
// (lexical.Lang.MatchFront), as hints and matches. The best section is chosen for the first
// sections matches only: those are the ones fusion may use. Domains are the categories with
// strong L0 evidence among the leading matches: only those become hints, and only a single one
// filters L1. l0 only reads the question. The matches live in sc: they are valid until sc is
// released.
func l0(l *lexical.Lang, q *question, sections int, sc *l0Scratch) (lookup.L0Hints, []lexical.FrontMatch) {
	m := l.MatchFront(q.words, q.terms, q.weights, sections, &sc.front)
	return lookup.L0Hints{MatchedTitles: m.Titles, MatchedKeywords: m.Keywords, Domains: m.Domains, Entities: m.Entities}, m.Matches
}

// l0Scratch is L0's memory, kept for the next call: the front-matter match's
// (lexical.FrontScratch, whose arrays hold the matches, which the caller keeps until it has done
// with them, then releases).
type l0Scratch struct {
	front lexical.FrontScratch
}

var l0Scratches = sync.Pool{New: func() any { return newL0Scratch() }}

func newL0Scratch() *l0Scratch { return &l0Scratch{} }

// getL0Scratch returns a scratch for one l0 call; release it when done with the matches.
func getL0Scratch() *l0Scratch { return l0Scratches.Get().(*l0Scratch) }

// release empties the scratch and returns it to the pool.
func (sc *l0Scratch) release() {
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
