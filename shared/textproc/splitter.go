package textproc

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
)

// Splitter splits German compounds into parts that occur on their own in a known vocabulary,
// so that "Scheibe" finds "Windschutzscheibe" and "Akkustand" finds "Akku". It is built once per
// corpus and only read afterwards.
type Splitter struct {
	a      *Analyzer
	tokens map[string]struct{}
	stems  map[string]struct{}
	// memo keeps the splits made, up to maxSplitMemo tokens.
	mu   sync.RWMutex
	memo map[string]splitMemo
}

// splitMemo is a token's split and the checks it cost (see splitBudget).
type splitMemo struct {
	parts    []string
	complete bool
	cost     int
}

// maxSplitMemo bounds the splits a Splitter keeps (of the order of 100 bytes each).
const maxSplitMemo = 1 << 14

// minPart is the shortest compound part, in bytes of folded text; shorter parts match too much.
const minPart = 4

// MaxSplitToken is the longest token, in bytes of folded text, that is split. A split looks at
// parts of the token at up to three depths, so its work grows fast with the token's length;
// German compounds rarely exceed 40 bytes (the longest word of the procedures has 30), and
// longer tokens are kept whole.
const MaxSplitToken = 40

// MaxSplitChecks bounds the parts one split looks up that are not vocabulary tokens as they
// stand (each costs a stem). A split that runs out gives up: the token is kept whole. The
// costliest word of the procedures and evaluation sets needs 66.
const MaxSplitChecks = 256

// NewSplitter builds a splitter from the words of texts, folded by a.
func NewSplitter(a *Analyzer, texts ...string) *Splitter {
	s := &Splitter{a: a, tokens: map[string]struct{}{}, stems: map[string]struct{}{}}
	for _, t := range texts {
		for _, tok := range a.Tokens(t) {
			if len(tok) < minPart || a.IsStop(tok) {
				continue
			}
			s.tokens[tok] = struct{}{}
			s.stems[a.Stem(tok)] = struct{}{}
		}
	}
	return s
}

// Knows reports whether a folded token is a word of the splitter's vocabulary as it stands, not
// only as a compound of its words.
func (s *Splitter) Knows(tok string) bool {
	if _, ok := s.tokens[tok]; ok {
		return true
	}
	if len(tok) > MaxStemToken {
		return false
	}
	_, ok := s.stems[s.a.Stem(tok)]
	return ok
}

// Split returns the parts of a folded compound, or nil when it has none: the longest known head
// whose tail is known or itself a compound of known words (complete); failing that, a known head
// or tail of at least partMin bytes on its own (not complete), so that "Bereitschaftsdienst"
// still yields "bereitschaft". A linking "s" or "n" after the head is allowed. Tokens longer
// than MaxSplitToken, and tokens whose split needs more than MaxSplitChecks stems, have no parts.
func (s *Splitter) Split(tok string) (parts []string, complete bool) {
	checks := MaxSplitChecks
	parts, complete = s.splitBudget(tok, &checks)
	return slices.Clone(parts), complete
}

// splitBudget is Split drawing its stems from *checks, which it decrements; at zero the split
// gives up. Its result is always the one an unbounded split gives, or none.
// A split that did not run out is kept with its cost, and a later split of the token that may
// spend as much takes it from there at that cost: the same parts, the same checks drawn. The
// parts returned are shared: do not modify them.
func (s *Splitter) splitBudget(tok string, checks *int) (parts []string, complete bool) {
	if len(tok) < 2*minPart || len(tok) > MaxSplitToken {
		return nil, false
	}
	s.mu.RLock()
	m, ok := s.memo[tok]
	s.mu.RUnlock()
	if ok && m.cost <= *checks {
		*checks -= m.cost
		return m.parts, m.complete
	}
	// The run draws on its own count, written back at the end, so that the caller's stays on its
	// stack.
	r := &splitRun{s: s, tok: tok, checks: *checks, known: make([]int8, (len(tok)+1)*(len(tok)+1))}
	parts, complete = r.run()
	if !r.out {
		s.mu.Lock()
		if len(s.memo) < maxSplitMemo {
			if s.memo == nil {
				s.memo = map[string]splitMemo{}
			}
			// The token is a piece of the text it came from: the memo keeps a copy of its own, so
			// that it never holds a whole question.
			own := strings.Clone(tok)
			kept := make([]string, len(parts))
			for i, p := range parts {
				start := strings.Index(tok, p)
				kept[i] = own[start : start+len(p)]
			}
			s.memo[own] = splitMemo{parts: kept, complete: complete, cost: *checks - r.checks}
		}
		s.mu.Unlock()
	}
	*checks = r.checks
	return parts, complete
}

