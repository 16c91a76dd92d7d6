package synonyms

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Flat is a Matcher's arrays, for a prebuilt index: restoring a matcher from them (FromFlat)
// folds nothing and builds no per-term structure, where Compile folds every term of every rule.
// Keys are the terms, sorted, each its folded tokens joined by a NUL byte; the alternatives of
// Keys[i] are the entries AltStart[i] to AltStart[i+1] of the Alt arrays: their folded tokens
// (TokenIDs[AltFrom:AltTo], positions in Vocabulary), the rule's term as written
// (RuleTerms[AltTerm]), and the rule's source (Files[AltFile], line AltLine). TermCount is the
// number of distinct folded terms with alternatives (Terms). Slots is the hash table of the keys
// that Expand looks terms up in.
type Flat struct {
	Keys                         []string
	AltStart, AltFrom, AltTo     []uint32
	AltTerm, AltFile, AltLine    []uint32
	TokenIDs                     []uint32
	RuleTerms, Files, Vocabulary []string
	Slots                        []uint32
	TermCount                    int
}

// Flat returns the matcher's arrays; FromFlat(m.Flat()) matches as m does.
func (m *Matcher) Flat() Flat {
	ids := make([]uint32, len(m.tokens))
	for i, t := range m.tokens {
		at, _ := slices.BinarySearch(m.vocab, t)
		ids[i] = uint32(at)
	}
	return Flat{Keys: m.keys, AltStart: m.altStart, AltFrom: m.altFrom, AltTo: m.altTo, AltTerm: m.altTerm,
		AltFile: m.altFile, AltLine: m.altLine, TokenIDs: ids, RuleTerms: m.ruleTerms, Files: m.files,
		Vocabulary: m.vocab, Slots: m.slots, TermCount: m.terms}
}

// ErrFlat is returned by FromFlat for arrays that do not describe a matcher.
var ErrFlat = errors.New("synonym matcher arrays are inconsistent")

// FromFlat restores a matcher from its arrays, after checking that they are consistent.
func FromFlat(f Flat) (*Matcher, error) {
	n := len(f.AltFrom)
	below := func(xs []uint32, limit int) bool {
		for _, x := range xs {
			if int(x) >= limit {
				return false
			}
		}
		return true
	}
	if len(f.AltTo) != n || len(f.AltTerm) != n || len(f.AltFile) != n || len(f.AltLine) != n ||
		len(f.AltStart) != len(f.Keys)+1 || !slices.IsSorted(f.AltStart) || f.AltStart[0] != 0 ||
		int(f.AltStart[len(f.Keys)]) != n || !slices.IsSorted(f.Keys) ||
		!below(f.AltTerm, len(f.RuleTerms)) || !below(f.AltFile, len(f.Files)) || !below(f.TokenIDs, len(f.Vocabulary)) ||
		!slices.Equal(f.Slots, indexKeys(f.Keys)) {
		return nil, ErrFlat
	}
	for i := range n {
		if f.AltFrom[i] > f.AltTo[i] || int(f.AltTo[i]) > len(f.TokenIDs) {
			return nil, ErrFlat
		}
	}
	return FromCheckedFlat(f), nil
}

// FromCheckedFlat restores a matcher from arrays known to be consistent, without checking them:
// arrays FromFlat accepted before from the same bytes (the embedded prebuilt index's, see
// lexical.LoadOptions.Compiled).
func FromCheckedFlat(f Flat) *Matcher {
	tokens := make([]string, len(f.TokenIDs))
	for i, id := range f.TokenIDs {
		tokens[i] = f.Vocabulary[id]
	}
	return &Matcher{keys: f.Keys, altStart: f.AltStart, altFrom: f.AltFrom, altTo: f.AltTo, altTerm: f.AltTerm,
		altFile: f.AltFile, altLine: f.AltLine, tokens: tokens, ruleTerms: f.RuleTerms, files: f.Files,
		vocab: f.Vocabulary, slots: f.Slots, terms: f.TermCount}
}

// flatten lays out a builder's trie as a matcher: terms sorted by key, alternatives in rule
// order.
func (b *builder) flatten(vocab []string) *Matcher {
	type entry struct {
		key  string
		alts []built
	}
	var entries []entry
	var walk func(key string, n *node)
	walk = func(key string, n *node) {
		if len(n.alts) > 0 {
			entries = append(entries, entry{key, n.alts})
		}
		for tok, child := range n.next {
			walk(key+keySep+tok, child)
		}
	}
	for tok, n := range b.root {
		walk(tok, n)
	}
	slices.SortFunc(entries, func(x, y entry) int { return strings.Compare(x.key, y.key) })
	m := &Matcher{vocab: vocab, terms: b.terms, keys: make([]string, 0, len(entries)), altStart: make([]uint32, 0, len(entries)+1)}
	fileOf, termOf := map[string]uint32{}, map[string]uint32{}
	intern := func(table *[]string, of map[string]uint32, s string) uint32 {
		id, ok := of[s]
		if !ok {
			id = uint32(len(*table))
			of[s] = id
			*table = append(*table, s)
		}
		return id
	}
	for _, e := range entries {
		m.keys = append(m.keys, e.key)
		m.altStart = append(m.altStart, uint32(len(m.altFrom)))
		for _, a := range e.alts {
			m.altFrom = append(m.altFrom, uint32(len(m.tokens)))
			m.tokens = append(m.tokens, a.tokens...)
			m.altTo = append(m.altTo, uint32(len(m.tokens)))
			// A rule's source is "<file>:<line>" (Rule.Source): kept as a file and a line.
			name, line := a.source, 0
			if i := strings.LastIndexByte(a.source, ':'); i >= 0 {
				if n, err := strconv.Atoi(a.source[i+1:]); err == nil && n >= 0 {
					name, line = a.source[:i], n
				}
			}
			m.altFile = append(m.altFile, intern(&m.files, fileOf, name))
			m.altLine = append(m.altLine, uint32(line))
			m.altTerm = append(m.altTerm, intern(&m.ruleTerms, termOf, a.term))
		}
	}
	m.altStart = append(m.altStart, uint32(len(m.altFrom)))
	m.slots = indexKeys(m.keys)
	return m
}
