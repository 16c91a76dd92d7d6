package retrieval

import (
	"slices"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// l0 is the keyword layer: the question's terms matched against the front matter
// (lexical.Lang.MatchFront), as hints and matches, at least the first sections of them; a
// match's best section is chosen only when fusion or the verdict asks for it. Domains are the
// categories with strong L0 evidence among the leading matches: only those become hints, and
// only a single one filters L1. l0 only reads the question. The matches live in sc: they are
// valid until sc is released.
func l0(l *lexical.Lang, q *question, sections int, sc *l0Scratch) (lookup.L0Hints, []lexical.FrontMatch) {
	m := l.MatchFront(q.words, q.terms, q.weights, sections, &sc.front)
	return lookup.L0Hints{MatchedTitles: m.Titles, MatchedKeywords: m.Keywords, Domains: m.Domains, Entities: m.Entities}, m.Matches
}

// l0Scratch is a lookup's pooled memory, kept for the next lookup: the front-matter match's
// (lexical.FrontScratch, whose arrays hold the matches, which the lookup keeps until it has done
// with them, then releases), the array lent for L1's candidates and the one for the blocks' first
// hit reasons.
type l0Scratch struct {
	front lexical.FrontScratch
	// cands is the array lent to the provider for L1's candidates (port.Query.Buffer): 1.5 kB
	// a lookup, the largest of its allocations.
	cands []port.Candidate
	// reasons is the array lent for the blocks' first hit reasons (Service.blocks), which
	// ownReasons replaces before the lookup ends: 300 B a lookup.
	reasons []string
}

var l0Scratches = sync.Pool{New: func() any { return newL0Scratch() }}

func newL0Scratch() *l0Scratch { return &l0Scratch{reasons: make([]string, 0, lentReasons)} }

// lentReasons is how many first hit reasons a lookup's scratch has room for: a block has a few.
const lentReasons = 64

// getL0Scratch returns a scratch for one lookup; release it when done with the matches, the
// candidates and the blocks' first hit reasons.
func getL0Scratch() *l0Scratch { return l0Scratches.Get().(*l0Scratch) }

// release empties the scratch's front-matter match and returns it to the pool. The candidates'
// and reasons' arrays keep this call's, unread, until the next call overwrites them or the
// pool drops the scratch: see question.release.
func (sc *l0Scratch) release() {
	sc.front.Reset()
	if cap(sc.cands) > maxLentCandidates {
		sc.cands = nil
	}
	l0Scratches.Put(sc)
}

// maxLentCandidates is the largest candidates' array a scratch keeps: L1's pool at most.
const maxLentCandidates = maxL1Pool

// lend returns the candidates' array to lend to the provider.
func (sc *l0Scratch) lend() []port.Candidate { return sc.cands[:0] }

// keep keeps the array of the candidates the provider returned when it is larger than the one
// lent (a provider that made its own, or grew it), for the next call.
func (sc *l0Scratch) keep(cands []port.Candidate) {
	if cap(cands) > cap(sc.cands) {
		sc.cands = cands[:0]
	}
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