// run splits the run's token (see Split).
func (r *splitRun) run() (parts []string, complete bool) {
	tok := r.tok
	if parts := r.split(0, 3); parts != nil {
		return parts, true
	}
	for i := len(tok) - minPart; i >= partMin && !r.out; i-- {
		if r.isKnown(0, i) {
			return []string{tok[:i]}, false
		}
	}
	for i := minPart; i <= len(tok)-partMin && !r.out; i++ {
		if r.isKnown(i, len(tok)) {
			return []string{tok[i:]}, false
		}
	}
	return nil, false
}

// partMin is the shortest part kept when the rest of the compound is unknown.
const partMin = 5

// splitRun is one split of one token: what it found out about the token's parts, so that no part
// is stemmed twice and no tail is searched twice at the same depth.
type splitRun struct {
	s      *Splitter
	tok    string
	known  []int8 // tok[i:j] at i*(len(tok)+1)+j: 0 not yet looked up, 1 unknown, 2 known
	failed [4][]bool
	checks int
	out    bool // the budget ran out: every later lookup says unknown
}

func (r *splitRun) isKnown(i, j int) bool {
	if j-i < minPart || r.out {
		return false
	}
	k := i*(len(r.tok)+1) + j
	if v := r.known[k]; v != 0 {
		return v == 2
	}
	part := r.tok[i:j]
	_, ok := r.s.tokens[part]
	if !ok {
		if r.checks <= 0 {
			r.out = true
			return false
		}
		r.checks--
		_, ok = r.s.stems[r.s.a.Stem(part)]
	}
	r.known[k] = 1
	if ok {
		r.known[k] = 2
	}
	return ok
}

// split splits tok[start:] into at most depth+1 known parts.
func (r *splitRun) split(start, depth int) []string {
	if depth == 0 || r.out {
		return nil
	}
	if f := r.failed[depth]; f != nil && f[start] {
		return nil
	}
	n := len(r.tok)
	for i := n - minPart; i >= start+minPart; i-- {
		if !r.isKnown(start, i) {
			if r.out {
				return nil
			}
			continue
		}
		for _, skip := range [...]int{0, 1} {
			if skip == 1 && r.tok[i] != 's' && r.tok[i] != 'n' {
				continue
			}
			if r.isKnown(i+skip, n) {
				return []string{r.tok[start:i], r.tok[i+skip:]}
			}
			if rest := r.split(i+skip, depth-1); rest != nil {
				return append([]string{r.tok[start:i]}, rest...)
			}
			if r.out {
				return nil
			}
		}
	}
	if r.failed[depth] == nil {
		r.failed[depth] = make([]bool, n+1)
	}
	r.failed[depth][start] = true
	return nil
}

// Words returns the splitter's vocabulary, sorted: the folded tokens and their stems, for a
// prebuilt index (see RestoreSplitter).
func (s *Splitter) Words() (tokens, stems []string) {
	return slices.Sorted(maps.Keys(s.tokens)), slices.Sorted(maps.Keys(s.stems))
}

// RestoreSplitter rebuilds a splitter from its Words, without analysing any text.
func RestoreSplitter(a *Analyzer, tokens, stems []string) *Splitter {
	s := &Splitter{a: a, tokens: make(map[string]struct{}, len(tokens)), stems: make(map[string]struct{}, len(stems))}
	for _, t := range tokens {
		s.tokens[t] = struct{}{}
	}
	for _, t := range stems {
		s.stems[t] = struct{}{}
	}
	return s
}

// Splitter returns the analyzer's compound splitter, or nil.
func (a *Analyzer) Splitter() *Splitter { return a.split }

// SynonymMatcher returns the matcher of the analyzer's synonyms, or nil.
func (a *Analyzer) SynonymMatcher() *synonyms.Matcher { return a.syn }
