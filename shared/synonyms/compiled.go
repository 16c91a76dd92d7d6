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
// Keys[i] are the entries AltStart[i] to AltStart[i+1] of AltFrom, AltTo (their folded tokens,
// Tokens[AltFrom:AltTo]), AltTerm (the rule's term), and AltFile and AltLine (the rule's source,
// Files[AltFile] and a line number).
type Flat struct {
	Keys                      []string
	AltStart                  []uint32
	AltFrom, AltTo            []uint32
	AltTerm                   []string
	AltFile, AltLine          []uint32
	Files, Tokens, Vocabulary []string
	Terms                     int
}

// Flat returns the matcher's arrays; FromFlat(m.Flat()) matches as m does.
func (m *Matcher) Flat() Flat {
	f := Flat{Keys: m.keys, AltStart: m.altStart, Files: m.files, Tokens: m.tokens, Vocabulary: m.vocab, Terms: m.terms}
	for _, a := range m.alts {
		f.AltFrom = append(f.AltFrom, a.from)
		f.AltTo = append(f.AltTo, a.to)
		f.AltTerm = append(f.AltTerm, a.term)
		f.AltFile = append(f.AltFile, a.file)
		f.AltLine = append(f.AltLine, a.line)
	}
	return f
}

// ErrFlat is returned by FromFlat for arrays that do not describe a matcher.
var ErrFlat = errors.New("synonym matcher arrays are inconsistent")

// FromFlat restores a matcher from its arrays, after checking that they are consistent.
func FromFlat(f Flat) (*Matcher, error) {
	n := len(f.AltFrom)
	if len(f.AltTo) != n || len(f.AltTerm) != n || len(f.AltFile) != n || len(f.AltLine) != n || len(f.AltStart) != len(f.Keys)+1 ||
		!slices.IsSorted(f.AltStart) || f.AltStart[0] != 0 || int(f.AltStart[len(f.Keys)]) != n ||
		!slices.IsSorted(f.Keys) {
		return nil, ErrFlat
	}
	m := &Matcher{keys: f.Keys, altStart: f.AltStart, files: f.Files, tokens: f.Tokens, vocab: f.Vocabulary, terms: f.Terms,
		alts: make([]alternative, n)}
	for i := range n {
		if f.AltFrom[i] > f.AltTo[i] || int(f.AltTo[i]) > len(f.Tokens) || int(f.AltFile[i]) >= len(f.Files) {
			return nil, ErrFlat
		}
		m.alts[i] = alternative{from: f.AltFrom[i], to: f.AltTo[i], term: f.AltTerm[i], file: f.AltFile[i], line: f.AltLine[i]}
	}
	return m, nil
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
	fileOf := map[string]uint32{}
	for _, e := range entries {
		m.keys = append(m.keys, e.key)
		m.altStart = append(m.altStart, uint32(len(m.alts)))
		for _, a := range e.alts {
			from := uint32(len(m.tokens))
			m.tokens = append(m.tokens, a.tokens...)
			// A rule's source is "<file>:<line>" (Rule.Source): kept as a file and a line.
			name, line := a.source, 0
			if i := strings.LastIndexByte(a.source, ':'); i >= 0 {
				if n, err := strconv.Atoi(a.source[i+1:]); err == nil && n >= 0 {
					name, line = a.source[:i], n
				}
			}
			f, ok := fileOf[name]
			if !ok {
				f = uint32(len(m.files))
				fileOf[name] = f
				m.files = append(m.files, name)
			}
			m.alts = append(m.alts, alternative{from: from, to: uint32(len(m.tokens)), term: a.term, file: f, line: uint32(line)})
		}
	}
	m.altStart = append(m.altStart, uint32(len(m.alts)))
	return m
}
